package io.dlion.aeron;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.client.RejoinRequiredException;
import io.dlion.aeron.server.ServerCounters;
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
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A worker restarts while the others keep training: its new exchange says HELLO(JOIN_ROUND), the server announces its
 * first round R and a donor to every worker, the donor hands over its state as of the start of round R (here a chain
 * digest of every result it applied, standing in for the parameters), and from round R on all three vote again and
 * hold the same state. No round waits for a deadline.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JoinTest {
    private static final long PARAMS = 40_003;
    private static final int ROUNDS = 20;
    private static final int KILLED_AFTER = 3;

    private final List<ExecutorService> threads = new ArrayList<>();

    @AfterEach
    void tearDown() throws InterruptedException {
        for (final ExecutorService thread : threads) {
            thread.shutdownNow();
            thread.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /** What a donor hands over: the round the joining worker votes in first and the state at its start. */
    private record Handover(long round, long state) {
    }

    @Test
    void shouldBringARestartedWorkerToTheJobsStateWhileTheOthersKeepTraining() throws Exception {
        try (LocalAeronJob job = LocalAeronJob.launch(new LocalAeronJob.Context().jobId(21).workers(3).paramCount(PARAMS).minVoters(2)
            .chunkWords(100).roundTimeoutNs(TimeUnit.SECONDS.toNanos(5)))) {
            final CompletableFuture<Handover> handover = new CompletableFuture<>();
            final List<Future<Worker>> running = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                final int id = i;
                final ExecutorService thread = Executors.newSingleThreadExecutor();
                threads.add(thread);
                running.add(thread.submit(() -> {
                    final Worker w = new Worker(job.exchange(id));
                    if (id < 2) {
                        w.run(0, ROUNDS, handover);
                        return w;
                    }
                    w.run(0, KILLED_AFTER, handover);
                    // the process dies and a new one starts: no state, no round
                    final AeronVoteExchange restarted = job.rejoin(id);
                    final JoinNotice notice = restarted.awaitJoin(10_000);
                    final Worker again = new Worker(restarted);
                    again.notice = notice;
                    while (!handover.isDone()) {
                        restarted.pollIdle();
                        Thread.onSpinWait();
                    }
                    final Handover h = handover.get();
                    assertEquals(notice.round(), h.round, "the donor handed over the state of the announced round");
                    again.state = h.state;
                    again.run(notice.round(), ROUNDS, handover);
                    return again;
                }));
            }
            final Worker w0 = running.get(0).get(40, TimeUnit.SECONDS);
            final Worker w1 = running.get(1).get(40, TimeUnit.SECONDS);
            final Worker w2 = running.get(2).get(40, TimeUnit.SECONDS);

            final long first = w2.notice.round();
            assertEquals(0, w2.notice.donor(), "the lowest live worker is the donor");
            assertTrue(first > KILLED_AFTER && first < ROUNDS, "joined at round " + first);
            for (int r = 0; r < ROUNDS; r++) {
                assertEquals(w0.digests[r], w1.digests[r], "round " + r);
                final long expectedMask = r < KILLED_AFTER || r >= first ? 0b111L : 0b011L;
                assertEquals(expectedMask, w0.masks[r], "voters of round " + r);
                if (r >= first) {
                    assertEquals(w0.digests[r], w2.digests[r], "the rejoined worker applies round " + r + " like the others");
                }
            }
            assertEquals(w0.state, w1.state);
            assertEquals(w0.state, w2.state, "bit-identical state after the rejoin");
            final ServerCounters counters = job.serverCounters();
            assertEquals(1, counters.joinsAnnounced().get());
            assertEquals(0, counters.workersDropped().get(), "no round waited for a deadline");
            assertEquals(0, counters.roundsAbandoned().get());
            assertEquals(ROUNDS, counters.rounds().get());
        }
    }

    @Test
    void shouldTellAWorkerThatLostTheLastRoundInAServerRestartToRejoin() throws Exception {
        // a fresh server (as after a restart) where workers 0 and 1 had received all of round 4 and worker 2 had not
        try (LocalAeronJob job = LocalAeronJob.launch(new LocalAeronJob.Context().jobId(22).workers(3).paramCount(PARAMS).minVoters(2)
            .chunkWords(100).roundTimeoutNs(TimeUnit.SECONDS.toNanos(5)))) {
            final List<Future<Object>> running = new ArrayList<>();
            final long[] firstRound = {5, 5, 4};
            for (int i = 0; i < 3; i++) {
                final int id = i;
                final ExecutorService thread = Executors.newSingleThreadExecutor();
                threads.add(thread);
                running.add(thread.submit(() -> {
                    final VoteExchange exchange = job.exchange(id, firstRound[id]);
                    final long round = firstRound[id];
                    exchange.submit(round, SyntheticVotes.vote(5, round, id, PARAMS), PARAMS);
                    try {
                        return exchange.await(round, 20_000);
                    } catch (final RejoinRequiredException ex) {
                        return ex;
                    }
                }));
            }
            final RejoinRequiredException lagging = (RejoinRequiredException) running.get(2).get(30, TimeUnit.SECONDS);
            assertEquals(2, lagging.notice().worker());
            final long again = lagging.notice().round();
            assertTrue(again == 6 || again == 7, "the others' round 5 goes on without it; it votes again from the round after the"
                + " highest opened + 1 (6, or 7 when round 5 was open already): " + again);
            assertTrue(lagging.notice().donor() == 0 || lagging.notice().donor() == 1, "a live worker is the donor: " + lagging.notice());
            assertTrue(lagging.getMessage().contains("rejoin"), lagging.getMessage());
            final RoundResult r0 = (RoundResult) running.get(0).get(30, TimeUnit.SECONDS);
            final RoundResult r1 = (RoundResult) running.get(1).get(30, TimeUnit.SECONDS);
            assertEquals(0b011L, r0.voterSet().word(0), "round 5 counts the two workers that are up to date");
            NaiveVote.assertMatches(new long[][] {SyntheticVotes.vote(5, 5, 0, PARAMS), SyntheticVotes.vote(5, 5, 1, PARAMS)}, PARAMS,
                VoteRule.MAJORITY, r0);
            assertEquals(SyntheticVotes.digest(r0), SyntheticVotes.digest(r1));
            assertEquals(1, job.serverCounters().laggardsResynced().get());
            assertEquals(0, job.serverCounters().workersDropped().get(), "no deadline needed");
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

        void run(final long from, final long to, final CompletableFuture<Handover> handover) throws Exception {
            final List<JoinNotice> pending = new ArrayList<>();
            for (long r = from; r < to; r++) {
                // between rounds: a donor whose next round is the announced one hands over
                pending.addAll(exchange.takeJoinNotices());
                for (final JoinNotice n : pending) {
                    if (n.donor() == exchange.workerId() && n.round() == r) {
                        handover.complete(new Handover(r, state));
                    }
                }
                final long[] vote = SyntheticVotes.vote(5, r, exchange.workerId(), PARAMS);
                exchange.submit(r, vote, PARAMS);
                final RoundResult result = exchange.await(r, 20_000);
                final long round = r;
                NaiveVote.assertMatchesItsVoters(result, PARAMS, VoteRule.MAJORITY, w -> SyntheticVotes.vote(5, round, w, PARAMS));
                digests[(int) r] = SyntheticVotes.digest(result);
                masks[(int) r] = result.voterSet().word(0);
                state = state * 31 + digests[(int) r];
            }
        }
    }
}
