package io.dlion.aeron.client;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.Lion;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.Topology;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.server.Payload;
import io.dlion.aeron.wire.GradientChunkFlyweight;
import io.dlion.dense.DenseWorker;
import io.dlion.exchange.RoundTimes;
import org.agrona.CloseHelper;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.learning.config.IUpdater;
import org.nd4j.linalg.lossfunctions.LossFunctions;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Dense data-parallel training (the baseline): {@link AggregationServer} of {@link Payload#FP32} and {@link AeronMeanExchange} over a real
 * embedded media driver (IPC), and {@link DenseWorker} on real DL4J models. Expected values come from a plain double
 * loop and from a single DL4J model with the same updater.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DenseDataParallelTest {
    private static final String IPC = "aeron:ipc?mtu=8k";
    private static final int JOB = 9;
    private static final int ROUNDS = 4;

    private final List<AutoCloseable> open = new ArrayList<>();
    private final ConcurrentLinkedQueue<Throwable> serverErrors = new ConcurrentLinkedQueue<>();
    private ExecutorService pool;

    @AfterEach
    void tearDown() throws Exception {
        if (pool != null) {
            pool.shutdownNow();
        }
        for (int i = open.size() - 1; i >= 0; i--) {
            CloseHelper.quietClose(open.get(i));
        }
        assertTrue(serverErrors.isEmpty(), () -> "server errors: " + serverErrors);
    }

    /** One server (the star), and three slice servers (sharded: a reduce-scatter, then an all-gather). */
    @ParameterizedTest(name = "{0} slice server(s)")
    @ValueSource(ints = {1, 3})
    void shouldAverageEveryChunkInDoubleLikeAPlainLoop(final int slices) throws Exception {
        final int workers = 3;
        final int params = 3 * 1280 + 7;   // three full chunks and a short one
        final List<AeronMeanExchange> exchanges = launch(workers, params, slices);
        final SplittableRandom random = new SplittableRandom(7);
        final float[][][] sent = new float[ROUNDS][workers][params];
        for (int r = 0; r < ROUNDS; r++) {
            for (int w = 0; w < workers; w++) {
                for (int j = 0; j < params; j++) {
                    // magnitudes from 1e-6 to 1e3, so that the order and precision of the sum matter
                    sent[r][w][j] = (float) ((random.nextDouble() - 0.5) * Math.pow(10, random.nextInt(-6, 4)));
                }
            }
        }
        final List<float[][]> received = runRounds(exchanges, w -> {
            final float[][] means = new float[ROUNDS][];
            for (int r = 0; r < ROUNDS; r++) {
                exchanges.get(w).submit(r, sent[r][w]);
                means[r] = exchanges.get(w).await(r, 60_000).clone();
            }
            return means;
        });
        for (int r = 0; r < ROUNDS; r++) {
            final float[] expected = new float[params];
            for (int j = 0; j < params; j++) {
                double sum = 0;
                for (int w = 0; w < workers; w++) {
                    sum += sent[r][w][j];
                }
                expected[j] = (float) (sum / workers);
            }
            for (int w = 0; w < workers; w++) {
                assertArrayEquals(expected, received.get(w)[r], "round " + r + ", worker " + w);
            }
        }
        final long framesPerWorker = 4L * ROUNDS;
        final long expectedUp = (3 * 5184 + 96) * (long) ROUNDS;  // 3 full frames of 5,184 bytes, the tail 32 + 32 + 28 -> 96
        assertEquals(expectedUp, exchanges.get(0).counters().bytesUp(), framesPerWorker + " gradient frames, headers and padding counted");
        // a mean frame carries the voter set (one word) after the header: 5,192 bytes padded to 5,216, the tail 100 to 128
        final long expectedDown = (3 * 5216 + 128) * (long) ROUNDS;
        assertEquals(expectedDown, exchanges.get(0).counters().bytesDown(), "mean frames are gradient frames and a voter set");
    }

    @Test
    void shouldGiveBackTheGradientWhenEveryWorkerSendsTheSame() throws Exception {
        final int workers = 5;
        final int params = 2_000;
        final List<AeronMeanExchange> exchanges = launch(workers, params);
        final float[] gradient = new float[params];
        final SplittableRandom random = new SplittableRandom(3);
        for (int j = 0; j < params; j++) {
            gradient[j] = (float) (random.nextGaussian() * 1e-3) + (j == 0 ? Float.MIN_VALUE : 0);
        }
        final List<float[][]> received = runRounds(exchanges, w -> {
            exchanges.get(w).submit(0, gradient);
            return new float[][] {exchanges.get(w).await(0, 60_000).clone()};
        });
        for (int w = 0; w < workers; w++) {
            assertArrayEquals(gradient, received.get(w)[0], "worker " + w);
        }
    }

    /**
     * Rounds 100 to 399 in three windows of 100: a round that allocates allocates in every window, while a one-off (a class
     * loaded, a method deoptimized on a busy machine) lands in one; so one window must allocate less than 16 bytes a round.
     */
    @Test
    void shouldAllocateNothingPerRoundInSubmitAwaitAndTheRoundTimes() throws Exception {
        final int workers = 2;
        final int params = 5_000;
        final int windows = 3;
        final List<AeronMeanExchange> exchanges = launch(workers, params);
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        final List<float[][]> allocated = runRounds(exchanges, w -> {
            final float[] gradient = new float[params];
            final float[] perWindow = new float[windows];
            final RoundTimes times = new RoundTimes();
            long before = 0;
            for (int r = 0; r < 100 * (windows + 1); r++) {
                if (r >= 100 && r % 100 == 0) {
                    final long now = threads.getThreadAllocatedBytes(Thread.currentThread().getId());
                    if (r > 100) {
                        perWindow[r / 100 - 2] = now - before;
                    }
                    before = now;
                }
                gradient[r % params] = r;
                final long start = System.nanoTime();
                times.packStarted(start);
                exchanges.get(w).submit(r, gradient);
                exchanges.get(w).await(r, 60_000);
                times.record(RoundTimes.Phase.WAIT, System.nanoTime() - start);
                times.roundDone(System.nanoTime());
            }
            perWindow[windows - 1] = threads.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
            return new float[][] {perWindow};
        });
        for (int w = 0; w < workers; w++) {
            final float[] perWindow = allocated.get(w)[0];
            float least = Float.MAX_VALUE;
            for (final float bytes : perWindow) {
                least = Math.min(least, bytes);
            }
            assertTrue(least < 100 * 16, "worker " + w + " allocated " + java.util.Arrays.toString(perWindow) + " bytes in three windows of 100 rounds");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"lion", "adamw"})
    void shouldEqualOneModelWithTheSameUpdaterWhenEveryWorkerHasTheSameBatch(final String updater) throws Exception {
        final int workers = 3;
        final MultiLayerNetwork single = model(updater);
        final INDArray initial = single.params().dup();
        for (int r = 0; r < ROUNDS; r++) {
            single.fit(batch(r, 0));
        }
        final List<float[][]> params = train(workers, updater, (round, worker) -> batch(round, 0));
        final float[] expected = single.params().dup().data().asFloat();
        assertFalse(java.util.Arrays.equals(initial.data().asFloat(), expected), "the single model trained");
        for (int w = 0; w < workers; w++) {
            assertArrayEquals(expected, params.get(w)[0], "worker " + w + " equals the single " + updater + " model bit for bit");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"lion", "adamw"})
    void shouldKeepEveryWorkerBitIdenticalWithDifferentBatches(final String updater) throws Exception {
        final int workers = 3;
        final List<float[][]> params = train(workers, updater, (round, worker) -> batch(round, worker));
        final MultiLayerNetwork alone = model(updater);
        for (int r = 0; r < ROUNDS; r++) {
            alone.fit(batch(r, 0));
        }
        assertFalse(java.util.Arrays.equals(alone.params().dup().data().asFloat(), params.get(0)[0]),
            "the mean of different batches is not worker 0's gradient");
        for (int w = 1; w < workers; w++) {
            assertArrayEquals(params.get(0)[0], params.get(w)[0], "worker " + w + " equals worker 0");
        }
        assertEquals(ROUNDS - 1, (long) params.get(0)[1][0], "compute is recorded from the second round on");
        assertEquals(ROUNDS, (long) params.get(0)[1][1], "pack, wait and apply every round");
    }

    /** Each worker trains its own model with a DenseWorker; returns per worker {params, {compute count, wait count}}. */
    private List<float[][]> train(final int workers, final String updater, final BatchOf batches) throws Exception {
        final MultiLayerNetwork probe = model(updater);
        final List<AeronMeanExchange> exchanges = launch(workers, (int) probe.numParams());
        return runRounds(exchanges, w -> {
            final MultiLayerNetwork net = model(updater);
            final DenseWorker worker = DenseWorker.attach(net, exchanges.get(w), 60_000, 0);
            for (int r = 0; r < ROUNDS; r++) {
                net.fit(batches.of(r, w));
            }
            assertEquals(ROUNDS, worker.round());
            final RoundTimes times = worker.times();
            return new float[][] {net.params().dup().data().asFloat(),
                {times.count(RoundTimes.Phase.COMPUTE), times.count(RoundTimes.Phase.WAIT)}};
        });
    }

    private interface BatchOf {
        DataSet of(int round, int worker);
    }

    private interface Worker {
        float[][] run(int worker) throws Exception;
    }

    private List<float[][]> runRounds(final List<AeronMeanExchange> exchanges, final Worker body) throws Exception {
        pool = Executors.newFixedThreadPool(exchanges.size());
        final List<Future<float[][]>> futures = new ArrayList<>();
        for (int w = 0; w < exchanges.size(); w++) {
            final int id = w;
            futures.add(pool.submit(() -> body.run(id)));
        }
        final List<float[][]> results = new ArrayList<>();
        for (final Future<float[][]> f : futures) {
            results.add(f.get(100, TimeUnit.SECONDS));
        }
        return results;
    }

    private List<AeronMeanExchange> launch(final int workers, final int params) {
        return launch(workers, params, 1);
    }

    /** The job on one embedded driver over IPC: {@code slices} dense servers, slice s on streams 1881 + 2s and 1882 + 2s. */
    private List<AeronMeanExchange> launch(final int workers, final int params, final int slices) {
        final AeronRuntime runtime = AeronRuntime.launch(new AeronRuntime.Context());
        open.add(runtime);
        final long[] bounds = Topology.sliceBounds(params, slices, GradientChunkFlyweight.CHUNK_WORDS);
        final List<SliceEndpoint> endpoints = new ArrayList<>();
        for (int s = 0; s < slices; s++) {
            final AggregationServer server = AggregationServer.launch(new AggregationServer.Context().payload(Payload.FP32)
                .aeron(runtime.aeron()).jobId(JOB).workers(workers).paramCount(params).windowChunks(2)
                .slice(s).paramRange(bounds[s], bounds[s + 1])
                .voteChannel(IPC).voteStreamId(1881 + 2 * s).resultChannel(IPC).resultStreamId(1882 + 2 * s).errorHandler(serverErrors::add));
            open.add(server);
            endpoints.add(new SliceEndpoint(s, bounds[s], s == slices - 1 ? -1 : bounds[s + 1], IPC, 1881 + 2 * s, IPC, 1882 + 2 * s));
        }
        final List<AeronMeanExchange> exchanges = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            final AeronMeanExchange exchange = new AeronMeanExchange(new AeronMeanExchange.Context()
                .aeron(runtime.aeron()).jobId(JOB).workers(workers).workerId(w).paramCount(params).slices(endpoints));
            open.add(exchange);
            exchanges.add(exchange);
        }
        return exchanges;
    }

    private static MultiLayerNetwork model(final String updater) {
        final IUpdater u = "lion".equals(updater) ? new Lion(1e-3) : new Adam(1e-2);
        final MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder()
            .seed(42).dataType(DataType.FLOAT).updater(u)
            .list()
            .layer(new DenseLayer.Builder().nIn(8).nOut(16).activation(Activation.TANH).weightDecay(0.05).build())
            .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(16).nOut(3).activation(Activation.SOFTMAX).build())
            .build());
        net.init();
        return net;
    }

    /** A batch of 6 examples that depends on the round and the worker only. */
    private static DataSet batch(final int round, final int worker) {
        final SplittableRandom random = new SplittableRandom(1000L * round + worker);
        final float[][] x = new float[6][8];
        final float[][] y = new float[6][3];
        for (int i = 0; i < 6; i++) {
            for (int j = 0; j < 8; j++) {
                x[i][j] = (float) random.nextGaussian();
            }
            y[i][random.nextInt(3)] = 1;
        }
        return new DataSet(Nd4j.create(x), Nd4j.create(y));
    }
}
