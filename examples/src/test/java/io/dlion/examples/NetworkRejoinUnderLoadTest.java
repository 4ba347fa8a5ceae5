package io.dlion.examples;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.dlion.testkit.ChildProcess;
import io.dlion.testkit.Frames;
import io.dlion.testkit.TestPorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@link NetworkRejoin} example as a user runs it, on cores kept busy by two busy-loop processes: {@code ./dlion
 * server} and three worker processes over UDP loopback, checkpoints every 25 rounds, a worker killed with SIGKILL and
 * started again with {@code --rejoin}; every worker must end bit-identical, every time.
 * <ul>
 *   <li>{@code dlion.rejoin.runs} jobs (default 3), worker 2 killed after round 75 in each;</li>
 *   <li>one job ({@code dlion.rejoin.epochs} epochs of 100 rounds, default 6) in which worker 2 is killed and rejoins
 *       {@code dlion.rejoin.kills} times (default 20), each time 10 rounds after its last rejoin;</li>
 *   <li>one job in which workers 1 and 2 are killed together and rejoin at once (a quorum of 1 meanwhile).</li>
 * </ul>
 * The server's vote port is {@code dlion.test.port} (and the next one), or a free one.
 */
@Tag("slow")
class NetworkRejoinUnderLoadTest {
    private static final Pattern ROUNDS = Pattern.compile("^rounds=(\\d+) ");
    private static final int WORKERS = 3;
    private static final long PARAMS = 784L * 300 + 300 + 300 * 100 + 100 + 100 * 10 + 10;
    private final List<ChildProcess> children = new ArrayList<>();
    private final List<Process> busy = new ArrayList<>();

    @TempDir
    Path dir;

    @AfterEach
    void tearDown() throws InterruptedException {
        ChildProcess.killLiving(children);
        for (final Process p : busy) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.MINUTES)
    void shouldEndBitIdenticalAfterAKillAndRejoinInEveryRun() throws Exception {
        busyLoops(2);
        final int runs = Integer.getInteger("dlion.rejoin.runs", 3);
        final List<String> results = new ArrayList<>();
        for (int run = 1; run <= runs; run++) {
            final Job job = new Job(dir.resolve("run-" + run), 2, 6000, 0);
            job.awaitRound(75, 2);
            job.restart(2);
            final List<String> hashes = job.hashes();
            results.add("run " + run + ": " + job.workers[2].lastLine(l -> l.contains("took worker")) + "; " + hashes);
            assertEquals(1, hashes.stream().distinct().count(), "run " + run + ": all workers end bit-identical: " + results);
            job.server.stop();
        }
        System.out.println("NetworkRejoinUnderLoadTest " + results);
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.MINUTES)
    void shouldRejoinAKilledWorkerTwentyTimesInOneJob() throws Exception {
        busyLoops(2);
        final int kills = Integer.getInteger("dlion.rejoin.kills", 20);
        final Job job = new Job(dir.resolve("kills"), Integer.getInteger("dlion.rejoin.epochs", 6), 6000, 0);
        long round = 0;
        for (int k = 1; k <= kills; k++) {
            round = job.awaitRound(job.rounds() + 10, 2);
            job.restart(2);
            job.awaitLine(2, l -> l.contains("took worker"), "rejoin " + k + " of " + kills + " (after round " + round + ")");
            System.out.println("NetworkRejoinUnderLoadTest rejoin " + k + " of " + kills + " done after round " + round);
        }
        final List<String> hashes = job.hashes();
        assertEquals(1, hashes.stream().distinct().count(), kills + " rejoins, then all workers end bit-identical: " + hashes);
        job.server.stop();
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES)
    void shouldRejoinTwoWorkersKilledTogether() throws Exception {
        busyLoops(2);
        // worker 0 alone is below the default quorum (2 of 3) until the two are back: let it go on alone meanwhile
        final Job job = new Job(dir.resolve("two"), 2, 6000, 1);
        job.awaitRound(75, 1, 2);
        job.workers[1].kill();
        job.workers[2].kill();
        job.workers[1] = job.worker(1, true);
        job.workers[2] = job.worker(2, true);
        final List<String> hashes = job.hashes();
        assertNotNull(job.workers[1].lastLine(l -> l.contains("took worker")), job.workers[1].lines().toString());
        assertEquals(1, hashes.stream().distinct().count(), "both rejoined, all end bit-identical: " + hashes);
        job.server.stop();
    }

