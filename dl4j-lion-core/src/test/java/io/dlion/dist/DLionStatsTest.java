package io.dlion.dist;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;

import org.junit.jupiter.api.Test;

import io.dlion.exchange.ExchangeCounters;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoterSet;
import io.dlion.testing.TestBits;

/** Alignment and tie rate of AVERAGE results against a plain loop over the raw votes, with one and with several voter counts. */
class DLionStatsTest {

    @Test
    void shouldMeasureAlignmentAndTiesSegmentBySegment() {
        final long n = 1001;
        final Random random = new Random(5);
        final long[][] votes = new long[4][];
        for (int v = 0; v < votes.length; v++) {
            votes[v] = TestBits.random(random, n);
        }
        check(votes, n, new int[] {0}, new int[] {4});
        check(votes, n, new int[] {0}, new int[] {3});
        check(votes, n, new int[] {0, 6}, new int[] {4, 3});
        check(votes, n, new int[] {0, 3, 10}, new int[] {2, 4, 3});
    }

    private static void check(final long[][] votes, final long n, final int[] starts, final int[] counts) {
        final int planes = 3;
        final long[][] countPlanes = new long[planes][TestBits.words(n)];
        double sum = 0;
        long ties = 0;
        for (long j = 0; j < n; j++) {
            int c = 0;
            while (c + 1 < starts.length && starts[c + 1] * 64L <= j) {
                c++;
            }
            final int voters = counts[c];
            int k = 0;
            for (int v = 0; v < voters; v++) {
                k += TestBits.get(votes[v], j) ? 1 : 0;
            }
            for (int b = 0; b < planes; b++) {
                TestBits.set(countPlanes[b], j, ((k >>> b) & 1) != 0);
            }
            final double delta = (2.0 * k - voters) / voters;
            sum += (TestBits.get(votes[0], j) ? 1 : -1) * delta;
            ties += 2 * k == voters ? 1 : 0;
        }
        final RoundResult result = RoundResult.averageSegments(0, n, VoterSet.all(4), countPlanes, starts, counts);
        final DLionStats stats = new DLionStats(0, new ExchangeCounters());
        stats.onRound(result, votes[0], 1);
        assertEquals(sum / n, stats.lastAlignment(), 1e-12, "alignment");
        assertEquals((double) ties / n, stats.lastTieRate(), 1e-15, "tie rate");
        assertEquals(result.voters(), stats.lastVoters());
    }
}
