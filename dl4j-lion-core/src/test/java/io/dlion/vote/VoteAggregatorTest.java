package io.dlion.vote;

import io.dlion.testing.TestBits;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class VoteAggregatorTest {

    private static final long[] LENGTHS = {0, 1, 7, 8, 63, 64, 65, 1000};

    static Stream<Integer> voterCounts() {
        return Stream.concat(IntStream.rangeClosed(1, 33).boxed(), Stream.of(48, 63, 64, 65, 100, 128, 255, 256, 1024));
    }

    @ParameterizedTest
    @MethodSource("voterCounts")
    void shouldCountAndVoteLikeNaiveReference(final int voters) {
        final Random random = new Random(1000 + voters);
        for (final long n : LENGTHS) {
            final long[][] votes = randomVotes(random, voters, n, 0.5);
            checkAgainstReference(votes, voters, n);
        }
    }

    @ParameterizedTest
    @MethodSource("voterCounts")
    void shouldProduceManyTiesWhenVotesAreBalanced(final int voters) {
        final Random random = new Random(77 + voters);
        final long n = 200;
        final long[][] votes = new long[voters][TestBits.words(n)];
        for (long j = 0; j < n; j++) {
            final int plus = (voters & 1) == 0 && j % 3 != 0 ? voters / 2 : random.nextInt(voters + 1);
            for (int v = 0; v < voters; v++) {
                TestBits.set(votes[v], j, v < plus);
            }
        }
        final int ties = checkAgainstReference(votes, voters, n);
        if ((voters & 1) == 0) {
            assertEquals(true, ties >= 2 * n / 3 - 1, "ties " + ties);
        }
    }

    @ParameterizedTest
    @MethodSource("voterCounts")
    void shouldHandleAllEqualVotes(final int voters) {
        final long n = 130;
        for (final boolean value : new boolean[] {true, false}) {
            final long[][] votes = new long[voters][TestBits.words(n)];
            for (int v = 0; v < voters; v++) {
                for (long j = 0; j < n; j++) {
                    TestBits.set(votes[v], j, value);
                }
            }
            final long[] sign = new long[TestBits.words(n)];
            final long[] tie = new long[TestBits.words(n)];
            assertEquals(0, VoteAggregator.majority(votes, voters, 0, sign.length, sign, tie));
            for (long j = 0; j < n; j++) {
                assertEquals(value, TestBits.get(sign, j), "param " + j);
                assertFalse(TestBits.get(tie, j));
            }
            checkAgainstReference(votes, voters, n);
        }
    }

    @Test
    void shouldMatchReferenceOnALargeVector() {
        final long n = 100_003;
        final Random random = new Random(5);
        for (final int voters : new int[] {8, 9, 64}) {
            checkAgainstReference(randomVotes(random, voters, n, 0.5), voters, n);
        }
    }

    @ParameterizedTest
    @MethodSource("voterCounts")
    void shouldAggregateASubsetOfVotersInAnyOrder(final int voters) {
        final long n = 150;
        final Random random = new Random(31 + voters);
        final long[][] all = randomVotes(random, voters + 5, n, 0.5);
        final long[][] subset = new long[voters + 5][];
        for (int v = 0; v < voters + 5; v++) {
            subset[v] = all[voters + 4 - v];
        }
        checkAgainstReference(subset, voters, n);
    }

    @Test
    void shouldGiveTheSameResultChunkByChunk() {
        final Random random = new Random(9);
        final long n = 64 * 1000 + 17;
        final int words = TestBits.words(n);
        for (final int voters : new int[] {1, 4, 7, 8, 32, 33}) {
            final long[][] votes = randomVotes(random, voters, n, 0.5);
            final long[] sign = new long[words];
            final long[] tie = new long[words];
            final int ties = VoteAggregator.majority(votes, voters, 0, words, sign, tie);
            final int planes = VoteAggregator.planes(voters);
            final long[][] counts = new long[planes][words];
            VoteAggregator.count(votes, voters, 0, words, counts);

            final long[] chunkSign = new long[words];
            final long[] chunkTie = new long[words];
            final long[][] chunkCounts = new long[planes][words];
            int chunkTies = 0;
            final int[] bounds = {0, 1, 5, 300, 301, 999, words};
            for (int i = bounds.length - 2; i >= 0; i--) {
                chunkTies += VoteAggregator.majority(votes, voters, bounds[i], bounds[i + 1], chunkSign, chunkTie);
                VoteAggregator.count(votes, voters, bounds[i], bounds[i + 1], chunkCounts);
            }
            assertArrayEquals(sign, chunkSign);
            assertArrayEquals(tie, chunkTie);
            assertEquals(ties, chunkTies);
            for (int b = 0; b < planes; b++) {
                assertArrayEquals(counts[b], chunkCounts[b]);
            }
        }
    }

    @Test
    void shouldLeaveWordsOutsideTheChunkUntouched() {
        final long[][] votes = randomVotes(new Random(3), 6, 640, 0.5);
        final long[] sign = new long[10];
        final long[] tie = new long[10];
        Arrays.fill(sign, 0x5555L);
        Arrays.fill(tie, 0x5555L);
        VoteAggregator.majority(votes, 6, 3, 7, sign, tie);
        for (final int w : new int[] {0, 1, 2, 7, 8, 9}) {
            assertEquals(0x5555L, sign[w]);
            assertEquals(0x5555L, tie[w]);
        }
    }

    @Test
    void shouldRejectBadArguments() {
        final long[][] votes = new long[2][2];
        assertThrows(IllegalArgumentException.class, () -> VoteAggregator.planes(0));
        assertThrows(IllegalArgumentException.class, () -> VoteAggregator.planes(VoteAggregator.MAX_VOTERS + 1));
        assertThrows(IllegalArgumentException.class, () -> VoteAggregator.majority(votes, 2, 0, 2, new long[2], null));
        assertThrows(IllegalArgumentException.class, () -> VoteAggregator.majority(votes, 3, 0, 2, new long[2], null));
        assertThrows(IllegalArgumentException.class, () -> VoteAggregator.majority(votes, 1, 0, 3, new long[3], null));
        assertThrows(IllegalArgumentException.class, () -> VoteAggregator.count(votes, 2, 0, 2, new long[1][2]));
        assertEquals(1, VoteAggregator.planes(1));
        assertEquals(2, VoteAggregator.planes(3));
        assertEquals(3, VoteAggregator.planes(4));
        assertEquals(7, VoteAggregator.planes(64));
        assertEquals(8, VoteAggregator.planes(255));
        assertEquals(9, VoteAggregator.planes(256));
        assertEquals(11, VoteAggregator.planes(1024));
    }

    private static long[][] randomVotes(final Random random, final int voters, final long n, final double pPlus) {
        final long[][] votes = new long[voters][];
        for (int v = 0; v < voters; v++) {
            votes[v] = new long[TestBits.words(n)];
            for (long j = 0; j < n; j++) {
                TestBits.set(votes[v], j, random.nextDouble() < pPlus);
            }
        }
        return votes;
    }

    /** @return the number of ties; asserts majority and count against a per-parameter loop. */
    private static int checkAgainstReference(final long[][] votes, final int voters, final long n) {
        final int words = TestBits.words(n);
        final long[] sign = new long[words];
        final long[] tie = (voters & 1) == 0 ? new long[words] : null;
        final int ties = VoteAggregator.majority(votes, voters, 0, words, sign, tie);
        final int planes = VoteAggregator.planes(voters);
        final long[][] counts = new long[planes][words];
        VoteAggregator.count(votes, voters, 0, words, counts);
        int expectedTies = 0;
        for (long j = 0; j < (long) words * 64; j++) {
            int k = 0;
            if (j < n) {
                for (int v = 0; v < voters; v++) {
                    k += TestBits.get(votes[v], j) ? 1 : 0;
                }
            }
            final boolean expectedTie = j < n && 2 * k == voters;
            expectedTies += expectedTie ? 1 : 0;
            assertEquals(j < n && 2 * k > voters, TestBits.get(sign, j), "sign of param " + j + " N=" + voters + " n=" + n);
            if (tie != null) {
                assertEquals(expectedTie, TestBits.get(tie, j), "tie of param " + j + " N=" + voters + " n=" + n);
            }
            int decoded = 0;
            for (int b = 0; b < planes; b++) {
                decoded |= (TestBits.get(counts[b], j) ? 1 : 0) << b;
            }
            assertEquals(k, decoded, "count of param " + j + " N=" + voters + " n=" + n);
        }
        assertEquals(expectedTies, ties, "ties N=" + voters + " n=" + n);
        return ties;
    }
}