    private void busyLoops(final int n) throws IOException {
        for (int i = 0; i < n; i++) {
            busy.add(new ProcessBuilder("sh", "-c", "while :; do :; done").start());
        }
    }

    /** One job: {@code ./dlion server} and three {@link NetworkRejoin} worker processes. */
    private final class Job {
        final Path home;
        final int votePort;
        final int epochs;
        final int trainLimit;
        final ChildProcess server;
        final ChildProcess[] workers = new ChildProcess[WORKERS];
        int starts;

        Job(final Path home, final int epochs, final int trainLimit, final int minVoters) throws IOException {
            this.home = Files.createDirectories(home);
            this.epochs = epochs;
            this.trainLimit = trainLimit;
            this.votePort = Integer.getInteger("dlion.test.port", TestPorts.freeUdpPort());
            Frames.writeSecret(home.resolve("job.secret"));
            Files.createDirectories(home.resolve("ckpt"));
            server = start("server", "io.dlion.cli.DLionCli", List.of("server", "--job", "1", "--workers", "" + WORKERS, "--params",
                "" + PARAMS, "--udp", "127.0.0.1:" + votePort + ":" + (votePort + 1), "--round-timeout-ms", "5000", "--status-interval", "1",
                "--min-voters", "" + minVoters, "--secret-file", home.resolve("job.secret").toString()));
            for (int i = 0; i < WORKERS; i++) {
                workers[i] = worker(i, false);
            }
        }

        ChildProcess worker(final int id, final boolean rejoin) throws IOException {
            final List<String> args = new ArrayList<>(List.of("127.0.0.1", "127.0.0.1", "" + votePort, "" + id, "" + WORKERS, "" + epochs,
                "" + trainLimit, home.resolve("ckpt").toString(), home.resolve("job.secret").toString(), "network-rejoin-under-load"));
            if (rejoin) {
                args.add("--rejoin");
            }
            return start("worker-" + id + "-" + starts++, NetworkRejoin.class.getName(), args);
        }

        void restart(final int id) throws Exception {
            workers[id].kill();
            workers[id] = worker(id, true);
        }

        long rounds() {
            final String line = server.lastLine(l -> ROUNDS.matcher(l).find());
            if (line == null) {
                return 0;
            }
            final Matcher m = ROUNDS.matcher(line);
            return m.find() ? Long.parseLong(m.group(1)) : 0;
        }

        long awaitRound(final long round, final int... alive) throws InterruptedException {
            final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
            long now;
            while ((now = rounds()) <= round) {
                assertTrue(System.nanoTime() < deadline, "the job passed round " + round + ": " + server.lines());
                for (final int w : alive) {
                    assertTrue(workers[w].isAlive(), workers[w].name() + " is alive: " + workers[w].lines());
                }
                Thread.sleep(20);
            }
            return now;
        }

        void awaitLine(final int id, final java.util.function.Predicate<String> match, final String what) throws InterruptedException {
            final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
            while (workers[id].lastLine(match) == null) {
                assertTrue(System.nanoTime() < deadline && workers[id].isAlive(), what + ": " + workers[id].lines());
                Thread.sleep(20);
            }
        }

        List<String> hashes() throws InterruptedException {
            final List<String> hashes = new ArrayList<>();
            for (final ChildProcess w : workers) {
                hashes.add(w.awaitParamsHash(1800));
            }
            return hashes;
        }

        private ChildProcess start(final String name, final String mainClass, final List<String> args) throws IOException {
            final ChildProcess child = ChildProcess.start(name, mainClass, args, "1g", home.resolve(name + ".log"));
            children.add(child);
            return child;
        }
    }
}
