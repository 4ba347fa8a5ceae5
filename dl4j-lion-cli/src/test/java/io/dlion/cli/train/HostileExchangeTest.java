package io.dlion.cli.train;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.Lion;
import io.dlion.dist.DLionAccumulator;
import io.dlion.exchange.ExchangeCounters;
import io.dlion.exchange.InProcessVoteHub;
import io.dlion.exchange.VoteExchange;
import io.dlion.testkit.HostileExchange;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.lossfunctions.LossFunctions;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostileExchangeTest {

    /** Records what is submitted; never completes a round. */
    private static final class Recording implements VoteExchange {
        final List<long[]> submitted = new ArrayList<>();
        final ExchangeCounters counters = new ExchangeCounters();

        @Override
        public int workerId() {
            return 0;
        }

        @Override
        public int workers() {
            return 1;
        }

        @Override
        public void submit(final long round, final long[] signWords, final long paramCount) {
            submitted.add(signWords.clone());
        }

        @Override
        public RoundResult await(final long round, final long timeoutMillis) {
            throw new UnsupportedOperationException();
        }

        @Override
        public ExchangeCounters counters() {
            return counters;
        }

        @Override
        public void close() {
        }
    }

    /** Bit of parameter j in the packed layout, written out from RoundResult's description. */
    private static boolean bit(final long[] words, final long j) {
        final int byteInWord = (int) ((j >>> 3) & 7);
        final int bitInByte = 7 - (int) (j & 7);
        return ((words[(int) (j >>> 6)] >>> (8 * byteInWord + bitInByte)) & 1) != 0;
    }

    private static boolean anyBitAtOrPast(final long[] words, final long n) {
        for (long j = n; j < 64L * words.length; j++) {
            if (bit(words, j)) {
                return true;
            }
        }
        return false;
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 7, 8, 9, 15, 16, 17, 56, 63, 64, 65, 127, 128, 129, 203})
    void shouldInvertExactlyTheValidBitsAndKeepPaddingZero(final long n) {
        final Random random = new Random(n);
        final long[] honest = new long[(int) ((n + 63) >>> 6)];
        for (int w = 0; w < honest.length; w++) {
            honest[w] = random.nextLong();
        }
        final long[] original = honest.clone();
        final Recording sink = new Recording();
        new HostileExchange(sink, HostileExchange.Mode.INVERT, 1).submit(0, honest, n);
        final long[] forged = sink.submitted.get(0);
        assertArrayEquals(original, honest, "the caller's words are not touched");
        for (long j = 0; j < n; j++) {
            assertEquals(!bit(honest, j), bit(forged, j), "parameter " + j);
        }
        assertFalse(anyBitAtOrPast(forged, n), "padding bits must stay zero");
    }

    @Test
    void shouldSendSeededRandomBitsWithZeroPadding() {
        final long n = 10_007;
        final long[] honest = new long[(int) ((n + 63) >>> 6)];
        final Recording a = new Recording();
        final Recording b = new Recording();
        final Recording c = new Recording();
        final HostileExchange ha = new HostileExchange(a, HostileExchange.Mode.RANDOM, 5);
        final HostileExchange hb = new HostileExchange(b, HostileExchange.Mode.RANDOM, 5);
        final HostileExchange hc = new HostileExchange(c, HostileExchange.Mode.RANDOM, 6);
        for (int round = 0; round < 3; round++) {
            ha.submit(round, honest, n);
            hb.submit(round, honest, n);
            hc.submit(round, honest, n);
        }
        for (int round = 0; round < 3; round++) {
            assertArrayEquals(a.submitted.get(round), b.submitted.get(round), "same seed, same bits");
            assertFalse(Arrays.equals(a.submitted.get(round), c.submitted.get(round)), "another seed, other bits");
            assertFalse(anyBitAtOrPast(a.submitted.get(round), n));
            int ones = 0;
            for (long j = 0; j < n; j++) {
                ones += bit(a.submitted.get(round), j) ? 1 : 0;
            }
            // a fair coin: 5 standard deviations (sd = 50) around n / 2
            assertTrue(Math.abs(ones - n / 2.0) < 250, "ones " + ones + " of " + n);
        }
        assertFalse(Arrays.equals(a.submitted.get(0), a.submitted.get(1)), "new bits every round");
    }

    static MultiLayerNetwork tinyNet() {
        final MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder()
            .seed(3)
            .dataType(DataType.DOUBLE)
            .updater(new Lion(0.01))
            .list()
            .layer(new DenseLayer.Builder().nIn(5).nOut(4).activation(Activation.TANH).build())
            .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(4).nOut(3).activation(Activation.SOFTMAX).build())
            .build());
        net.init();
        return net;
    }

    static DataSet batch(final long seed) {
        final Random random = new Random(seed);
        final INDArray features = Nd4j.create(DataType.DOUBLE, 6, 5);
        final INDArray labels = Nd4j.zeros(DataType.DOUBLE, 6, 3);
        for (int i = 0; i < 6; i++) {
            for (int j = 0; j < 5; j++) {
                features.putScalar(i, j, random.nextGaussian());
            }
            labels.putScalar(i, random.nextInt(3), 1.0);
        }
        return new DataSet(features, labels);
    }

    /** Three workers on one hub, worker 0 optionally inverted; each trains 6 steps on its own batches. */
    private static List<double[]> train(final boolean hostile) throws Exception {
        final InProcessVoteHub hub = new InProcessVoteHub(3, VoteRule.MAJORITY, 30_000);
        final List<MultiLayerNetwork> nets = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            final MultiLayerNetwork net = tinyNet();
            final VoteExchange exchange = hostile && i == 0 ? new HostileExchange(hub.exchange(i), HostileExchange.Mode.INVERT, 0) : hub.exchange(i);
            DLionAccumulator.forModel(net, exchange, 30_000);
            nets.add(net);
        }
        final ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            final List<Future<?>> running = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                final int id = i;
                running.add(pool.submit(() -> {
                    for (int s = 0; s < 6; s++) {
                        nets.get(id).fit(batch(100L * id + s));
                    }
                    return null;
                }));
            }
            for (final Future<?> f : running) {
                f.get(50, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        final List<double[]> params = new ArrayList<>();
        for (final MultiLayerNetwork net : nets) {
            params.add(net.params().toDoubleVector());
        }
        return params;
    }

    @Test
    void shouldKeepAllWorkersBitIdenticalWithOneInvertedWorkerOfThree() throws Exception {
        final List<double[]> hostile = train(true);
        for (final double[] p : hostile) {
            assertArrayEquals(hostile.get(0), p, 0.0);
        }
        final List<double[]> honest = train(false);
        assertFalse(Arrays.equals(honest.get(0), hostile.get(0)), "the inverted votes changed the result");
    }

    private static TrainConfig config(final Sharing sharing, final int workers) {
        return TrainConfigs.of("fashion-mnist", null, "mlp", "lion", sharing, workers, "inproc", 1, 120, Double.NaN, 0, 1, 0, 0, 60,
            Path.of("out"));
    }

    @Test
    void shouldValidateTheHostileOptions() {
        assertEquals("D-Lion MaVo x5, 2 hostile (random)", TrainConfigs.hostile(config(Sharing.DLION_MAVO, 5), 2, "random").label());
        assertEquals("D-Lion Avg x5", TrainConfigs.hostile(config(Sharing.DLION_AVG, 5), 0, "invert").label());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> TrainConfigs.hostile(config(Sharing.DLION_MAVO, 5), 5, "invert"))
            .getMessage().startsWith("--hostile "));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> TrainConfigs.hostile(config(Sharing.DLION_MAVO, 5), -1, "invert"))
            .getMessage().startsWith("--hostile "));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> TrainConfigs.hostile(config(Sharing.NONE, 1), 1, "invert"))
            .getMessage().startsWith("--hostile "));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> TrainConfigs.hostile(config(Sharing.DLION_MAVO, 5), 1, "flip"))
            .getMessage().startsWith("--hostile-mode "));
    }
}
