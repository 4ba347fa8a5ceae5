package io.dlion.aeron;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.client.QuorumLostException;
import io.dlion.aeron.server.ServerCounters;
import io.dlion.exchange.VoteExchange;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.vote.RoundResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * A rejoin never lets a round complete below the quorum. Three workers, {@code minVoters} 3, a real server: after round
 * 0 (three voters) worker 2 restarts and joins again (HELLO with JOIN_ROUND), so the server stops waiting for it until
 * its first round. Workers 0 and 1 vote round 1: two voters, below the quorum, so the round is not voted; at its deadline
 * it is aborted (QuorumLostException on both) and no round ever completes with fewer than three voters.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JoinQuorumTest {
    private static final long PARAMS = 10_007;
    private final List<ExecutorService> threads = new ArrayList<>();

    @AfterEach
    void tearDown() throws InterruptedException {
        for (final ExecutorService thread : threads) {
            thread.shutdownNow();
            thread.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldNotCompleteARoundBelowTheQuorumWhileAWorkerRejoins() throws Exception {
        try (LocalAeronJob job = LocalAeronJob.launch(new LocalAeronJob.Context().jobId(23).workers(3).paramCount(PARAMS).minVoters(3)
            .chunkWords(100).roundTimeoutNs(TimeUnit.MILLISECONDS.toNanos(500)))) {
            final List<VoteExchange> exchanges = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                exchanges.add(job.exchange(i));
            }
            final List<Future<Object>> round0 = run(exchanges, 0);
            for (final Future<Object> f : round0) {
                assertEquals(0b111L, ((RoundResult) f.get(30, TimeUnit.SECONDS)).voterSet().word(0), "round 0 has three voters");
            }
            job.rejoin(2);
            final List<Future<Object>> round1 = run(exchanges.subList(0, 2), 1);
            for (final Future<Object> f : round1) {
                final QuorumLostException lost = assertInstanceOf(QuorumLostException.class, f.get(30, TimeUnit.SECONDS),
                    "round 1 has only two voters while worker 2 rejoins: below the quorum of 3, it must not complete");
                assertEquals(1, lost.round());
            }
            final ServerCounters counters = job.serverCounters();
            assertEquals(1, counters.rounds().get(), "only round 0 completed");
            assertEquals(3, counters.votersLastRound().get());
            assertEquals(1, counters.roundsAbandoned().get(), "round 1 aborted at its deadline");
            assertEquals(1, counters.joinsAnnounced().get());
        }
    }

    private List<Future<Object>> run(final List<VoteExchange> exchanges, final long round) {
        final List<Future<Object>> futures = new ArrayList<>();
        for (final VoteExchange exchange : exchanges) {
            final ExecutorService thread = Executors.newSingleThreadExecutor();
            threads.add(thread);
            futures.add(thread.submit(() -> {
                exchange.submit(round, SyntheticVotes.vote(9, round, exchange.workerId(), PARAMS), PARAMS);
                try {
                    return exchange.await(round, 20_000);
                } catch (final QuorumLostException ex) {
                    return ex;
                }
            }));
        }
        return futures;
    }
}
