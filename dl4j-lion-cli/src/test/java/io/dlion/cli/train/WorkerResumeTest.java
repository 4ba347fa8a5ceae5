package io.dlion.cli.train;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.dlion.aeron.LocalAeronJob;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.VoteRule;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A whole job stopped and resumed from the workers' own checkpoints ({@code ./dlion worker --checkpoint-dir D
 * --checkpoint-every K}, then {@code --resume}), through the same {@link Trainer#runAs} path the worker command takes,
 * over a real Aeron server: 2 workers train 1 epoch writing checkpoints, the job ends (every process and the server
 * gone), a new server and new workers resume from the checkpoints for epoch 2. The parameters equal those of the
 * same 2-epoch job that never stopped, bit for bit.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class WorkerResumeTest {
    private static final int WORKERS = 2;
    private static final Pattern HASH = Pattern.compile("params-sha256 worker=(\\d+) ([0-9a-f]{64})");

    @TempDir
    Path dir;

    @Test
    void shouldResumeAStoppedJobFromTheWorkersCheckpointsBitForBit() throws Exception {
        final List<String> straight = job(2, null, dir.resolve("straight"), 0);
        final Path checkpoints = dir.resolve("checkpoints");
        // 1200 examples, 600 per worker, 20 per worker step: 30 rounds per epoch, a checkpoint at round 30
        final List<String> firstEpoch = job(1, new Recovery(null, false, checkpoints, 30, false), dir.resolve("first"), 0);
        assertTrue(Files.exists(checkpoints.resolve("worker-0.zip")) && Files.exists(checkpoints.resolve("worker-1.zip")));
        final List<String> resumed = job(2, new Recovery(null, false, checkpoints, 0, true), dir.resolve("resumed"), 30);

        assertEquals(hash(straight.get(0)), hash(straight.get(1)));
        assertEquals(hash(resumed.get(0)), hash(resumed.get(1)), "the resumed workers agree");
        assertNotEquals(hash(straight.get(0)), hash(firstEpoch.get(0)), "one epoch is not two");
        for (final String output : resumed) {
            assertTrue(output.contains("resumed from") && output.contains("at round 30"), output);
            assertFalse(output.contains("epoch 1  test accuracy"), "the resumed job trains epoch 2 only: " + output);
        }
        assertEquals(hash(straight.get(0)), hash(resumed.get(0)), "resumed job == the job that never stopped");
    }

    private static String hash(final String output) {
        final Matcher m = HASH.matcher(output);
        assertTrue(m.find(), "a params-sha256 line: " + output);
        return m.group(2);
    }

    /** @return each worker's output of a job of the given epochs, each worker a Trainer on its own thread. */
    private static List<String> job(final int epochs, final Recovery recovery, final Path out, final long firstRound) throws Exception {
        final ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
        try (LocalAeronJob server = LocalAeronJob.launch(new LocalAeronJob.Context().jobId(9).workers(WORKERS).paramCount(203_530)
            .rule(VoteRule.MAJORITY))) {
            final List<Future<String>> hashes = new ArrayList<>();
            for (int i = 0; i < WORKERS; i++) {
                final int id = i;
                hashes.add(pool.submit(() -> {
                    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                    final Trainer trainer = new Trainer(TrainConfigs.of("fashion-mnist", null, "mlp", "lion", Sharing.DLION_MAVO, WORKERS,
                        "inproc", epochs, 40, 3e-4, 0, 42, 1_200, 500, 120, out.resolve("worker-" + id)),
                        new PrintStream(bytes, true, StandardCharsets.UTF_8));
                    trainer.runAs(new int[] {id}, () -> new VoteTransport() {
                        @Override
                        public VoteExchange exchange(final int worker) {
                            return server.exchange(worker, firstRound);
                        }

                        @Override
                        public void close() {
                            // the job closes the exchanges
                        }
                    }, recovery);
                    return bytes.toString(StandardCharsets.UTF_8);
                }));
            }
            final List<String> result = new ArrayList<>();
            for (final Future<String> hash : hashes) {
                result.add(hash.get(4, TimeUnit.MINUTES));
            }
            return result;
        } finally {
            pool.shutdownNow();
        }
    }
}
