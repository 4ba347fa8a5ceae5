package io.dlion.dist;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.dlion.exchange.InProcessVoteHub;
import io.dlion.vote.VoteRule;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.api.BaseTrainingListener;
import org.deeplearning4j.parallelism.ParallelWrapper;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;

/**
 * D-Lion inside DL4J's ParallelWrapper (TrainingMode.CUSTOM): replicas on their own threads, bound through
 * touch(); a last group of batches smaller than the number of workers is dropped on every worker.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DLionParallelWrapperTest {

    /** Records each replica's parameters after its last step, per thread. */
    static final class LastParams extends BaseTrainingListener {
        final Map<Thread, INDArray> last = new ConcurrentHashMap<>();
        final Map<Thread, Integer> steps = new ConcurrentHashMap<>();

        @Override
        public void iterationDone(final Model model, final int iteration, final int epoch) {
            last.put(Thread.currentThread(), model.params().dup());
            steps.merge(Thread.currentThread(), 1, Integer::sum);
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void shouldKeepReplicasBitIdentical(final boolean graph) throws Exception {
        final int workers = 3;
        final Model model = graph ? new ComputationGraph(DLionAccumulatorTest.graph()) : new MultiLayerNetwork(DLionAccumulatorTest.mlp(0.01, 0.02, 0.05));
        model.init();
        final INDArray initial = model.params().dup();
        final List<DataSet> batches = new ArrayList<>();
        for (int i = 0; i < 3 * workers + 1; i++) {
            batches.add(DLionAccumulatorTest.batch(7000 + i));
        }
        final InProcessVoteHub hub = new InProcessVoteHub(workers, VoteRule.MAJORITY, 30_000);
        final DLion.ParallelBuilder builder = DLion.parallelWrapper(model).workers(workers).exchanges(hub::exchange)
            .prefetchBuffer(0).roundTimeoutMillis(60_000);
        final LastParams listener = new LastParams();
        final ParallelWrapper wrapper = builder.build();
        try {
            wrapper.setListeners(listener);
            for (int epoch = 0; epoch < 2; epoch++) {
                // ParallelWrapper runs every fit on new replica threads: keep the last fit's
                listener.last.clear();
                wrapper.fit(new ListDataSetIterator<>(batches, 1));
            }
        } finally {
            wrapper.shutdown();
        }
        assertEquals(workers, listener.last.size(), "every replica trained");
        final double[] reference = listener.last.values().iterator().next().toDoubleVector();
        for (final INDArray p : listener.last.values()) {
            assertArrayEquals(reference, p.toDoubleVector(), 0.0);
        }
        assertNotEquals(initial, listener.last.values().iterator().next());

        final List<DLionStats> stats = builder.accumulator().stats();
        assertEquals(workers, stats.size());
        for (final DLionStats s : stats) {
            assertEquals(6, s.rounds(), "3 full groups per epoch, 2 epochs");
            assertEquals(workers, s.lastVoters());
        }
        assertEquals(0, hub.partialRounds(), "no round waited for a replica blocked on the root model's lock");
        assertEquals(0, hub.lateVotes());
        final long dropped = stats.stream().mapToLong(DLionStats::skippedSteps).sum();
        assertEquals(2, dropped, "one partial group of one batch per epoch");
        assertTrue(DLionListener.summary(stats).contains("6 rounds"), DLionListener.summary(stats));
    }
}
