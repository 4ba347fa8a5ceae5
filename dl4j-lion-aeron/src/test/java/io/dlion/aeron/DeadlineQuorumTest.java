package io.dlion.aeron;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.exchange.RoundResult;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.VoteRule;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Round deadline, dropping a silent worker, a late worker catching up on the broadcast, rejoining, and quorum loss. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DeadlineQuorumTest {
    private static final long PARAMS = 50_003;
    private static final long TIMEOUT_MS = 300;

    private final List<ExecutorService> threads = new ArrayList<>();
    private final List<VoteExchange> exchanges = new ArrayList<>();

    @AfterEach
    void tearDown() throws InterruptedException {
        for (final ExecutorService thread : threads) {
            thread.shutdownNow();
            thread.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldLeaveOutALateWorkerWhichThenAppliesTheRoundsItMissedAndRejoins() throws Exception {
        try (LocalAeronJob job = launch(3, 2)) {
            connect(job, 3);
            final ServerCounters counters = job.serverCounters();
            assertEquals(List.of(0b111L, 0b111L, 0b111L), masks(run(0, 0, 1, 2)), "round 0: everyone on time");

            final long start = System.nanoTime();
            final List<RoundResult> round1 = run(1, 0, 1);
            final long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(waitedMs >= TIMEOUT_MS - 20, "round 1 waited for the deadline: " + waitedMs + " ms");
            assertEquals(0b011L, round1.get(0).voterMask(), "worker 2 left out of round 1");
            NaiveVote.assertMatches(votesOf(1, 0, 1), PARAMS, VoteRule.MAJORITY, round1.get(0));
            assertEquals(1, counters.workersDropped().get(), "worker 2 dropped after " + waitedMs + " ms");

            final long start2 = System.nanoTime();
            final List<RoundResult> round2 = run(2, 0, 1);
            final long round2Ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start2);
            assertTrue(round2Ms < 5 * TIMEOUT_MS, "round 2 does not wait for the dropped worker: " + round2Ms + " ms");
            assertEquals(0b011L, round2.get(0).voterMask());

            final List<RoundResult> late = run(1, 2);
            assertEquals(SyntheticVotes.digest(round1.get(0)), SyntheticVotes.digest(late.get(0)), "the late worker applies round 1's Delta");
            assertEquals(SyntheticVotes.digest(round2.get(0)), SyntheticVotes.digest(run(2, 2).get(0)), "and round 2's");
            BadInputTest.awaitValue(counters.rejected(RejectReason.STALE_ROUND)::get, 2, "its votes of closed rounds refused (1 chunk each)");

            final Future<RoundResult> early = submitAndAwait(3, 2);
            BadInputTest.awaitValue(counters.workersRejoined()::get, 1, "worker 2 rejoins with an on-time vote");
            final List<RoundResult> round3 = run(3, 0, 1);
            assertEquals(0b111L, round3.get(0).voterMask(), "worker 2 votes again in round 3");
            NaiveVote.assertMatches(votesOf(3, 0, 1, 2), PARAMS, VoteRule.MAJORITY, round3.get(0));
            assertEquals(SyntheticVotes.digest(round3.get(0)), SyntheticVotes.digest(early.get(10, TimeUnit.SECONDS)));
        }
    }

    @Test
    void shouldAbortTheRoundWithAClearErrorWhenQuorumIsLost() throws Exception {
        try (LocalAeronJob job = launch(3, 2)) {
            connect(job, 3);
            final long start = System.nanoTime();
            final ExecutionException ex = assertThrows(ExecutionException.class, () -> submitAndAwait(0, 0).get(10, TimeUnit.SECONDS));
            final long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            final QuorumLostException lost = assertInstanceOf(QuorumLostException.class, ex.getCause());
            assertEquals(0, lost.round());
            assertEquals(0b001L, lost.voterMask());
            assertTrue(waitedMs >= TIMEOUT_MS - 20 && waitedMs < 10 * TIMEOUT_MS, "detected at the deadline: " + waitedMs + " ms");
            assertTrue(lost.getMessage().contains("quorum"), lost.getMessage());
            assertEquals(1, job.serverCounters().roundsAbandoned().get());
            assertEquals(2, job.serverCounters().workersDropped().get());
        }
    }

    private LocalAeronJob launch(final int workers, final int minVoters) {
        return LocalAeronJob.launch(new LocalAeronJob.Context().jobId(12).workers(workers).paramCount(PARAMS).minVoters(minVoters)
            .roundTimeoutNs(TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS)));
    }

    private void connect(final LocalAeronJob job, final int workers) throws Exception {
        final List<Future<VoteExchange>> futures = new ArrayList<>();
        for (int i = 0; i < workers; i++) {
            final ExecutorService thread = Executors.newSingleThreadExecutor();
            threads.add(thread);
            final int id = i;
            futures.add(thread.submit(() -> job.exchange(id)));
        }
        for (final Future<VoteExchange> future : futures) {
            exchanges.add(future.get(10, TimeUnit.SECONDS));
        }
    }

    private Future<RoundResult> submitAndAwait(final long round, final int worker) {
        final VoteExchange exchange = exchanges.get(worker);
        return threads.get(worker).submit(() -> {
            exchange.submit(round, SyntheticVotes.vote(7, round, worker, PARAMS), PARAMS);
            return exchange.await(round, 10_000);
        });
    }

    private List<RoundResult> run(final long round, final int... workers) throws Exception {
        final List<Future<RoundResult>> futures = new ArrayList<>();
        for (final int worker : workers) {
            futures.add(submitAndAwait(round, worker));
        }
        final List<RoundResult> results = new ArrayList<>();
        for (final Future<RoundResult> future : futures) {
            results.add(future.get(15, TimeUnit.SECONDS));
        }
        for (final RoundResult result : results) {
            assertEquals(SyntheticVotes.digest(results.get(0)), SyntheticVotes.digest(result), "every worker applies the same Delta");
        }
        return results;
    }

    private static long[][] votesOf(final long round, final int... workers) {
        final long[][] votes = new long[workers.length][];
        for (int i = 0; i < workers.length; i++) {
            votes[i] = SyntheticVotes.vote(7, round, workers[i], PARAMS);
        }
        return votes;
    }

    private static List<Long> masks(final List<RoundResult> results) {
        final List<Long> masks = new ArrayList<>();
        for (final RoundResult result : results) {
            masks.add(result.voterMask());
        }
        return masks;
    }
}
