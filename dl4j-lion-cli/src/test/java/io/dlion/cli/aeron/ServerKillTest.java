package io.dlion.cli.aeron;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.dlion.cli.DLionCli;
import io.dlion.testkit.ChildProcess;
import io.dlion.testkit.Frames;
import io.dlion.testkit.NaiveVote;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.testkit.TestPorts;
import io.dlion.vote.VoteRule;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Server and two workers in separate processes over UDP loopback; the server process is killed with SIGKILL after
 * round 4 and a new one started on the same ports a second later. The workers wait inside {@code await} (bounded by
 * their round timeout), say HELLO to the new server, send the round again, and finish every round with the naive vote.
 */
@Tag("slow")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ServerKillTest {
    private static final int JOB = 4545;
    private static final long SEED = 29;
    private static final int N = 2;
    private static final long PARAMS = 200_003;
    private static final int ROUNDS = 15;

    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void tearDown() {
        for (final Process process : processes) {
            process.destroyForcibly();
        }
    }

    @Test
    void shouldResumeTrainingOnARestartedServerProcess() throws Exception {
        final int votePort = TestPorts.freeUdpPort();
        final int controlPort = TestPorts.freeUdpPort();
        final File secret = File.createTempFile("dlion-secret", ".bin");
        secret.deleteOnExit();
        Frames.writeSecret(secret.toPath());
        final List<String> udp = List.of("--udp", "127.0.0.1:" + votePort + ":" + controlPort, "--secret-file", secret.getPath());

        final Process first = start("server", udp, "--job", Integer.toString(JOB), "--workers", Integer.toString(N),
            "--params", Long.toString(PARAMS), "--status-interval", "0");
        final CountDownLatch round4 = new CountDownLatch(1);
        final List<CompletableFuture<List<String>>> outputs = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            final Process worker = start("vote-worker", udp, "--job", Integer.toString(JOB), "--worker-id", Integer.toString(i),
                "--workers", Integer.toString(N), "--params", Long.toString(PARAMS), "--rounds", Integer.toString(ROUNDS),
                "--seed", Long.toString(SEED), "--round-pause-ms", "100", "--timeout-ms", "30000");
            outputs.add(CompletableFuture.supplyAsync(() -> lines(worker, round4)));
        }
        assertTrue(round4.await(60, TimeUnit.SECONDS), "workers reach round 4");
        first.destroyForcibly().waitFor();
        final long killedNs = System.nanoTime();
        Thread.sleep(1_000);
        start("server", udp, "--job", Integer.toString(JOB), "--workers", Integer.toString(N), "--params", Long.toString(PARAMS),
            "--status-interval", "0");

        long slowestMicros = 0;
        for (int i = 0; i < N; i++) {
            final List<String> out = outputs.get(i).get(120, TimeUnit.SECONDS);
            final List<String[]> rounds = new ArrayList<>();
            for (final String line : out) {
                if (line.startsWith("round ")) {
                    rounds.add(line.split(" "));
                }
            }
            assertEquals(ROUNDS, rounds.size(), String.join("\n", out));
            for (int r = 0; r < ROUNDS; r++) {
                final long[][] votes = {SyntheticVotes.vote(SEED, r, 0, PARAMS), SyntheticVotes.vote(SEED, r, 1, PARAMS)};
                assertEquals(Long.toHexString(SyntheticVotes.digest(NaiveVote.reference(r, votes, PARAMS, VoteRule.MAJORITY))),
                    rounds.get(r)[5], "worker " + i + " round " + r);
                slowestMicros = Math.max(slowestMicros, Long.parseLong(rounds.get(r)[7]));
            }
        }
        System.out.printf("ServerKillTest: server SIGKILLed after round 4, restarted 1000 ms later; slowest round %d ms; workers"
            + " finished %d ms after the kill; all %d rounds equal the naive vote on both workers%n", slowestMicros / 1000,
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedNs), ROUNDS);
    }

    private Process start(final String subcommand, final List<String> common, final String... args) throws IOException {
        final List<String> command = ChildProcess.java();
        command.addAll(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1",
            "-cp", System.getProperty("java.class.path"), DLionCli.class.getName(), subcommand));
        command.addAll(List.of(args));
        command.addAll(common);
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        processes.add(process);
        return process;
    }

    private static List<String> lines(final Process process, final CountDownLatch round4) {
        final List<String> lines = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                lines.add(line);
                if (line.startsWith("round 4 ")) {
                    round4.countDown();
                }
            }
        } catch (final IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return lines;
    }
}
