package io.dlion.dist;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.Lion;
import io.dlion.exchange.InProcessVoteHub;
import io.dlion.vote.VoteRule;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.ComputationGraphConfiguration;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.lossfunctions.LossFunctions;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DLionAccumulatorTest {
    private static final int IN = 6;
    private static final int OUT = 3;

    /** Two layers with their own learning rates (two updater blocks) and per-layer weight decay on the weights. */
    static MultiLayerConfiguration mlp(final double lr0, final double lr1, final double weightDecay) {
        return new NeuralNetConfiguration.Builder()
            .seed(11)
            .dataType(DataType.DOUBLE)
            .list()
            .layer(new DenseLayer.Builder().nIn(IN).nOut(5).activation(Activation.TANH).updater(new Lion(lr0)).weightDecay(weightDecay).build())
            .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(5).nOut(OUT).activation(Activation.SOFTMAX)
                .updater(new Lion(lr1)).weightDecay(weightDecay).build())
            .build();
    }

    static ComputationGraphConfiguration graph() {
        return new NeuralNetConfiguration.Builder()
            .seed(12)
            .dataType(DataType.DOUBLE)
            .updater(new Lion(0.01))
            .graphBuilder()
            .addInputs("in")
            .addLayer("dense", new DenseLayer.Builder().nIn(IN).nOut(5).activation(Activation.TANH).build(), "in")
            .addLayer("out", new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(5).nOut(OUT).activation(Activation.SOFTMAX).build(), "dense")
            .setOutputs("out")
            .build();
    }

    static DataSet batch(final long seed) {
        final java.util.Random random = new java.util.Random(seed);
        final INDArray features = Nd4j.create(DataType.DOUBLE, 8, IN);
        final INDArray labels = Nd4j.zeros(DataType.DOUBLE, 8, OUT);
        for (int i = 0; i < 8; i++) {
            for (int j = 0; j < IN; j++) {
                features.putScalar(i, j, random.nextGaussian());
            }
            labels.putScalar(i, random.nextInt(OUT), 1.0);
        }
        return new DataSet(features, labels);
    }

    private static Model newModel(final boolean graph, final double weightDecay) {
        final Model m = graph ? new ComputationGraph(graph()) : new MultiLayerNetwork(mlp(0.01, 0.02, weightDecay));
        m.init();
        return m;
    }

    private static void fit(final Model m, final DataSet d) {
        if (m instanceof MultiLayerNetwork) {
            ((MultiLayerNetwork) m).fit(d);
        } else {
            ((ComputationGraph) m).fit(d);
        }
    }

    /** Trains N models in N threads, each through its own exchange of one hub; worker i gets batch data(i, step). */
    private static List<Model> trainWorkers(final int n, final VoteRule rule, final boolean graph, final double weightDecay, final int steps,
        final java.util.function.BiFunction<Integer, Integer, DataSet> data) throws Exception {
        final InProcessVoteHub hub = new InProcessVoteHub(n, rule, 30_000);
        final List<Model> models = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final Model m = newModel(graph, weightDecay);
            DLionAccumulator.forModel(m, hub.exchange(i), 60_000);
            models.add(m);
        }
        final ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            final List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                final int id = i;
                futures.add(pool.submit(() -> {
                    for (int s = 0; s < steps; s++) {
                        fit(models.get(id), data.apply(id, s));
                    }
                    return null;
                }));
            }
            for (final Future<?> f : futures) {
                f.get(100, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        return models;
    }

    @ParameterizedTest
    @EnumSource(VoteRule.class)
    void shouldEqualPlainLionWithOneWorker(final VoteRule rule) throws Exception {
        final Model plain = newModel(false, 0.05);
        final List<Model> dist = trainWorkers(1, rule, false, 0.05, 6, (w, s) -> batch(100 + s));
        for (int s = 0; s < 6; s++) {
            fit(plain, batch(100 + s));
        }
        assertArrayEquals(plain.params().toDoubleVector(), dist.get(0).params().toDoubleVector(), 0.0);
    }

    @ParameterizedTest
    @EnumSource(VoteRule.class)
    void shouldEqualPlainLionWhenEveryWorkerSeesTheSameBatches(final VoteRule rule) throws Exception {
        final Model plain = newModel(false, 0.05);
        final List<Model> dist = trainWorkers(4, rule, false, 0.05, 5, (w, s) -> batch(200 + s));
        for (int s = 0; s < 5; s++) {
            fit(plain, batch(200 + s));
        }
        for (final Model m : dist) {
            assertArrayEquals(plain.params().toDoubleVector(), m.params().toDoubleVector(), 0.0);
        }
    }

    @ParameterizedTest
    @EnumSource(VoteRule.class)
    void shouldKeepWorkersBitIdenticalWithDifferentData(final VoteRule rule) throws Exception {
        for (final boolean graph : new boolean[] {false, true}) {
            final List<Model> models = trainWorkers(3, rule, graph, 0.0, 8, (w, s) -> batch(1000L * w + s));
            final double[] first = models.get(0).params().toDoubleVector();
            for (final Model m : models) {
                assertArrayEquals(first, m.params().toDoubleVector(), 0.0, graph ? "graph" : "mlp");
            }
            final Model untrained = newModel(graph, 0.0);
            assertNotEquals(untrained.params(), models.get(0).params());
        }
    }

    /**
     * One step, N = 2 (ties possible) and N = 3, per-layer learning rates and weight decay: from the workers'
     * own gradients, theta' = theta - lr_layer * (Delta + lambda * theta) for weights (no decay on biases),
     * with Delta the naive majority or average of sign(g_i) (m = 0 at the first step, so c_i = (1 - beta1) g_i).
     */
    @Test
    void shouldFollowTheFormulaWithPerLayerLearningRatesAndWeightDecay() throws Exception {
        final double lambda = 0.1;
        for (final VoteRule rule : VoteRule.values()) {
            for (final int n : new int[] {2, 3}) {
                final List<double[]> grads = new ArrayList<>();
                final MultiLayerNetwork probe = new MultiLayerNetwork(mlp(0.01, 0.02, lambda));
                probe.init();
                final double[] theta = probe.params().toDoubleVector();
                for (int i = 0; i < n; i++) {
                    final DataSet d = batch(500 + i);
                    probe.setInput(d.getFeatures());
                    probe.setLabels(d.getLabels());
                    probe.computeGradientAndScore();
                    grads.add(probe.gradient().gradient().dup().toDoubleVector());
                }
                final List<Model> models = trainWorkers(n, rule, false, lambda, 1, (w, s) -> batch(500 + w));
                final long w0 = IN * 5;
                final long layer0 = w0 + 5;
                final long w1 = layer0 + 5 * OUT;
                final double[] expected = new double[theta.length];
                for (int j = 0; j < theta.length; j++) {
                    int plus = 0;
                    for (final double[] g : grads) {
                        plus += g[j] > 0 ? 1 : 0;
                    }
                    final double delta = rule == VoteRule.MAJORITY ? Math.signum(2 * plus - n) : (2.0 * plus - n) / n;
                    final double lr = j < layer0 ? 0.01 : 0.02;
                    final boolean weight = j < w0 || (j >= layer0 && j < w1);
                    expected[j] = theta[j] - lr * (delta + (weight ? lambda * theta[j] : 0));
                }
                for (final Model m : models) {
                    assertArrayEquals(expected, m.params().toDoubleVector(), 1e-15, rule + " N=" + n);
                }
            }
        }
    }

    @Test
    void shouldRefuseNetworksWithoutLion() {
        final MultiLayerNetwork adam = new MultiLayerNetwork(new NeuralNetConfiguration.Builder()
            .updater(new Adam(1e-3)).list()
            .layer(new OutputLayer.Builder().nIn(IN).nOut(OUT).activation(Activation.SOFTMAX).build())
            .build());
        adam.init();
        final InProcessVoteHub hub = new InProcessVoteHub(1, VoteRule.MAJORITY, 1000);
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DLion.attach(adam, hub.exchange(0)));
        assertTrue(e.getMessage().contains("Lion") && e.getMessage().contains("Adam"), e.getMessage());
    }

    @Test
    void shouldRefuseToTrainAfterTheModelsUpdaterWasReplaced() {
        final InProcessVoteHub hub = new InProcessVoteHub(1, VoteRule.MAJORITY, 1000);
        final MultiLayerNetwork net = new MultiLayerNetwork(mlp(0.01, 0.02, 0.0));
        net.init();
        DLion.attach(net, hub.exchange(0));
        net.fit(batch(0));
        // a new updater: its Lion updaters are not bound and would train this worker alone
        net.setUpdater(org.deeplearning4j.nn.updater.UpdaterCreator.getUpdater(net));
        final IllegalStateException e = assertThrows(IllegalStateException.class, () -> net.fit(batch(1)));
        assertTrue(e.getMessage().contains("replaced"), e.getMessage());
    }

    @Test
    void shouldReportRoundsAndBytesInStats() throws Exception {
        final InProcessVoteHub hub = new InProcessVoteHub(1, VoteRule.MAJORITY, 1000);
        final MultiLayerNetwork net = new MultiLayerNetwork(mlp(0.01, 0.02, 0.0));
        net.init();
        final DLionAccumulator acc = DLion.attach(net, hub.exchange(0));
        for (int s = 0; s < 3; s++) {
            net.fit(batch(s));
        }
        final DLionStats stats = acc.stats().get(0);
        assertEquals(3, stats.rounds());
        assertEquals(1, stats.lastVoters());
        assertEquals(1.0, stats.lastAlignment(), 1e-12, "a single worker's vote is the result");
        final long n = net.numParams();
        assertEquals(3 * ((n + 7) / 8), stats.bytesUp());
        assertEquals(3 * ((n + 7) / 8), stats.bytesDown(), "odd N majority: 1 bit per parameter down");
    }
}
