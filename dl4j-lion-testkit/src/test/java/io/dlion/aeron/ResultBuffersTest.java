package io.dlion.aeron;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.testkit.NaiveVote;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.vote.RoundResult;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.VoteRule;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The worker client assembles results in buffers allocated once: consecutive rounds over a real driver hand out the
 * same arrays, every round's result still equals the naive vote of that round, and a steady-state round allocates
 * nothing per chunk or per parameter on the worker's thread.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ResultBuffersTest {
    private static final long SEED = 41;

    private ExecutorService pool;

    @AfterEach
    void tearDown() throws InterruptedException {
        if (pool != null) {
            pool.shutdownNow();
            pool.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @ParameterizedTest
    @CsvSource({
        "MAJORITY, 1, 3, 200003",
        "MAJORITY, 1, 4, 200003",
        "MAJORITY, 2, 2, 300000",
        "AVERAGE, 1, 3, 200003",
        "AVERAGE, 2, 5, 100001"
    })
    void shouldReuseTheSameResultArraysInConsecutiveRoundsAndMatchTheNaiveVote(final VoteRule rule, final int slices, final int n,
        final long params) throws Exception {
        final int rounds = 4;
        try (LocalAeronJob job = LocalAeronJob.launch(new LocalAeronJob.Context()
            .jobId(12).workers(n).paramCount(params).rule(rule).slices(slices))) {
            pool = Executors.newFixedThreadPool(n);
            final List<Future<Integer>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                final int id = i;
                futures.add(pool.submit(() -> {
                    final VoteExchange exchange = job.exchange(id);
                    long[][] first = null;
                    for (int r = 0; r < rounds; r++) {
                        exchange.submit(r, SyntheticVotes.vote(SEED, r, id, params), params);
                        final RoundResult result = exchange.await(r, 20_000);
                        assertEquals(r, result.round());
                        NaiveVote.assertMatches(votes(r, n, params), params, rule, result);
                        final long[][] arrays = arrays(result);
                        if (first == null) {
                            first = arrays;
                        } else {
                            assertEquals(first.length, arrays.length, "round " + r + " has the arrays of round 0");
                            for (int a = 0; a < arrays.length; a++) {
                                assertSame(first[a], arrays[a], "worker " + id + " round " + r + ": result array " + a + " is reused");
                            }
                        }
                    }
                    return rounds;
                }));
            }
            for (final Future<Integer> future : futures) {
                assertEquals(rounds, future.get(40, TimeUnit.SECONDS));
            }
        }
    }

    /**
     * At 1M parameters one result vector is 125,000 bytes and a round has 16 chunks per worker; a round in steady state
     * allocates a few dozen bytes (the result object) on the worker's thread, nothing per chunk or per parameter.
     */
    @ParameterizedTest
    @CsvSource({
        "MAJORITY, 3",
        "MAJORITY, 4",
        "AVERAGE, 3"
    })
    void shouldAllocateNothingPerChunkOrParameterInASteadyStateRound(final VoteRule rule, final int n) throws Exception {
        final long params = 1_000_000;
        final int warmup = 8;
        final int measured = 20;
        final long bound = 1024;
        try (LocalAeronJob job = LocalAeronJob.launch(new LocalAeronJob.Context().jobId(13).workers(n).paramCount(params).rule(rule))) {
            pool = Executors.newFixedThreadPool(n);
            final List<Future<Long>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                final int id = i;
                futures.add(pool.submit(() -> {
                    final VoteExchange exchange = job.exchange(id);
                    final long[] vote = SyntheticVotes.vote(SEED, 0, id, params);
                    long before = 0;
                    for (int r = 0; r < warmup + measured; r++) {
                        if (r == warmup) {
                            before = allocatedBytes();
                        }
                        exchange.submit(r, vote, params);
                        assertNotNull(exchange.await(r, 20_000));
                    }
                    return (allocatedBytes() - before) / measured;
                }));
            }
            for (final Future<Long> future : futures) {
                final long perRound = future.get(40, TimeUnit.SECONDS);
                assertTrue(perRound < bound, "bytes allocated per round by a worker: " + perRound + ", expected < " + bound
                    + " (one result vector is " + params / 8 + ")");
            }
        }
    }

    private static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    private static long[][] votes(final int round, final int n, final long params) {
        final long[][] votes = new long[n][];
        for (int i = 0; i < n; i++) {
            votes[i] = SyntheticVotes.vote(SEED, round, i, params);
        }
        return votes;
    }

    /** @return every array a result refers to, in a fixed order. */
    private static long[][] arrays(final RoundResult result) {
        final List<long[]> arrays = new ArrayList<>();
        if (result.sign() != null) {
            arrays.add(result.sign());
        }
        if (result.tie() != null) {
            arrays.add(result.tie());
        }
        if (result.countPlanes() != null) {
            arrays.addAll(List.of(result.countPlanes()));
        }
        return arrays.toArray(new long[0][]);
    }
}
