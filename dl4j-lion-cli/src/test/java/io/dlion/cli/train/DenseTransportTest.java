package io.dlion.cli.train;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.Topology;
import io.dlion.exchange.MeanExchange;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A dense job in one JVM ({@link DenseTransport#local}): the sharded topology runs one slice server per worker and gives
 * every worker the mean a plain double loop gives, as the star does, over IPC and UDP.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DenseTransportTest {
    private static final int WORKERS = 3;
    private static final int PARAMS = 5 * 1280 + 7;   // five full dense chunks and a short one: slices of 1, 2 and 3 chunks
    private static final int ROUNDS = 3;

    @ParameterizedTest(name = "udp={0}")
    @ValueSource(booleans = {false, true})
    void shouldAverageLikeAPlainLoopWithASliceServerPerWorkerAsTheStarDoes(final boolean udp) throws Exception {
        final float[][][] gradients = new float[ROUNDS][WORKERS][PARAMS];
        final SplittableRandom random = new SplittableRandom(11);
        for (int r = 0; r < ROUNDS; r++) {
            for (int w = 0; w < WORKERS; w++) {
                for (int j = 0; j < PARAMS; j++) {
                    gradients[r][w][j] = (float) ((random.nextDouble() - 0.5) * Math.pow(10, random.nextInt(-6, 4)));
                }
            }
        }
        final float[][][] sharded = run(udp, Topology.Kind.SHARDED, gradients);
        final float[][][] star = run(udp, Topology.Kind.STAR, gradients);
        for (int r = 0; r < ROUNDS; r++) {
            final float[] expected = new float[PARAMS];
            for (int j = 0; j < PARAMS; j++) {
                double sum = 0;
                for (int w = 0; w < WORKERS; w++) {
                    sum += gradients[r][w][j];
                }
                expected[j] = (float) (sum / WORKERS);
            }
            for (int w = 0; w < WORKERS; w++) {
                assertArrayEquals(expected, sharded[r][w], "sharded, round " + r + ", worker " + w);
                assertArrayEquals(expected, star[r][w], "star, round " + r + ", worker " + w);
            }
        }
    }

    /** @return per round and worker the mean it received. */
    private static float[][][] run(final boolean udp, final Topology.Kind topology, final float[][][] gradients) throws Exception {
        final float[][][] means = new float[ROUNDS][WORKERS][];
        final ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
        try (DenseTransport transport = DenseTransport.local(udp, topology, WORKERS, PARAMS)) {
            assertEquals(topology == Topology.Kind.SHARDED ? WORKERS : 1, transport.slices(), topology + ": slice servers");
            final List<Future<Integer>> done = new ArrayList<>();
            for (int w = 0; w < WORKERS; w++) {
                final int id = w;
                done.add(pool.submit(() -> {
                    try (MeanExchange exchange = transport.exchange(id)) {
                        for (int r = 0; r < ROUNDS; r++) {
                            exchange.submit(r, gradients[r][id]);
                            means[r][id] = exchange.await(r, 60_000).clone();
                        }
                        return exchange.counters().rounds() == ROUNDS ? 1 : 0;
                    }
                }));
            }
            for (final Future<Integer> f : done) {
                assertEquals(1, f.get(100, TimeUnit.SECONDS), topology + ": every round counted");
            }
        } finally {
            pool.shutdownNow();
        }
        return means;
    }
}
