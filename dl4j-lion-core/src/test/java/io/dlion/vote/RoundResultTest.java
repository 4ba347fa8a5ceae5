package io.dlion.vote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;


class RoundResultTest {
    private static final long N = 1000; // 16 words

    @Test
    void shouldDescribeOneSegmentForASingleCount() {
        final long[][] planes = new long[2][16];
        final RoundResult result = RoundResult.average(4, N, 3, VoterSet.all(3), planes);
        assertEquals(1, result.segmentCount());
        assertEquals(0, result.segmentStartWord(0));
        assertEquals(16, result.segmentEndWord(0));
        assertEquals(3, result.segmentVoters(0));
        assertEquals(3, result.votersAt(0));
        assertEquals(3, result.votersAt(N - 1));
        assertSame(planes, result.countPlanes());
        final RoundResult majority = RoundResult.majority(4, N, 2, VoterSet.all(2), new long[16], new long[16]);
        assertEquals(1, majority.segmentCount());
        assertEquals(2, majority.segmentVoters(0));
        assertThrows(IndexOutOfBoundsException.class, () -> majority.segmentVoters(1));
        assertThrows(IndexOutOfBoundsException.class, () -> majority.votersAt(N));
    }

    @Test
    void shouldMergeEqualNeighboursAndReportTheLargestCount() {
        final long[][] planes = new long[3][16];
        final RoundResult result = RoundResult.averageSegments(9, N, VoterSet.all(5), planes, new int[] {0, 2, 5, 7, 9}, new int[] {3, 3, 5, 2, 2});
        assertEquals(VoteRule.AVERAGE, result.rule());
        assertEquals(9, result.round());
        assertEquals(5, result.voters(), "the largest segment count");
        assertEquals(VoterSet.all(5), result.voterSet());
        assertEquals(3, result.segmentCount());
        assertEquals(0, result.segmentStartWord(0));
        assertEquals(5, result.segmentEndWord(0));
        assertEquals(5, result.segmentStartWord(1));
        assertEquals(7, result.segmentEndWord(1));
        assertEquals(7, result.segmentStartWord(2));
        assertEquals(16, result.segmentEndWord(2));
        assertEquals(3, result.segmentVoters(0));
        assertEquals(5, result.segmentVoters(1));
        assertEquals(2, result.segmentVoters(2));
        assertEquals(3, result.votersAt(319));
        assertEquals(5, result.votersAt(320));
        assertEquals(5, result.votersAt(447));
        assertEquals(2, result.votersAt(448));
        assertEquals(2, result.votersAt(N - 1));

        final RoundResult one = RoundResult.averageSegments(9, N, VoterSet.all(2), planes, new int[] {0, 4}, new int[] {2, 2});
        assertEquals(1, one.segmentCount(), "equal counts make one segment");
        assertEquals(2, one.voters());
    }

    @Test
    void shouldRejectBadSegments() {
        final long[][] planes = new long[2][16];
        assertThrows(IllegalArgumentException.class, () -> RoundResult.averageSegments(0, N, VoterSet.all(3), planes, new int[] {1, 4}, new int[] {3, 2}));
        assertThrows(IllegalArgumentException.class,
            () -> RoundResult.averageSegments(0, N, VoterSet.all(3), planes, new int[] {0, 4, 4}, new int[] {3, 2, 1}));
        assertThrows(IllegalArgumentException.class, () -> RoundResult.averageSegments(0, N, VoterSet.all(3), planes, new int[] {0, 16}, new int[] {3, 2}));
        assertThrows(IllegalArgumentException.class, () -> RoundResult.averageSegments(0, N, VoterSet.all(3), planes, new int[] {0, 4}, new int[] {3}));
        assertThrows(IllegalArgumentException.class, () -> RoundResult.averageSegments(0, N, VoterSet.all(3), planes, new int[0], new int[0]));
        assertThrows(IllegalArgumentException.class, () -> RoundResult.averageSegments(0, N, VoterSet.all(3), planes, new int[] {0, 4}, new int[] {3, 0}));
        assertThrows(IllegalArgumentException.class, () -> RoundResult.averageSegments(0, N, VoterSet.all(4), planes, new int[] {0, 4}, new int[] {3, 4}),
            "2 planes cannot hold a count of 4");
    }
}
