package io.dlion.cli.aeron;

import java.io.IOException;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Rejoin without a shared directory: {@code ./dlion server} and three {@code ./dlion worker} processes over UDP loopback,
 * with a job secret and no {@code --sync-dir}. Worker 2 is killed (SIGKILL) while the job trains and started again with
 * {@code --rejoin}: its donor's state comes over Aeron, relayed by the server, and all three end with the same
 * {@code params-sha256}.
 */
class NetworkRejoinTest {
    private static final Pattern ROUNDS = Pattern.compile("^rounds=(\\d+) ");
    private static final Pattern RELAYED = Pattern.compile("handOverFrames=(\\d+) handOverBytes=(\\d+) handOverRejected=(\\d+)");
    private static final int WORKERS = 3;
    private final List<ChildProcess> children = new ArrayList<>();

    @TempDir
    Path dir;

    @AfterEach
    void tearDown() throws InterruptedException {
        ChildProcess.killLiving(children);
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void shouldRejoinAKilledWorkerOverTheNetworkBitIdentical() throws Exception {
        final int votePort = TestPorts.freeUdpPort();
        final Path secret = Frames.writeSecret(dir.resolve("secret"));
        final ChildProcess server = start("server", List.of("server", "--job", "5", "--workers", "" + WORKERS, "--params", "203530",
            "--udp", "127.0.0.1:" + votePort + ":" + (votePort + 1), "--secret-file", secret.toString(), "--round-timeout-ms", "20000",
            "--status-interval", "1"));
        final ChildProcess[] workers = new ChildProcess[WORKERS];
        for (int i = 0; i < WORKERS; i++) {
            workers[i] = worker(i, votePort, secret, false);
        }
        final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (rounds(server) < 60) {
            assertTrue(System.nanoTime() < deadline && workers[2].isAlive(), "the job reached round 60: " + server.lines());
            Thread.sleep(50);
        }
        workers[2].kill();
        workers[2] = worker(2, votePort, secret, true);
        final List<String> hashes = new ArrayList<>();
        for (final ChildProcess w : workers) {
            hashes.add(w.awaitParamsHash(420));
        }
        assertNotNull(workers[2].lastLine(l -> l.contains("took worker")), "worker 2 rejoined: " + workers[2].lines());
        assertNotNull(workers[0].lastLine(l -> l.contains("handed worker 2") && l.contains("through the server")),
            "worker 0 was the donor and sent over the network: " + workers[0].lines());
        assertEquals(1, hashes.stream().distinct().count(), "all workers end bit-identical: " + hashes);
        final String relayed = server.lastLine(l -> RELAYED.matcher(l).find());
        assertNotNull(relayed, "the server relayed the hand-over: " + server.lines());
        final Matcher r = RELAYED.matcher(relayed);
        assertTrue(r.find());
        assertTrue(Long.parseLong(r.group(2)) > 800_000, "a whole checkpoint (parameters and momentum) was relayed: " + relayed);
        assertEquals("0", r.group(3), "nothing rejected: " + relayed);
        server.stop();
    }

    private static long rounds(final ChildProcess server) {
        final String line = server.lastLine(l -> ROUNDS.matcher(l).find());
        if (line == null) {
            return 0;
        }
        final Matcher m = ROUNDS.matcher(line);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    private ChildProcess worker(final int id, final int votePort, final Path secret, final boolean rejoin) throws IOException {
        final List<String> args = new ArrayList<>(List.of("worker", "--server", "127.0.0.1", "--vote-port", "" + votePort, "--local-host",
            "127.0.0.1", "--job", "5", "--worker-id", "" + id, "--workers", "" + WORKERS, "--secret-file", secret.toString(),
            "--run-id", "network-rejoin-test", "--epochs", "2", "--batch", "90", "--train-limit", "9000", "--test-limit", "500",
            "--await-timeout-s", "120", "--out", dir.resolve("worker-" + id + (rejoin ? "-rejoined" : "")).toString()));
        if (rejoin) {
            args.add("--rejoin");
        }
        return start("worker-" + id + (rejoin ? "-rejoined" : ""), args);
    }

    private ChildProcess start(final String name, final List<String> args) throws IOException {
        final ChildProcess child = ChildProcess.start(name, "io.dlion.cli.DLionCli", args, "1g", dir.resolve(name + ".log"));
        children.add(child);
        return child;
    }
}
