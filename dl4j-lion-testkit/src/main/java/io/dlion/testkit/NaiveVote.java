package io.dlion.testkit;

import java.util.SplittableRandom;

import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import io.dlion.vote.VoterSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Test reference: per-parameter vote on the packed layout, one bit at a time, independent of the production code. */
public final class NaiveVote {
    private NaiveVote() {
    }

    public static boolean bit(final long[] words, final long j) {
        final int word = (int)(j >>> 6);
        final int byteInWord = (int)((j >>> 3) & 7);
        final int bitInByte = 7 - (int)(j & 7);
        return ((words[word] >>> (byteInWord * 8 + bitInByte)) & 1) != 0;
    }

    public static long[][] randomVotes(final long seed, final int workers, final long params) {
        final SplittableRandom random = new SplittableRandom(seed);
        final int words = (int)((params + 63) >>> 6);
        final long[][] votes = new long[workers][words];
        for (final long[] vote : votes) {
            for (int w = 0; w < words; w++) {
                vote[w] = random.nextLong();
            }
            for (long j = params; j < (long)words << 6; j++) {
                vote[words - 1] &= ~(1L << (((j >>> 3) & 7) * 8 + 7 - (j & 7)));
            }
        }
        return votes;
    }

    public static int count(final long[][] votes, final long j) {
        int count = 0;
        for (final long[] vote : votes) {
            count += bit(vote, j) ? 1 : 0;
        }
        return count;
    }

    /** Assert a result equals the naive vote of every parameter, its voters being workers 0 to votes.length - 1. */
    public static void assertMatches(final long[][] votes, final long params, final VoteRule rule, final RoundResult result) {
        final int n = votes.length;
        assertEquals(n, result.voters(), "voters");
        for (int w = 0; w < n; w++) {
            assertEquals(true, result.voterSet().contains(w), "voter " + w);
        }
        assertEquals(n, result.voterSet().count(), "voter count of the voter set");
        assertEachParam(votes, params, rule, result);
    }

    /**
     * Assert a result equals the naive vote of exactly the workers its voter set names, whatever their ids (a round
     * without a dropped or dead worker counts, say, workers 0, 1 and 3).
     *
     * @param voteOf the vote of a worker in the result's round.
     */
    public static void assertMatchesItsVoters(final RoundResult result, final long params, final VoteRule rule,
        final java.util.function.IntFunction<long[]> voteOf) {
        final VoterSet voters = result.voterSet();
        final long[][] votes = new long[voters.count()][];
        int k = 0;
        for (int w = voters.next(0); w >= 0; w = voters.next(w + 1)) {
            votes[k++] = voteOf.apply(w);
        }
        assertEquals(votes.length, result.voters(), "voters");
        assertEachParam(votes, params, rule, result);
    }

    private static void assertEachParam(final long[][] votes, final long params, final VoteRule rule, final RoundResult result) {
        final int n = votes.length;
        assertEquals(rule, result.rule(), "rule");
        if (rule == VoteRule.MAJORITY && (n & 1) == 1) {
            assertNull(result.tie(), "tie must be null for an odd number of voters");
        }
        for (long j = 0; j < params; j++) {
            final int k = count(votes, j);
            if (rule == VoteRule.MAJORITY) {
                final boolean tie = 2 * k == n;
                if ((n & 1) == 0) {
                    assertEquals(tie, bit(result.tie(), j), "tie of param " + j);
                }
                assertEquals(2 * k > n, bit(result.sign(), j), "sign of param " + j);
            } else {
                int got = 0;
                for (int p = 0; p < result.countPlanes().length; p++) {
                    got |= (bit(result.countPlanes()[p], j) ? 1 : 0) << p;
                }
                assertEquals(k, got, "count of param " + j);
            }
        }
    }

    /** Build the reference result of one round bit by bit. */
    public static RoundResult reference(final long round, final long[][] votes, final long params, final VoteRule rule) {
        final int n = votes.length;
        final int words = (int)((params + 63) >>> 6);
        final VoterSet mask = new VoterSet(n);
        for (int w = 0; w < n; w++) {
            mask.add(w);
        }
        if (rule == VoteRule.MAJORITY) {
            final long[] sign = new long[words];
            final long[] tie = (n & 1) == 0 ? new long[words] : null;
            for (long j = 0; j < params; j++) {
                final int k = count(votes, j);
                if (2 * k > n) {
                    set(sign, j);
                } else if (2 * k == n) {
                    set(tie, j);
                }
            }
            return RoundResult.majority(round, params, n, mask, sign, tie);
        }
        final int planes = 32 - Integer.numberOfLeadingZeros(n);
        final long[][] counts = new long[planes][words];
        for (long j = 0; j < params; j++) {
            final int k = count(votes, j);
            for (int p = 0; p < planes; p++) {
                if (((k >>> p) & 1) != 0) {
                    set(counts[p], j);
                }
            }
        }
        return RoundResult.average(round, params, n, mask, counts);
    }

    private static void set(final long[] words, final long j) {
        words[(int)(j >>> 6)] |= 1L << (((j >>> 3) & 7) * 8 + 7 - (j & 7));
    }
}
