package io.dlion.aeron;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.exchange.JoinNotice;
import io.dlion.exchange.VoteExchange;
import io.dlion.testkit.NaiveVote;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A sharded job over UDP in one JVM runs on the worker processes' code path: every worker's exchange serves its own
 * slice, and when a rank dies its slice moves. Rank 2 of 4 is restarted by {@link LocalAeronJob#rejoin(int)} after round
 * {@value #KILLED_AFTER}: its exchange and its slice server close, the others find slice 2's server silent and rank 3
 * takes the slice over; the new exchange joins, its donor hands over its state (a chain digest of every result applied,
 * standing in for the parameters) as of the round it joins at, and from then on all four vote again. Every result equals
 * the naive vote of the workers it counts, every worker applies the same results, and all four end in the same state.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LocalAeronJobFailoverTest {
    private static final int WORKERS = 4;
    private static final int KILLED = 2;
    private static final int TAKER = 3;
    private static final long PARAMS = 40_003;
    private static final int ROUNDS = 16;
    private static final int KILLED_AFTER = 3;
    private static final long SEED = 9;
    private static final long AWAIT_MS = 60_000;

    private final List<ExecutorService> threads = new ArrayList<>();

    @AfterEach
    void tearDown() throws InterruptedException {
        for (final ExecutorService thread : threads) {
            thread.shutdownNow();
            thread.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldMoveADeadRanksSliceAndBringTheRestartedRankBackBitIdentical() throws Exception {
        try (LocalAeronJob job = LocalAeronJob.launch(new LocalAeronJob.Context().jobId(31).workers(WORKERS).paramCount(PARAMS)
            .chunkWords(100).topology(Topology.Kind.SHARDED).transport(LocalAeronJob.Transport.UDP)
            .roundTimeoutNs(TimeUnit.SECONDS.toNanos(5)).connectTimeoutNs(TimeUnit.SECONDS.toNanos(60)))) {
            final Topology topology = job.topology();
            assertNotNull(topology, "the workers serve the slices");
            assertEquals(WORKERS, topology.slices());
            for (int s = 0; s < WORKERS; s++) {
                assertNull(job.server(s), "no server before the workers connect: slice " + s);
            }
            // what a donor hands over, by the round it is of: the state at the start of that round. Each slice's server
            // announces the join, rounds apart; the joining worker joins at the latest, its donor hands over at each
            final Map<Long, Long> handover = new ConcurrentHashMap<>();
            // every worker has applied round KILLED_AFTER - 1 when rank 2 dies: none is left to rejoin for a lost result
            final CyclicBarrier applied = new CyclicBarrier(WORKERS);
            final List<Future<Worker>> running = new ArrayList<>();
            for (int i = 0; i < WORKERS; i++) {
                final int id = i;
                final ExecutorService thread = Executors.newSingleThreadExecutor();
                threads.add(thread);
                running.add(thread.submit(() -> {
                    final Worker w = new Worker(job.exchange(id));
                    w.run(0, KILLED_AFTER, handover);
                    applied.await(AWAIT_MS, TimeUnit.MILLISECONDS);
                    if (id != KILLED) {
                        w.run(KILLED_AFTER, ROUNDS, handover);
                        return w;
                    }
                    for (int s = 0; s < WORKERS; s++) {
                        assertEquals(s, job.servingRank(s), "every rank serves its own slice before the death: slice " + s);
                    }
                    // the process dies (its slice server with it) and a new one starts: no state, no round
                    final AeronVoteExchange restarted = job.rejoin(id);
                    final JoinNotice notice = restarted.awaitJoin(AWAIT_MS);
                    final Worker again = new Worker(restarted);
                    again.notice = notice;
                    while (!handover.containsKey(notice.round())) {
                        restarted.pollIdle();
                        Thread.onSpinWait();
                    }
                    again.state = handover.get(notice.round());
                    again.run(notice.round(), ROUNDS, handover);
                    return again;
                }));
            }
            final List<Worker> workers = new ArrayList<>();
            for (final Future<Worker> w : running) {
                workers.add(w.get(110, TimeUnit.SECONDS));
            }
            final Worker rejoined = workers.get(KILLED);
            final long first = rejoined.notice.round();
            assertTrue(first > KILLED_AFTER && first < ROUNDS, "joined at round " + first);
            assertTrue(rejoined.notice.donor() != KILLED, "a live worker is the donor: " + rejoined.notice);

            final Worker w0 = workers.get(0);
            for (int r = 0; r < ROUNDS; r++) {
                final long all = (1L << WORKERS) - 1;
                final long expectedMask = r < KILLED_AFTER || r >= first ? all : all & ~(1L << KILLED);
                assertEquals(expectedMask, w0.masks[r], "voters of round " + r);
                for (int i = 1; i < WORKERS; i++) {
                    if (i != KILLED || r >= first) {
                        assertEquals(w0.digests[r], workers.get(i).digests[r], "worker " + i + " applies round " + r + " as worker 0");
                    }
                }
            }
            for (int i = 1; i < WORKERS; i++) {
                assertEquals(w0.state, workers.get(i).state, "bit-identical state of worker " + i);
            }

            assertEquals(TAKER, job.servingRank(KILLED), "the dead rank's slice moved to the next live rank");
            assertEquals(TAKER, job.server(KILLED).context().servingRank());
            assertTrue(job.serverCounters(KILLED).rounds().get() >= ROUNDS - first,
                "the slice's new server ran the rounds after the join: " + job.serverCounters(KILLED).rounds().get());
            // the new server names the join the round every other slice names, whenever the restarted rank's join HELLO
            // reaches it (before or after the live workers' HELLOs): it never waits for the joiner in a round it does
            // not vote in, so no round counts it on some slices and not on others
            assertEquals(0, job.serverCounters(KILLED).workersDropped().get(), "the slice's new server waited for no one in vain");
            assertEquals(1, job.serverCounters(KILLED).joinsAnnounced().get(), "the slice's new server announced the join");
            for (int s = 0; s < WORKERS; s++) {
                if (s != KILLED) {
                    assertEquals(s, job.servingRank(s), "slice " + s + " stays with its rank");
                    assertEquals(ROUNDS, job.serverCounters(s).rounds().get(), "rounds of slice " + s);
                    assertEquals(1, job.serverCounters(s).joinsAnnounced().get(), "slice " + s + " announced the join");
                }
            }
            assertNull(job.serverError());
        }
    }

    /** A worker whose state is the chain of every result it applied; the donor hands it over when asked. */
    private static final class Worker {
        final VoteExchange exchange;
        final long[] digests = new long[ROUNDS];
        final long[] masks = new long[ROUNDS];
        long state = 17;
        JoinNotice notice;

        Worker(final VoteExchange exchange) {
            this.exchange = exchange;
        }

        void run(final long from, final long to, final Map<Long, Long> handover) throws Exception {
            final List<JoinNotice> pending = new ArrayList<>();
            for (long r = from; r < to; r++) {
                // between rounds: a donor whose next round is the announced one hands over
                pending.addAll(exchange.takeJoinNotices());
                for (final JoinNotice n : pending) {
                    if (n.donor() == exchange.workerId() && n.round() == r) {
                        handover.put(r, state);
                    }
                }
                exchange.submit(r, SyntheticVotes.vote(SEED, r, exchange.workerId(), PARAMS), PARAMS);
                final RoundResult result = exchange.await(r, AWAIT_MS);
                final long round = r;
                NaiveVote.assertMatchesItsVoters(result, PARAMS, VoteRule.MAJORITY, w -> SyntheticVotes.vote(SEED, round, w, PARAMS));
                digests[(int) r] = SyntheticVotes.digest(result);
                masks[(int) r] = result.voterSet().word(0);
                state = state * 31 + digests[(int) r];
            }
        }
    }
}
