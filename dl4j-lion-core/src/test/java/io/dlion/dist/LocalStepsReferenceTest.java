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

import io.dlion.exchange.InProcessVoteHub;
import io.dlion.vote.VoteRule;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Local steps against a plain double loop that knows only the rules: H local Lion steps from the shared parameters,
 * the pseudo-gradient theta - theta_i, the outer momentum and its sign vote (sign(0) by the round's parity), MaVo or Avg
 * over the votes, theta = theta - lr_out (Delta + lambda theta), lr_out = scale H lr_layer; and, for H = 1, per-step
 * D-Lion (the gradient's vote with the layer's Lion betas, theta = theta - lr (Delta + lambda_layer theta)). The loop
 * takes only the network's gradients from DL4J (a probe network at the loop's own parameters), never the code under test.
 * With local steps the parameters match bit for bit; per-step D-Lion adds its weight-decay term in another order, so
 * H = 1 matches to a few ulps (as in {@code DLionAccumulatorTest}).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class LocalStepsReferenceTest {
    private static final double LR0 = 0.01;
    private static final double LR1 = 0.02;
    /** Lion's documented default betas, the inner optimizer's (and per-step D-Lion's). */
    private static final double B1 = 0.9;
    private static final double B2 = 0.99;
    private static final double OUTER_B1 = 0.8;
    private static final double OUTER_B2 = 0.95;
    private static final double SCALE = 0.5;
    private static final double LAMBDA = 0.05;
    private static final int OUTER_ROUNDS = 3;
    /** Parameter ranges of the test MLP (6-5-3): layer 0 weights, biases, layer 1 weights, biases. */
    private static final int W0 = 6 * 5;
    private static final int L0 = W0 + 5;
    private static final int W1 = L0 + 5 * 3;

    private static DataSet batch(final int worker, final int step) {
        return DLionAccumulatorTest.batch(7000L + 100L * worker + step);
    }

    private static LocalSteps settings(final int h) {
        return new LocalSteps().steps(h).outerLrScale(SCALE).outerBeta1(OUTER_B1).outerBeta2(OUTER_B2).outerWeightDecay(LAMBDA);
    }

    /** Layer weight decay only for per-step D-Lion; with local steps it is the outer step's. */
    private static MultiLayerNetwork network(final int h) {
        final MultiLayerNetwork net = new MultiLayerNetwork(DLionAccumulatorTest.mlp(LR0, LR1, h == 1 ? LAMBDA : 0.0));
        net.init();
        return net;
    }

    private static double lr(final int j) {
        return j < L0 ? LR0 : LR1;
    }

    private static boolean weight(final int j) {
        return j < W0 || (j >= L0 && j < W1);
    }

    private static double sign(final double x) {
        return x > 0 ? 1 : x < 0 ? -1 : 0;
    }

    /** The vote of one parameter: +1 / -1, zero by the round's parity (+1 on even rounds). */
    private static int vote(final double c, final long round) {
        if (c > 0) {
            return 1;
        }
        if (c < 0) {
            return -1;
        }
        return (round & 1) == 0 ? 1 : -1;
    }

    /** The reference: parameters after each outer round, from the rules alone. */
    private static List<double[]> reference(final int n, final int h, final VoteRule rule) {
        final MultiLayerNetwork probe = network(h);
        double[] theta = probe.params().toDoubleVector();
        final int p = theta.length;
        final double[][] innerM = new double[n][p];
        final double[][] outerM = new double[n][p];
        final List<double[]> out = new ArrayList<>();
        for (int round = 0; round < OUTER_ROUNDS; round++) {
            final int[] plus = new int[p];
            for (int i = 0; i < n; i++) {
                final double[] local = theta.clone();
                double[] pseudo = new double[p];
                for (int k = 0; k < h; k++) {
                    final double[] g = gradient(probe, local, batch(i, round * h + k));
                    if (h == 1) {
                        pseudo = g;
                        break;
                    }
                    for (int j = 0; j < p; j++) {
                        final double c = B1 * innerM[i][j] + (1 - B1) * g[j];
                        local[j] -= lr(j) * sign(c);
                        innerM[i][j] = B2 * innerM[i][j] + (1 - B2) * g[j];
                    }
                }
                final double b1 = h == 1 ? B1 : OUTER_B1;
                final double b2 = h == 1 ? B2 : OUTER_B2;
                for (int j = 0; j < p; j++) {
                    final double g = h == 1 ? pseudo[j] : theta[j] - local[j];
                    final double c = b1 * outerM[i][j] + (1 - b1) * g;
                    plus[j] += vote(c, round) > 0 ? 1 : 0;
                    outerM[i][j] = b2 * outerM[i][j] + (1 - b2) * g;
                }
            }
            final double[] next = new double[p];
            for (int j = 0; j < p; j++) {
                final double delta = rule == VoteRule.MAJORITY ? sign(2 * plus[j] - n) : (2.0 * plus[j] - n) / n;
                final double lrOut = h == 1 ? lr(j) : SCALE * h * lr(j);
                final double decay = weight(j) || h > 1 ? LAMBDA * theta[j] : 0;
                next[j] = theta[j] - lrOut * (delta + decay);
            }
            theta = next;
            out.add(theta.clone());
        }
        return out;
    }

    private static double[] gradient(final MultiLayerNetwork probe, final double[] params, final DataSet d) {
        probe.setParams(Nd4j.createFromArray(params).reshape(1, params.length));
        probe.setInput(d.getFeatures());
        probe.setLabels(d.getLabels());
        probe.computeGradientAndScore();
        return probe.gradient().gradient().dup().toDoubleVector();
    }

    /** N workers in N threads; each records its parameters after every outer round. */
    private static List<List<double[]>> train(final int n, final int h, final VoteRule rule) throws Exception {
        final InProcessVoteHub hub = new InProcessVoteHub(n, rule, 30_000);
        final List<MultiLayerNetwork> nets = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final MultiLayerNetwork net = network(h);
            DLion.attach(net, hub.exchange(i), settings(h));
            nets.add(net);
        }
        final ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            final List<Future<List<double[]>>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                final int id = i;
                futures.add(pool.submit(() -> {
                    final List<double[]> after = new ArrayList<>();
                    for (int s = 0; s < OUTER_ROUNDS * h; s++) {
                        nets.get(id).fit(batch(id, s));
                        if (s % h == h - 1) {
                            after.add(nets.get(id).params().toDoubleVector());
                        }
                    }
                    return after;
                }));
            }
            final List<List<double[]>> all = new ArrayList<>();
            for (final Future<List<double[]>> f : futures) {
                all.add(f.get(200, TimeUnit.SECONDS));
            }
            return all;
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldMatchThePlainLoopForEveryWorkerCountLocalStepsAndRule() throws Exception {
        for (final VoteRule rule : VoteRule.values()) {
            for (final int n : new int[] {1, 3, 4}) {
                for (final int h : new int[] {1, 2, 5}) {
                    final String what = rule + " N=" + n + " H=" + h;
                    final List<double[]> expected = reference(n, h, rule);
                    final List<List<double[]>> workers = train(n, h, rule);
                    for (int r = 0; r < OUTER_ROUNDS; r++) {
                        final double[] first = workers.get(0).get(r);
                        for (final List<double[]> w : workers) {
                            assertArrayEquals(first, w.get(r), 0.0, what + ": workers differ after outer round " + r);
                        }
                        assertArrayEquals(expected.get(r), first, h == 1 ? 1e-14 : 0.0, what + ": outer round " + r);
                    }
                    assertNotEquals(expected.get(0)[0], network(h).params().getDouble(0), what + ": the parameters moved");
                }
            }
        }
    }

    @Test
    void shouldVoteOnlyEveryHSteps() throws Exception {
        final InProcessVoteHub hub = new InProcessVoteHub(1, VoteRule.MAJORITY, 1000);
        final MultiLayerNetwork net = network(4);
        final DLionAccumulator acc = DLion.attach(net, hub.exchange(0), settings(4));
        for (int s = 0; s < 10; s++) {
            net.fit(batch(0, s));
        }
        assertEquals(2, acc.stats().get(0).rounds());
        assertEquals(2, acc.round());
        assertEquals(10, acc.step());
        assertTrue(!acc.atOuterBoundary(), "two local steps into the third outer step");
    }

    @Test
    void shouldRejectBadSettingsNamingThem() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new LocalSteps().steps(0).conclude()).getMessage().contains("localSteps"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new LocalSteps().outerLrScale(0).conclude()).getMessage()
            .contains("outerLrScale"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new LocalSteps().outerBeta1(1).conclude()).getMessage()
            .contains("outerBeta1"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new LocalSteps().outerBeta2(-0.1).conclude()).getMessage()
            .contains("outerBeta2"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new LocalSteps().outerWeightDecay(-1).conclude()).getMessage()
            .contains("outerWeightDecay"));
    }
}
