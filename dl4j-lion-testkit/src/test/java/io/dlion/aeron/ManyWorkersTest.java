package io.dlion.aeron;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.exchange.VoteExchange;
import io.dlion.testkit.NaiveVote;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Jobs of many workers over Aeron IPC (an embedded driver, the servers and every worker in this JVM): MaVo and Avg equal
 * the naive per-parameter vote of {@link NaiveVote} at the worker counts around the voter set's word boundaries, in the
 * star and with a slice server per worker. Every worker submits its vote, then every worker awaits the result, on one
 * thread: the votes and the result of a round fit the publications' windows. Results cut into several frames at 1,024
 * workers are {@code ResultPublisherTest}'s.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ManyWorkersTest {
    /**
     * Three chunks of 20 words, the last one short: a round's result (11 count planes at 1,024 workers) fits the result
     * publication's window, so that the workers' results can be read one worker after the other.
     */
    private static final long PARAMS = 64 * 50 + 77;
    /** Sharded: a slice of at least one chunk per worker (66 chunks of 20 words at 65 workers). */
    private static final long SHARDED_PARAMS = 1300 * 64 + 77;

    @ParameterizedTest
    @CsvSource({
        "1, STAR", "63, STAR", "64, STAR", "65, STAR", "128, STAR", "255, STAR", "256, STAR", "9, SHARDED"})
    void shouldMatchTheNaiveVoteAtEveryWorkerCount(final int n, final Topology.Kind topology) throws Exception {
        for (final VoteRule rule : VoteRule.values()) {
            runAndCheck(n, topology, rule, topology == Topology.Kind.SHARDED ? SHARDED_PARAMS : PARAMS);
        }
    }

    /**
     * 1,024 workers in the star (voter sets of 16 words, 11 count planes), and 65 workers each serving a slice (4,225 vote
     * streams in the driver): a minute or two.
     */
    @Test
    @Tag("slow")
    void shouldMatchTheNaiveVoteWithOneThousandTwentyFourWorkersAndSixtyFiveSlices() throws Exception {
        for (final VoteRule rule : VoteRule.values()) {
            runAndCheck(1024, Topology.Kind.STAR, rule, PARAMS);
            runAndCheck(65, Topology.Kind.SHARDED, rule, SHARDED_PARAMS);
        }
    }

    private static void runAndCheck(final int n, final Topology.Kind topology, final VoteRule rule, final long params) throws Exception {
        try (LocalAeronJob job = LocalAeronJob.launch(new LocalAeronJob.Context()
            .jobId(7).workers(n).paramCount(params).rule(rule).topology(topology).chunkWords(20).windowChunks(2)
            .roundTimeoutNs(TimeUnit.SECONDS.toNanos(60)))) {
            final List<VoteExchange> exchanges = new ArrayList<>();
            for (int w = 0; w < n; w++) {
                exchanges.add(job.exchange(w));
                if (w % 32 == 31) {
                    // read the answers to the others' HELLOs, as a training worker does between rounds: they share the
                    // result stream, which waits for its slowest reader
                    for (final VoteExchange connected : exchanges) {
                        ((AeronVoteExchange)connected).pollIdle();
                    }
                }
            }
            for (long round = 0; round < 2; round++) {
                final long[][] votes = NaiveVote.randomVotes(31L * n + round + rule.ordinal(), n, params);
                for (int w = 0; w < n; w++) {
                    exchanges.get(w).submit(round, votes[w], params);
                }
                RoundResult first = null;
                for (int w = 0; w < n; w++) {
                    final RoundResult result = exchanges.get(w).await(round, 60_000);
                    assertEquals(round, result.round());
                    if (first == null) {
                        NaiveVote.assertMatches(votes, params, rule, result);
                        first = result;
                    } else if (rule == VoteRule.MAJORITY) {
                        assertArrayEquals(first.sign(), result.sign(), "worker " + w + ": the same signs");
                        assertEquals(first.voterSet(), result.voterSet(), "worker " + w + ": the same voters");
                    } else {
                        assertArrayEquals(first.countPlanes(), result.countPlanes(), "worker " + w + ": the same counts");
                    }
                }
                // the server sets its counters after it published the round's last chunk: a worker can have it first
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (job.serverCounters().rounds().get() < round + 1 && System.nanoTime() - deadline < 0) {
                    Thread.sleep(1);
                }
                assertEquals(round + 1, job.serverCounters().rounds().get(), n + " workers, " + rule + ": rounds completed");
                assertEquals(n, job.serverCounters().votersLastRound().get(), n + " workers, " + rule + ", round " + round);
            }
        }
    }
}
