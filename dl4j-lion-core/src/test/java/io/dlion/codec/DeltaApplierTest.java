package io.dlion.codec;

import io.dlion.testing.TestBits;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoterSet;

class DeltaApplierTest {

    enum Type {
        FLOAT(DataType.FLOAT, 1e-6), DOUBLE(DataType.DOUBLE, 1e-14), HALF(DataType.FLOAT16, 2e-3);
        final DataType dataType;
        final double relTol;

        Type(final DataType dataType, final double relTol) {
            this.dataType = dataType;
            this.relTol = relTol;
        }
    }

    private static final int[] VOTERS = {1, 2, 3, 4, 5, 8, 9, 16, 33, 48, 64, 65, 255, 256, 1024};
    private static final long[] LENGTHS = {1, 7, 8, 63, 64, 65, 1000};

    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldAddScaledMajorityAndAverageLikeNaiveReference(final Type type) {
        final Random random = new Random(17);
        try (DeltaApplier applier = new DeltaApplier()) {
            for (final int voters : VOTERS) {
                for (final long n : LENGTHS) {
                    final long[][] votes = votes(random, voters, n);
                    final int words = TestBits.words(n);
                    final long[] sign = new long[words];
                    final long[] tie = (voters & 1) == 0 ? new long[words] : null;
                    VoteAggregator.majority(votes, voters, 0, words, sign, tie);
                    check(applier, type, RoundResult.majority(0, n, voters, VoterSet.all(voters), sign, tie), votes, random, 0, n);
                    final long[][] planes = new long[VoteAggregator.planes(voters)][words];
                    VoteAggregator.count(votes, voters, 0, words, planes);
                    check(applier, type, RoundResult.average(0, n, voters, VoterSet.all(voters), planes), votes, random, 0, n);
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldTouchOnlyTheRangeForUnalignedRanges(final Type type) {
        final Random random = new Random(23);
        final long n = 1000;
        final long[][] ranges = {{0, 1}, {3, 4}, {5, 13}, {7, 71}, {64, 128}, {65, 999}, {500, 1000}, {999, 1000}, {10, 10}};
        try (DeltaApplier applier = new DeltaApplier()) {
            for (final int voters : new int[] {3, 4, 7}) {
                final long[][] votes = votes(random, voters, n);
                final int words = TestBits.words(n);
                final long[] sign = new long[words];
                final long[] tie = (voters & 1) == 0 ? new long[words] : null;
                VoteAggregator.majority(votes, voters, 0, words, sign, tie);
                final long[][] planes = new long[VoteAggregator.planes(voters)][words];
                VoteAggregator.count(votes, voters, 0, words, planes);
                for (final long[] range : ranges) {
                    check(applier, type, RoundResult.majority(0, n, voters, VoterSet.all(voters), sign, tie), votes, random, range[0], range[1]);
                    check(applier, type, RoundResult.average(0, n, voters, VoterSet.all(voters), planes), votes, random, range[0], range[1]);
                }
            }
        }
    }

    @Test
    void shouldApplyALargeVectorAcrossChunks() {
        final Random random = new Random(29);
        final long n = DeltaApplier.CHUNK_WORDS * 64L + 1001;
        final int voters = 6;
        final long[][] votes = votes(random, voters, n);
        final int words = TestBits.words(n);
        final long[] sign = new long[words];
        final long[] tie = new long[words];
        VoteAggregator.majority(votes, voters, 0, words, sign, tie);
        try (DeltaApplier applier = new DeltaApplier()) {
            check(applier, Type.FLOAT, RoundResult.majority(0, n, voters, VoterSet.all(voters), sign, tie), votes, random, 17, n - 5);
        }
    }

    @Test
    void shouldIgnoreTheSignBitUnderATie() {
        final long n = 16;
        final long[] sign = {-1L};
        final long[] tie = new long[1];
        TestBits.set(tie, 2, true);
        final INDArray update = Nd4j.create(DataType.DOUBLE, n);
        try (DeltaApplier applier = new DeltaApplier()) {
            applier.addScaled(RoundResult.majority(0, n, 2, VoterSet.all(2), sign, tie), update, 0, n, 0.5);
        }
        final double[] expected = new double[(int) n];
        Arrays.fill(expected, 0.5);
        expected[2] = 0;
        assertArrayEquals(expected, update.toDoubleVector());
    }

    @Test
    void shouldAcceptRowVectorsAndRejectBadRanges() {
        final long n = 100;
        final long[] sign = new long[2];
        TestBits.set(sign, 99, true);
        final INDArray row = Nd4j.create(DataType.FLOAT, 1, n);
        try (DeltaApplier applier = new DeltaApplier()) {
            final RoundResult result = RoundResult.majority(0, n, 1, VoterSet.all(1), sign, null);
            applier.addScaled(result, row, 98, 100, 2.0);
            assertEquals(-2.0, row.getDouble(0, 98));
            assertEquals(2.0, row.getDouble(0, 99));
            assertEquals(0.0, row.getDouble(0, 97));
            assertThrows(IllegalArgumentException.class, () -> applier.addScaled(result, row, 5, 101, 1.0));
            assertThrows(IllegalArgumentException.class, () -> applier.addScaled(result, row, 6, 5, 1.0));
            assertThrows(IllegalArgumentException.class, () -> applier.addScaled(result, Nd4j.create(DataType.INT32, n), 0, 5, 1.0));
        }
    }

    /**
     * A round whose word ranges counted different voters (a worker dropped mid-round): each parameter gets
     * (2k - V) / V with the V of its own segment, k counted over the first V workers' votes. The reference is a
     * plain loop over the raw votes; the count planes are built bit by bit.
     */
    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldApplyEachSegmentOfAnAverageResultWithItsOwnVoterCount(final Type type) {
        final Random random = new Random(31);
        final long n = 1000;
        final int[][][] cases = {
            {{0, 3}, {3, 2}},
            {{0, 5, 9}, {5, 4, 2}},
            {{0, 1, 15}, {2, 7, 3}},
        };
        final long[][] ranges = {{0, 1000}, {0, 192}, {191, 193}, {192, 193}, {150, 700}, {5, 995}, {320, 576}, {577, 578},
            {959, 1000}, {10, 10}};
        try (DeltaApplier applier = new DeltaApplier()) {
            for (final int[][] segments : cases) {
                final int[] starts = segments[0];
                final int[] counts = segments[1];
                final long[][] votes = votes(random, Arrays.stream(counts).max().getAsInt(), n);
                final RoundResult result = RoundResult.averageSegments(3, n, VoterSet.all(7), naivePlanes(votes, n, starts, counts), starts, counts);
                assertEquals(starts.length, result.segmentCount());
                for (final long[] range : ranges) {
                    checkSegments(applier, type, result, votes, starts, counts, random, range[0], range[1]);
                }
            }
        }
    }

    @Test
    void shouldApplySegmentsAcrossApplierChunks() {
        final Random random = new Random(37);
        final long n = DeltaApplier.CHUNK_WORDS * 64L + 1001;
        final int[] starts = {0, 100, DeltaApplier.CHUNK_WORDS - 3, DeltaApplier.CHUNK_WORDS + 5};
        final int[] counts = {3, 2, 3, 1};
        final long[][] votes = votes(random, 3, n);
        final RoundResult result = RoundResult.averageSegments(0, n, VoterSet.all(3), naivePlanes(votes, n, starts, counts), starts, counts);
        try (DeltaApplier applier = new DeltaApplier()) {
            checkSegments(applier, Type.FLOAT, result, votes, starts, counts, random, 17, n - 5);
            checkSegments(applier, Type.DOUBLE, result, votes, starts, counts, random, 6399, (DeltaApplier.CHUNK_WORDS + 6) * 64L + 3);
        }
    }

    /** Count planes of (k over the first V_c voters of each parameter's segment c), set bit by bit. */
    private static long[][] naivePlanes(final long[][] votes, final long n, final int[] starts, final int[] counts) {
        final int max = Arrays.stream(counts).max().getAsInt();
        final long[][] planes = new long[32 - Integer.numberOfLeadingZeros(max)][TestBits.words(n)];
        for (long j = 0; j < n; j++) {
            final int k = count(votes, segmentVoters(starts, counts, j), j);
            for (int b = 0; b < planes.length; b++) {
                TestBits.set(planes[b], j, ((k >>> b) & 1) != 0);
            }
        }
        return planes;
    }

    private static int segmentVoters(final int[] starts, final int[] counts, final long j) {
        int c = 0;
        while (c + 1 < starts.length && (long) starts[c + 1] * 64 <= j) {
            c++;
        }
        return counts[c];
    }

    private static int count(final long[][] votes, final int voters, final long j) {
        int k = 0;
        for (int v = 0; v < voters; v++) {
            k += TestBits.get(votes[v], j) ? 1 : 0;
        }
        return k;
    }

    private static void checkSegments(final DeltaApplier applier, final Type type, final RoundResult result, final long[][] votes,
        final int[] starts, final int[] counts, final Random random, final long from, final long to) {
        final long n = result.paramCount();
        final double lr = 1e-3 * (1 + random.nextInt(9));
        final double[] start = new double[(int) n];
        for (int i = 0; i < n; i++) {
            start[i] = random.nextGaussian() * 1e-2;
        }
        final INDArray update = Nd4j.createFromArray(start).castTo(type.dataType);
        final double[] before = update.toDoubleVector();
        applier.addScaled(result, update, from, to, lr);
        final double[] after = update.toDoubleVector();
        for (int j = 0; j < n; j++) {
            if (j >= from && j < to) {
                final int voters = segmentVoters(starts, counts, j);
                final double delta = (2.0 * count(votes, voters, j) - voters) / voters;
                assertEquals(before[j] + lr * delta, after[j], type.relTol * (Math.abs(before[j]) + 2 * lr),
                    "segments " + Arrays.toString(starts) + " voters " + Arrays.toString(counts) + " j=" + j + " range [" + from + ", " + to + ")");
            } else {
                assertEquals(before[j], after[j], 0.0, "outside the range: j=" + j);
            }
        }
    }

    private static long[][] votes(final Random random, final int voters, final long n) {
        final long[][] votes = new long[voters][];
        for (int v = 0; v < voters; v++) {
            votes[v] = TestBits.random(random, n);
        }
        return votes;
    }

    /** Applies the result to a random update and compares with lr * Delta computed from the raw votes. */
    private static void check(final DeltaApplier applier, final Type type, final RoundResult result, final long[][] votes,
        final Random random, final long from, final long to) {
        final long n = result.paramCount();
        final double lr = 1e-3 * (1 + random.nextInt(9));
        final double[] start = new double[(int) n];
        for (int i = 0; i < n; i++) {
            start[i] = random.nextGaussian() * 1e-2;
        }
        final INDArray update = Nd4j.createFromArray(start).castTo(type.dataType);
        final double[] before = update.toDoubleVector();
        applier.addScaled(result, update, from, to, lr);
        final double[] after = update.toDoubleVector();
        final int voters = result.voters();
        for (int j = 0; j < n; j++) {
            double expected = before[j];
            if (j >= from && j < to) {
                int k = 0;
                for (int v = 0; v < voters; v++) {
                    k += TestBits.get(votes[v], j) ? 1 : 0;
                }
                final double delta;
                if (result.countPlanes() != null) {
                    delta = (2.0 * k - voters) / voters;
                } else {
                    delta = Integer.signum(2 * k - voters);
                }
                expected += lr * delta;
                assertEquals(expected, after[j], type.relTol * (Math.abs(before[j]) + 2 * lr),
                    result.rule() + " N=" + voters + " n=" + n + " j=" + j + " range [" + from + ", " + to + ")");
            } else {
                assertEquals(before[j], after[j], 0.0, "outside the range: j=" + j);
            }
        }
    }
}
