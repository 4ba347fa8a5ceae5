package io.dlion.exchange;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.dlion.testing.TestBits;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoteRule;

class InProcessVoteHubTest {

    private static final long PARAMS = 1000;

    @ParameterizedTest
    @ValueSource(ints = {1, 63, 64, 65, 128, 255, 256, 1024})
    void shouldGiveEveryWorkerTheNaiveMajorityAndCountForAnyWorkerCount(final int workers) throws Exception {
        for (final VoteRule rule : VoteRule.values()) {
            final InProcessVoteHub hub = new InProcessVoteHub(workers, rule, 60_000);
            final VoteExchange[] exchanges = new VoteExchange[workers];
            for (int w = 0; w < workers; w++) {
                exchanges[w] = hub.exchange(w);
            }
            final Random random = new Random(31L * workers + rule.ordinal());
            for (long round = 0; round < 2; round++) {
                final long[][] votes = new long[workers][];
                for (int w = 0; w < workers; w++) {
                    votes[w] = TestBits.random(random, PARAMS);
                    exchanges[w].submit(round, votes[w], PARAMS);
                }
                for (int w = 0; w < workers; w += Math.max(1, workers / 7)) {
                    checkAgainstNaiveVote(votes, rule, exchanges[w].await(round, 10_000));
                }
            }
            assertEquals(0, hub.partialRounds());
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, VoteAggregator.MAX_VOTERS + 1})
    void shouldRefuseWorkerCountsOutsideTheRange(final int workers) {
        assertThrows(IllegalArgumentException.class, () -> new InProcessVoteHub(workers, VoteRule.MAJORITY, 1000));
    }

    /** The result against a plain loop over the voters of every parameter. */
    private static void checkAgainstNaiveVote(final long[][] votes, final VoteRule rule, final RoundResult result) {
        final int n = votes.length;
        assertEquals(n, result.voters());
        assertEquals(n, result.voterSet().count());
        for (int w = 0; w < n; w++) {
            assertTrue(result.voterSet().contains(w), "voter " + w);
        }
        if (rule == VoteRule.MAJORITY && (n & 1) == 1) {
            assertNull(result.tie());
        }
        for (long j = 0; j < PARAMS; j++) {
            int k = 0;
            for (final long[] vote : votes) {
                k += TestBits.get(vote, j) ? 1 : 0;
            }
            if (rule == VoteRule.MAJORITY) {
                assertEquals(2 * k > n, TestBits.get(result.sign(), j), "sign of param " + j);
                if ((n & 1) == 0) {
                    assertEquals(2 * k == n, TestBits.get(result.tie(), j), "tie of param " + j);
                }
            } else {
                int got = 0;
                for (int p = 0; p < result.countPlanes().length; p++) {
                    got |= (TestBits.get(result.countPlanes()[p], j) ? 1 : 0) << p;
                }
                assertEquals(k, got, "count of param " + j);
            }
        }
    }
}
