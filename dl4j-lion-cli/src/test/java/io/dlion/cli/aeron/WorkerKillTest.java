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
import java.util.concurrent.atomic.AtomicReference;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Channels;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.cli.DLionCli;
import io.dlion.testkit.ChildProcess;
import io.dlion.testkit.Frames;
import io.dlion.testkit.NaiveVote;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.testkit.TestPorts;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three worker processes over UDP loopback; worker 2 is killed with SIGKILL after round 4. The server drops it at the
 * next round deadline and workers 0 and 1 finish every round with identical results, each equal to the naive vote of
 * the workers it names.
 */
@Tag("slow")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WorkerKillTest {
    private static final int JOB = 4343;
    private static final long SEED = 23;
    private static final int N = 3;
    private static final long PARAMS = 200_003;
    private static final int ROUNDS = 20;
    private static final long DEADLINE_MS = 500;

    private AeronRuntime runtime;
    private AggregationServer launched;
    private final List<Process> processes = new ArrayList<>();
    private final AtomicReference<Throwable> serverError = new AtomicReference<>();

    @AfterEach
    void tearDown() {
        for (final Process process : processes) {
            process.destroyForcibly();
        }
        CloseHelper.closeAll(launched, runtime);
        assertNull(serverError.get(), "server agent error");
    }

    @Test
    void shouldFinishTrainingWithTheSurvivorsWhenAWorkerIsKilled() throws Exception {
        final int votePort = TestPorts.freeUdpPort();
        final int controlPort = TestPorts.freeUdpPort();
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        final File secret = File.createTempFile("dlion-secret", ".bin");
        secret.deleteOnExit();
        Frames.writeSecret(secret.toPath());

        // the workers first, the server once every worker is up: round 0's short deadline must not run out on a worker
        // whose JVM is still starting
        final CountDownLatch up = new CountDownLatch(N);
        final List<CompletableFuture<List<String>>> outputs = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            final List<String> command = ChildProcess.java();
            command.addAll(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), DLionCli.class.getName(), "vote-worker",
                "--job", Integer.toString(JOB), "--worker-id", Integer.toString(i), "--workers", Integer.toString(N),
                "--params", Long.toString(PARAMS), "--rounds", Integer.toString(ROUNDS), "--seed", Long.toString(SEED),
                "--round-pause-ms", "50", "--timeout-ms", "20000", "--connect-timeout-ms", "60000", "--secret-file", secret.getPath(),
                "--udp", "127.0.0.1:" + votePort + ":" + controlPort));
            final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            processes.add(process);
            final String killAfter = i == N - 1 ? "round 4 " : null;
            outputs.add(CompletableFuture.supplyAsync(() -> lines(process, killAfter, up)));
        }
        assertTrue(up.await(60, TimeUnit.SECONDS), "every worker started");
        final AggregationServer server = AggregationServer.launch(new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(N).paramCount(PARAMS).rule(VoteRule.MAJORITY).minVoters(2)
            .roundTimeoutNs(TimeUnit.MILLISECONDS.toNanos(DEADLINE_MS)).secret(Frames.SECRET)
            .voteChannel(Channels.udpVotes("127.0.0.1", votePort, N))
            .resultChannel(Channels.udpResultsPublication("127.0.0.1", controlPort, N)).errorHandler(serverError::set));
        launched = server;
        final List<String> victim = outputs.get(N - 1).get(60, TimeUnit.SECONDS);
        final long killedAtNs = System.nanoTime();
        assertTrue(victim.get(victim.size() - 1).startsWith("round 4 "), String.join("\n", victim));

        final List<List<String[]>> survivors = new ArrayList<>();
        for (int i = 0; i < N - 1; i++) {
            final List<String> out = outputs.get(i).get(90, TimeUnit.SECONDS);
            assertTrue(processes.get(i).waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, processes.get(i).exitValue(), String.join("\n", out));
            final List<String[]> rounds = new ArrayList<>();
            for (final String line : out) {
                if (line.startsWith("round ")) {
                    rounds.add(line.split(" "));
                }
            }
            assertEquals(ROUNDS, rounds.size(), String.join("\n", out));
            survivors.add(rounds);
        }
        final long detectMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAtNs);
        long slowestMicros = 0;
        int twoVoterRounds = 0;
        for (int r = 0; r < ROUNDS; r++) {
            final String[] a = survivors.get(0).get(r);
            final String[] b = survivors.get(1).get(r);
            assertEquals(a[5], b[5], "round " + r + ": survivors apply the same Delta");
            final int voters = Integer.parseInt(a[3]);
            if (r <= 4) {
                assertEquals(N, voters, "round " + r);
            }
            if (r >= 6) {
                assertEquals(N - 1, voters, "round " + r + ": worker 2 dropped");
            }
            final long[][] votes = new long[voters][];
            for (int i = 0; i < voters; i++) {
                votes[i] = SyntheticVotes.vote(SEED, r, i, PARAMS);
            }
            if (r != 5) {
                assertEquals(Long.toHexString(SyntheticVotes.digest(NaiveVote.reference(r, votes, PARAMS, VoteRule.MAJORITY))), a[5],
                    "round " + r + " equals the naive vote of its voters");
            }
            twoVoterRounds += voters == N - 1 ? 1 : 0;
            slowestMicros = Math.max(slowestMicros, Long.parseLong(a[7]));
        }
        assertEquals(1, server.counters().workersDropped().get());
        assertEquals(ROUNDS, server.counters().rounds().get());
        System.out.printf("WorkerKillTest: worker 2 killed after round 4; dropped at the %d ms deadline; slowest round %d ms;"
            + " %d rounds with 2 voters; survivors finished %d ms after the kill; all %d rounds identical on both survivors%n",
            DEADLINE_MS, slowestMicros / 1000, twoVoterRounds, detectMs, ROUNDS);
    }

    private List<String> lines(final Process process, final String killAfter, final CountDownLatch up) {
        final List<String> lines = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                lines.add(line);
                if (line.endsWith(" connecting")) {
                    up.countDown();
                }
                if (killAfter != null && line.startsWith(killAfter)) {
                    process.destroyForcibly();
                    return lines;
                }
            }
        } catch (final IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return lines;
    }
}
