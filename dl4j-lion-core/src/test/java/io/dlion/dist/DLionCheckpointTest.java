package io.dlion.dist;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.exchange.InProcessVoteHub;
import io.dlion.vote.VoteRule;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.nd4j.linalg.dataset.DataSet;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DLionCheckpointTest {
    private static final long TIMEOUT = 60_000;

    @TempDir
    Path dir;

    private static Model newModel(final boolean graph) {
        final Model m = graph ? new ComputationGraph(DLionAccumulatorTest.graph()) : new MultiLayerNetwork(DLionAccumulatorTest.mlp(0.01, 0.02, 0.05));
        m.init();
        return m;
    }

    private static void fit(final Model m, final int worker, final int step) {
        final DataSet d = DLionAccumulatorTest.batch(1000L * worker + step);
        if (m instanceof MultiLayerNetwork) {
            ((MultiLayerNetwork) m).fit(d);
        } else {
            ((ComputationGraph) m).fit(d);
        }
    }

    /** Steps [from, to) of each given worker, one thread per worker; worker ids[i] trains models[i] on its own batches. */
    private static void train(final List<Model> models, final int[] ids, final int from, final int to) throws Exception {
        final ExecutorService pool = Executors.newFixedThreadPool(models.size());
        try {
            final List<Future<?>> running = new ArrayList<>();
            for (int i = 0; i < models.size(); i++) {
                final Model m = models.get(i);
                final int id = ids[i];
                running.add(pool.submit(() -> {
                    for (int s = from; s < to; s++) {
                        fit(m, id, s);
                    }
                    return null;
                }));
            }
            for (final Future<?> f : running) {
                f.get(100, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static double[] params(final Model m) {
        return m.params().toDoubleVector();
    }

    private static double[] momentum(final Model m) {
        return DLionCheckpoint.updaterState(m).toDoubleVector();
    }

    /**
     * Issue 6 item 3: two workers train K steps, both checkpoint, continue K more (P1); fresh objects restored
     * from the checkpoints, on a fresh hub, continue the same K steps (P2). P1 == P2 bit for bit, on both workers.
     * Zeroing the momentum instead changes the result, so the momentum really is part of what is restored.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void shouldResumeAWholeJobBitForBit(final boolean graph) throws Exception {
        final int k = 4;
        final int[] ids = {0, 1};
        final InProcessVoteHub hub = new InProcessVoteHub(2, VoteRule.MAJORITY, 30_000);
        final List<Model> models = new ArrayList<>();
        final List<DLionAccumulator> accs = new ArrayList<>();
        for (final int id : ids) {
            final Model m = newModel(graph);
            accs.add(DLionAccumulator.forModel(m, hub.exchange(id), TIMEOUT));
            models.add(m);
        }
        train(models, ids, 0, k);
        final List<DLionCheckpoint> saved = new ArrayList<>();
        for (final int id : ids) {
            saved.add(DLionCheckpoint.write(dir.resolve("worker-" + id + ".zip"), models.get(id), accs.get(id)));
            assertArrayEquals(momentum(models.get(id)), momentum(saved.get(id).model()), 0.0, "momentum saved exactly");
        }
        assertFalse(Arrays.equals(momentum(models.get(0)), momentum(models.get(1))), "each worker has its own momentum");
        train(models, ids, k, 2 * k);
        final double[] p1 = params(models.get(0));
        assertArrayEquals(p1, params(models.get(1)), 0.0);

        final InProcessVoteHub fresh = new InProcessVoteHub(2, VoteRule.MAJORITY, 30_000);
        final List<Model> restored = new ArrayList<>();
        for (final int id : ids) {
            final DLionCheckpoint cp = DLionCheckpoint.read(dir.resolve("worker-" + id + ".zip"));
            assertEquals(k, cp.round());
            assertEquals(id, cp.workerId());
            final DLionAccumulator acc = cp.resume(fresh.exchange(id), TIMEOUT);
            assertEquals(k, acc.round());
            restored.add(acc.model());
        }
        train(restored, ids, k, 2 * k);
        for (final Model m : restored) {
            assertArrayEquals(p1, params(m), 0.0, "P1 == P2");
        }

        final InProcessVoteHub third = new InProcessVoteHub(2, VoteRule.MAJORITY, 30_000);
        final List<Model> zeroed = new ArrayList<>();
        for (final int id : ids) {
            zeroed.add(saved.get(id).rejoin(DLionCheckpoint.Momentum.ZERO, null, third.exchange(id), TIMEOUT).model());
        }
        train(zeroed, ids, k, 2 * k);
        assertFalse(Arrays.equals(p1, params(zeroed.get(0))), "without the momentum the run differs");
    }

    /**
     * Issue 6 item 2: three workers train K steps; worker 2 dies; the others go on for M rounds (each round
     * completes with 2 voters after the hub's straggler wait); worker 0 writes a checkpoint at the current round,
     * worker 2 rejoins from it (momentum per policy) and votes again from that round: afterwards all three are
     * bit-identical, and every later round has all three voters.
     */
    @ParameterizedTest
    @EnumSource(DLionCheckpoint.Momentum.class)
    void shouldRejoinADeadWorkerWithTheJobsParameters(final DLionCheckpoint.Momentum policy) throws Exception {
        final int k = 3;
        final int m = 3;
        final InProcessVoteHub hub = new InProcessVoteHub(3, VoteRule.MAJORITY, 1000);
        final List<Model> models = new ArrayList<>();
        final List<DLionAccumulator> accs = new ArrayList<>();
        for (int id = 0; id < 3; id++) {
            final Model model = newModel(false);
            accs.add(DLionAccumulator.forModel(model, hub.exchange(id), TIMEOUT));
            models.add(model);
        }
        train(models, new int[] {0, 1, 2}, 0, k);
        final DLionCheckpoint own = DLionCheckpoint.write(dir.resolve("worker-2.zip"), models.get(2), accs.get(2));
        accs.get(2).close();
        final double[] deadParams = params(models.get(2));

        train(models.subList(0, 2), new int[] {0, 1}, k, k + m);
        assertEquals(m, hub.partialRounds(), "rounds without worker 2");
        assertArrayEquals(params(models.get(0)), params(models.get(1)), 0.0);
        assertFalse(Arrays.equals(deadParams, params(models.get(0))), "the job moved on without worker 2");

        final DLionCheckpoint donor = DLionCheckpoint.write(dir.resolve("worker-0.zip"), models.get(0), accs.get(0));
        assertEquals(k + m, donor.round());
        final DLionAccumulator rejoined = donor.rejoin(policy, own, hub.exchange(2), TIMEOUT);
        final Model back = rejoined.model();
        assertEquals(k + m, rejoined.round());
        assertArrayEquals(params(models.get(0)), params(back), 0.0, "resynced to the job's parameters");
        final double[] expectedMomentum;
        switch (policy) {
            case ZERO:
                expectedMomentum = new double[momentum(back).length];
                break;
            case OWN:
                expectedMomentum = momentum(own.model());
                break;
            default:
                expectedMomentum = momentum(models.get(0));
                break;
        }
        assertArrayEquals(expectedMomentum, momentum(back), 0.0, "momentum policy " + policy);

        final List<Model> all = List.of(models.get(0), models.get(1), back);
        train(all, new int[] {0, 1, 2}, k + m, k + m + 3);
        assertEquals(m, hub.partialRounds(), "worker 2 voted in every round after it rejoined");
        assertEquals(k + m + 3, rejoined.round());
        for (final Model model : all) {
            assertArrayEquals(params(all.get(0)), params(model), 0.0);
        }
    }

    @Test
    void shouldRefuseToResumeAnotherWorkersCheckpointOrAForeignFile() throws Exception {
        final InProcessVoteHub hub = new InProcessVoteHub(2, VoteRule.MAJORITY, 30_000);
        final Model model = newModel(false);
        final DLionAccumulator acc = DLionAccumulator.forModel(model, hub.exchange(0), TIMEOUT);
        final DLionCheckpoint cp = DLionCheckpoint.write(dir.resolve("w0.zip"), model, acc);
        assertThrows(IllegalArgumentException.class, () -> cp.resume(hub.exchange(1), TIMEOUT));
        assertThrows(IllegalArgumentException.class, () -> cp.resume(new InProcessVoteHub(3, VoteRule.MAJORITY, 1000).exchange(0), TIMEOUT));
        assertThrows(IllegalArgumentException.class, () -> cp.rejoin(DLionCheckpoint.Momentum.OWN, null, hub.exchange(1), TIMEOUT));
        final Path plain = dir.resolve("plain.zip");
        ModelSerializer.writeModel(model, plain.toFile(), true);
        assertThrows(IllegalArgumentException.class, () -> DLionCheckpoint.read(plain));
        assertTrue(Files.exists(cp.file()));
        try (var files = Files.list(dir)) {
            assertEquals(2, files.count(), "no temporary files left behind");
        }
    }
}
