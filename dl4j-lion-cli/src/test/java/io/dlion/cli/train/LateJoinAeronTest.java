package io.dlion.cli.train;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.LocalAeronJob;
import io.dlion.dist.DLionAccumulator;
import io.dlion.dist.DLionCheckpoint;
import io.dlion.vote.VoteRule;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Rejoin over the Aeron transport (issue 6 item 2): workers 0 and 1 of a 3-worker job train without worker 2
 * (quorum 2, the server drops it at the round deadline); worker 0 writes a checkpoint; worker 2 joins at that
 * round with the checkpoint's parameters and {@code firstRound}; afterwards all three are bit-identical.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class LateJoinAeronTest {
    private static final long TIMEOUT_MS = 30_000;

    @TempDir
    Path dir;

    private final List<ExecutorService> threads = new ArrayList<>();
    private LocalAeronJob job;

    @AfterEach
    void close() {
        for (final ExecutorService t : threads) {
            t.shutdownNow();
        }
        if (job != null) {
            job.close();
        }
    }

    private static <T> T on(final ExecutorService thread, final Callable<T> work) throws Exception {
        return thread.submit(work).get(60, TimeUnit.SECONDS);
    }

    private static void train(final List<ExecutorService> on, final List<MultiLayerNetwork> nets, final int[] ids, final int from, final int to)
        throws Exception {
        final List<Future<?>> running = new ArrayList<>();
        for (int i = 0; i < nets.size(); i++) {
            final MultiLayerNetwork net = nets.get(i);
            final int id = ids[i];
            running.add(on.get(i).submit(() -> {
                for (int s = from; s < to; s++) {
                    net.fit(HostileExchangeTest.batch(100L * id + s));
                }
                return null;
            }));
        }
        for (final Future<?> f : running) {
            f.get(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldBringALateWorkerToTheJobsParametersOverAeron() throws Exception {
        final MultiLayerNetwork probe = HostileExchangeTest.tinyNet();
        job = LocalAeronJob.launch(new LocalAeronJob.Context().jobId(21).workers(3).paramCount(probe.numParams()).rule(VoteRule.MAJORITY)
            .minVoters(2).roundTimeoutNs(TimeUnit.MILLISECONDS.toNanos(300)));
        for (int i = 0; i < 3; i++) {
            threads.add(Executors.newSingleThreadExecutor());
        }
        final List<MultiLayerNetwork> nets = new ArrayList<>();
        final List<DLionAccumulator> accs = new ArrayList<>();
        for (int id = 0; id < 2; id++) {
            final int w = id;
            final MultiLayerNetwork net = HostileExchangeTest.tinyNet();
            accs.add(on(threads.get(id), () -> DLionAccumulator.forModel(net, job.exchange(w), TIMEOUT_MS)));
            nets.add(net);
        }
        train(threads.subList(0, 2), nets, new int[] {0, 1}, 0, 4);
        assertArrayEquals(nets.get(0).params().toDoubleVector(), nets.get(1).params().toDoubleVector(), 0.0);
        assertFalse(Arrays.equals(probe.params().toDoubleVector(), nets.get(0).params().toDoubleVector()), "the job trained");

        final DLionCheckpoint donor = on(threads.get(0), () -> DLionCheckpoint.write(dir.resolve("worker-0.zip"), nets.get(0), accs.get(0)));
        assertEquals(4, donor.round());
        final DLionAccumulator late = on(threads.get(2),
            () -> donor.rejoin(DLionCheckpoint.Momentum.ZERO, null, job.exchange(2, donor.round()), TIMEOUT_MS));
        nets.add((MultiLayerNetwork) late.model());

        train(threads, nets, new int[] {0, 1, 2}, 4, 8);
        assertEquals(8, late.round());
        for (final MultiLayerNetwork net : nets) {
            assertArrayEquals(nets.get(0).params().toDoubleVector(), net.params().toDoubleVector(), 0.0);
        }
        assertEquals(3, job.serverCounters().votersLastRound().get(), "worker 2 votes again");
    }
}
