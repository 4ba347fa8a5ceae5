package io.dlion.aeron;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.exchange.VoteExchange;
import io.dlion.testkit.NaiveVote;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one-JVM facade: N worker threads each create and use their exchange; results equal a naive vote. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LocalAeronJobTest {
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
        "IPC, STAR, MAJORITY, 1, 3, 50003",
        "UDP, STAR, MAJORITY, 1, 3, 50003",
        "IPC, STAR, MAJORITY, 2, 4, 150000",
        "IPC, STAR, AVERAGE, 1, 3, 20001",
        "IPC, SHARDED, MAJORITY, 3, 3, 50003",
        "UDP, SHARDED, MAJORITY, 3, 3, 50003",
        "UDP, SHARDED, AVERAGE, 4, 4, 20001"
    })
    void shouldMatchNaiveVoteFromWorkerThreads(final LocalAeronJob.Transport transport, final Topology.Kind topology, final VoteRule rule,
        final int slices, final int n, final long params) throws Exception {
        final int rounds = 3;
        try (LocalAeronJob job = LocalAeronJob.launch(new LocalAeronJob.Context()
            .jobId(5).workers(n).paramCount(params).rule(rule).transport(transport).topology(topology).slices(slices))) {
            pool = Executors.newFixedThreadPool(n);
            final List<Future<long[]>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                final int id = i;
                futures.add(pool.submit(() -> {
                    final VoteExchange exchange = job.exchange(id);
                    assertEquals(id, exchange.workerId());
                    assertEquals(n, exchange.workers());
                    final long[] digests = new long[rounds];
                    for (int r = 0; r < rounds; r++) {
                        exchange.submit(r, SyntheticVotes.vote(3, r, id, params), params);
                        final RoundResult result = exchange.await(r, 10_000);
                        // a result is valid until the next submit: check it now
                        NaiveVote.assertMatches(votes(r, n, params), params, rule, result);
                        digests[r] = SyntheticVotes.digest(result);
                    }
                    return digests;
                }));
            }
            final List<long[]> all = new ArrayList<>();
            for (final Future<long[]> future : futures) {
                all.add(future.get(20, TimeUnit.SECONDS));
            }
            for (int r = 0; r < rounds; r++) {
                for (int i = 1; i < n; i++) {
                    assertEquals(all.get(0)[r], all.get(i)[r], "worker " + i + " round " + r);
                }
            }
            assertEquals(slices, job.slices().size());
            final boolean workersServe = topology == Topology.Kind.SHARDED && transport == LocalAeronJob.Transport.UDP;
            assertEquals(workersServe, job.topology() != null, "the workers serve the slices in the sharded topology over UDP only");
            for (int s = 0; s < slices; s++) {
                assertEquals(workersServe ? s : -1, job.servingRank(s), "the rank serving slice " + s);
                assertEquals(rounds, job.serverCounters(s).rounds().get(), "rounds of slice " + s);
                assertEquals(0, job.serverCounters(s).rejectedTotal(), "rejected by slice " + s);
            }
            assertNull(job.serverError());
        }
    }

    private static long[][] votes(final int round, final int n, final long params) {
        final long[][] votes = new long[n][];
        for (int i = 0; i < n; i++) {
            votes[i] = SyntheticVotes.vote(3, round, i, params);
        }
        return votes;
    }

    @Test
    void shouldRefuseASecondExchangeForOneWorkerAndIdsOutOfRange() {
        final LocalAeronJob job = LocalAeronJob.launch(new LocalAeronJob.Context().jobId(6).workers(1).paramCount(1000));
        try {
            final VoteExchange exchange = job.exchange(0);
            assertThrows(IllegalStateException.class, () -> job.exchange(0));
            assertThrows(IllegalArgumentException.class, () -> job.exchange(1));
            assertThrows(IllegalArgumentException.class, () -> job.exchange(-1));
            exchange.submit(0, new long[16], 1000);
            final long[] sign = assertDoesNotTimeOut(exchange);
            assertArrayEquals(new long[16], sign, "a single worker voting -1 everywhere gets -1 everywhere");
            job.close();
            assertThrows(IllegalStateException.class, () -> job.exchange(0));
        } finally {
            job.close();
        }
    }

    @Test
    void shouldNameTheWrongFieldOnConclude() {
        assertMessage("jobId", new LocalAeronJob.Context().workers(1).paramCount(10));
        assertMessage("workers", new LocalAeronJob.Context().jobId(1).workers(0).paramCount(10));
        assertMessage("workers", new LocalAeronJob.Context().jobId(1).workers(1025).paramCount(10));
        assertMessage("slices must be the workers",
            new LocalAeronJob.Context().jobId(1).workers(3).paramCount(64_000).topology(Topology.Kind.SHARDED).slices(2));
        assertMessage("topology", new LocalAeronJob.Context().jobId(1).workers(3).paramCount(10).topology(Topology.Kind.SERVERS));
        assertMessage("paramCount", new LocalAeronJob.Context().jobId(1).workers(2).paramCount(0));
        assertMessage("slices", new LocalAeronJob.Context().jobId(1).workers(2).paramCount(64_000).slices(2));
        assertMessage("roundTimeoutNs", new LocalAeronJob.Context().jobId(1).workers(2).paramCount(10).roundTimeoutNs(0));
        assertMessage("chunkWords", new LocalAeronJob.Context().jobId(1).workers(2).paramCount(10).chunkWords(7));
        assertMessage("aeronDirectoryName", new LocalAeronJob.Context().jobId(1).workers(2).paramCount(10).embeddedDriver(false));
        assertThrows(NullPointerException.class, () -> new LocalAeronJob.Context().jobId(1).workers(2).paramCount(10).transport(null).conclude());
    }

    private static long[] assertDoesNotTimeOut(final VoteExchange exchange) {
        try {
            final RoundResult result = exchange.await(0, 10_000);
            assertEquals(1, result.voters());
            return result.sign();
        } catch (final Exception ex) {
            throw new AssertionError(ex);
        }
    }

    private static void assertMessage(final String field, final LocalAeronJob.Context ctx) {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, ctx::conclude);
        assertTrue(ex.getMessage().startsWith(field), ex.getMessage());
    }
}
