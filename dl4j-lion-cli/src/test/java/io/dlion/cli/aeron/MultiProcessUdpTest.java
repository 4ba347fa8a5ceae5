package io.dlion.cli.aeron;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Workers in separate JVM processes (each with its own embedded media driver) against a server in this JVM, or each
 * serving one slice of the parameters in its own process (the sharded topology), over UDP on 127.0.0.1: every worker's
 * result digest equals the digest of a naive vote computed here.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class MultiProcessUdpTest {
    private static final int JOB = 4242;
    private static final long SEED = 17;

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
    void shouldMatchNaiveVoteWithWorkersInSeparateProcesses() throws Exception {
        runJob(null);
    }

    /** The same job with the secret and a tag on every vote and result frame ({@code --frame-mac}): the same results. */
    @Test
    void shouldMatchNaiveVoteWithEveryFrameTagged(@TempDir final Path dir) throws Exception {
        runJob(Frames.writeSecret(dir.resolve("job.secret")));
    }

    /**
     * The sharded topology: no server, every worker process serves one slice (chunk-aligned, so 4 slices of 300,007
     * parameters are 4 servers with chunks of their own) and sends every other slice to its owner. 3 workers majority
     * (odd N: a 1-bit result), 4 workers average (every count of +1 votes), each against the naive vote.
     */
    @Test
    void shouldMatchNaiveVoteWhenEveryWorkerServesASlice(@TempDir final Path dir) throws Exception {
        final Path secretFile = Frames.writeSecret(dir.resolve("job.secret"));
        runSharded(3, VoteRule.MAJORITY, secretFile);
        runSharded(4, VoteRule.AVERAGE, secretFile);
    }

    /**
     * The dense baseline sharded the same way (a reduce-scatter of fp32 gradients, then an all-gather of the means): 3
     * worker processes, each serving one slice, every mean equal to a plain loop's sum in double divided by N.
     */
    @Test
    void shouldAverageLikeAPlainLoopWhenEveryWorkerServesADenseSlice(@TempDir final Path dir) throws Exception {
        final int n = 3;
        final int params = 100_003;
        final int rounds = 2;
        final List<Process> job = startSharded(n, params, rounds, Frames.writeSecret(dir.resolve("job.secret")), "--sharing", "dense");
        final List<String> expected = new ArrayList<>();
        final float[][] gradients = new float[n][params];
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < n; i++) {
                SyntheticVotes.gradient(SEED, r, i, gradients[i]);
            }
            final float[] mean = new float[params];
            for (int j = 0; j < params; j++) {
                double sum = 0;
                for (int i = 0; i < n; i++) {
                    sum += gradients[i][j];
                }
                mean[j] = (float)(sum / n);
            }
            expected.add(Long.toHexString(SyntheticVotes.digest(mean)));
        }
        assertShardedDigests(job, n, expected);
    }

    private void runSharded(final int n, final VoteRule rule, final Path secretFile) throws Exception {
        final long params = 300_007;
        final int rounds = 3;
        final List<Process> job = startSharded(n, params, rounds, secretFile, "--rule", rule == VoteRule.MAJORITY ? "majority" : "average",
            "--chunk-words", "200");
        final List<String> expected = naiveDigests(n, params, rounds, rule);
        assertShardedDigests(job, n, expected);
    }

    /** @return the vote-worker processes of a sharded job on 127.0.0.1, every one serving its slice. */
    private List<Process> startSharded(final int n, final long params, final int rounds, final Path secretFile, final String... options)
        throws IOException {
        final int basePort = TestPorts.freeUdpPorts(2 * n);
        final List<Process> job = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final List<String> command = voteWorker(i, n, params, rounds);
            command.addAll(List.of(options));
            command.addAll(List.of("--topology", "sharded", "--hosts", String.join(",", java.util.Collections.nCopies(n, "127.0.0.1")),
                "--vote-port", Integer.toString(basePort), "--secret-file", secretFile.toString()));
            final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            processes.add(process);
            job.add(process);
        }
        return job;
    }

    /** Every worker of a sharded job exits, served a slice and printed the expected digest of every round. */
    private static void assertShardedDigests(final List<Process> job, final int n, final List<String> expected) throws InterruptedException {
        for (final Process process : job) {
            final StringBuilder output = new StringBuilder();
            final List<String> digests = digests(process, n, output);
            assertTrue(process.waitFor(30, TimeUnit.SECONDS), "worker exits");
            assertEquals(0, process.exitValue(), output.toString());
            assertEquals(expected, digests, output.toString());
            assertTrue(output.toString().contains(" serves slice "), output.toString());
        }
    }

    /** @return the command line of a vote-worker process of this job, without its topology and secret. */
    private static List<String> voteWorker(final int id, final int n, final long params, final int rounds) {
        final List<String> command = ChildProcess.java();
        command.addAll(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1",
            "-cp", System.getProperty("java.class.path"),
            DLionCli.class.getName(), "vote-worker",
            "--job", Integer.toString(JOB), "--worker-id", Integer.toString(id), "--workers", Integer.toString(n),
            "--params", Long.toString(params), "--rounds", Integer.toString(rounds), "--seed", Long.toString(SEED)));
        return command;
    }

    private static List<String> naiveDigests(final int n, final long params, final int rounds, final VoteRule rule) {
        final List<String> expected = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            final long[][] votes = new long[n][];
            for (int i = 0; i < n; i++) {
                votes[i] = SyntheticVotes.vote(SEED, r, i, params);
            }
            expected.add(Long.toHexString(SyntheticVotes.digest(NaiveVote.reference(r, votes, params, rule))));
        }
        return expected;
    }

    /** @return the digest of every round the worker printed, each checked to have {@code n} voters. */
    private static List<String> digests(final Process process, final int n, final StringBuilder output) {
        final List<String> digests = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                output.append(line).append('\n');
                final String[] parts = line.split(" ");
                if (parts.length >= 6 && parts[0].equals("round")) {
                    assertEquals(Integer.toString(n), parts[3], "voters: " + line);
                    digests.add(parts[5]);
                }
            }
        } catch (final IOException ex) {
            throw new IllegalStateException(output.toString(), ex);
        }
        return digests;
    }

    private void runJob(final Path secretFile) throws Exception {
        final int n = 3;
        final long params = 200_003;
        final int rounds = 3;
        final int votePort = TestPorts.freeUdpPort();
        final int controlPort = TestPorts.freeUdpPort();
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        final AggregationServer server = AggregationServer.launch(new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(n).paramCount(params).rule(VoteRule.MAJORITY)
            .secret(secretFile == null ? null : Frames.SECRET).frameMac(secretFile != null)
            .voteChannel(Channels.udpVotes("127.0.0.1", votePort, n))
            .resultChannel(Channels.udpResultsPublication("127.0.0.1", controlPort, n)).errorHandler(serverError::set));
        launched = server;

        for (int i = 0; i < n; i++) {
            final List<String> command = voteWorker(i, n, params, rounds);
            command.addAll(List.of("--udp", "127.0.0.1:" + votePort + ":" + controlPort));
            command.addAll(secretFile == null ? List.of("--insecure") : List.of("--secret-file", secretFile.toString(), "--frame-mac"));
            processes.add(new ProcessBuilder(command).redirectErrorStream(true).start());
        }

        final List<String> expected = naiveDigests(n, params, rounds, VoteRule.MAJORITY);
        for (final Process process : processes) {
            final StringBuilder output = new StringBuilder();
            final List<String> digests = digests(process, n, output);
            assertTrue(process.waitFor(30, TimeUnit.SECONDS), "worker exits");
            assertEquals(0, process.exitValue(), output.toString());
            assertEquals(expected, digests, output + " server rejected=" + server.counters().rejectedTotal() + " rounds="
                + server.counters().rounds().get() + " chunks=" + server.counters().chunksVoted().get());
        }
        assertEquals(rounds, server.counters().rounds().get());
        // with --frame-mac, an untagged vote or a HELLO without the flag would have been refused (and no round completed)
        assertEquals(0, server.counters().rejectedTotal());
    }
}
