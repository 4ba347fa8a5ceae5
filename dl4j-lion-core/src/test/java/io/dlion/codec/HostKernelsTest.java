package io.dlion.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import io.dlion.testing.TestBits;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoterSet;
import io.dlion.vote.VoteAggregator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * The CPU backend's host kernels of {@link SignPacker} and {@link DeltaApplier}, with and without the Vector API and for
 * several slice counts: packing against the rule one parameter at a time, applying against the device path (ND4J ops,
 * taken for a strided update) bit for bit.
 */
class HostKernelsTest {

    enum Type {
        FLOAT(DataType.FLOAT), DOUBLE(DataType.DOUBLE);
        final DataType dataType;

        Type(final DataType dataType) {
            this.dataType = dataType;
        }
    }

    private static final int[] SLICES = {1, 3, 8};
    private static final boolean[] VECTOR = {true, false};
    private static final long[] LENGTHS = {1, 7, 8, 9, 63, 64, 65, 1000, 100_003, 3 * 65_536 + 17};

    @Test
    void shouldRunWithTheVectorApiUnderSurefire() {
        assertTrue(KernelThreads.VECTOR_API, "Surefire's argLine adds jdk.incubator.vector, so both paths are tested");
        assertTrue(HostSignPacker.supportsType(DataType.FLOAT) && HostDeltaApplier.supports(Nd4j.create(DataType.FLOAT, 3)));
    }

    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldPackByTheRuleForEveryLengthSliceCountAndPath(final Type type) {
        final Random random = new Random(41);
        for (final long n : LENGTHS) {
            final double[] values = values(random, (int) n, type);
            final INDArray c = Nd4j.createFromArray(values).castTo(type.dataType);
            final double[] cast = c.toDoubleVector();
            for (final boolean vector : VECTOR) {
                for (final int slices : SLICES) {
                    try (SignPacker packer = new SignPacker(n, type.dataType, slices, vector)) {
                        for (final long round : new long[] {4, 7}) {
                            final long[] dst = new long[packer.words() + 1];
                            Arrays.fill(dst, -1L);
                            packer.pack(c, round, dst);
                            assertEquals(-1L, dst[packer.words()], "word past the vector untouched");
                            assertArrayEquals(expected(cast, round), Arrays.copyOf(dst, packer.words()),
                                type + " n=" + n + " vector=" + vector + " slices=" + slices + " round=" + round);
                        }
                    }
                }
            }
        }
    }

    /** Views at odd offsets into a row, so that FLOAT values straddle the 64-bit words the plain loop reads. */
    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldPackViewsAtOddOffsets(final Type type) {
        final Random random = new Random(43);
        final double[] all = values(random, 5000, type);
        final INDArray row = Nd4j.createFromArray(all).castTo(type.dataType).reshape(1, all.length);
        final double[] cast = row.toDoubleVector();
        for (final int offset : new int[] {1, 3, 64, 77}) {
            for (final int n : new int[] {5, 64, 129, 4000}) {
                final INDArray view = row.get(NDArrayIndex.point(0), NDArrayIndex.interval(offset, offset + n));
                for (final boolean vector : VECTOR) {
                    try (SignPacker packer = new SignPacker(n, type.dataType, 2, vector)) {
                        final long[] dst = new long[packer.words()];
                        packer.pack(view, 1, dst);
                        assertArrayEquals(expected(Arrays.copyOfRange(cast, offset, offset + n), 1), dst,
                            type + " offset=" + offset + " n=" + n + " vector=" + vector);
                    }
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldRefuseNonFiniteValuesAnywhereAndWriteNothing(final Type type) {
        final long n = 3 * 64 * HostSignPacker.CHUNK_WORDS + 37;
        for (final long at : new long[] {0, 63, 64 * HostSignPacker.CHUNK_WORDS + 5, n - 40, n - 1}) {
            for (final double bad : new double[] {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY}) {
                final INDArray c = Nd4j.rand(type.dataType, n).subi(0.5);
                c.putScalar(at, bad);
                c.putScalar((at + n / 2) % n, bad);
                for (final boolean vector : VECTOR) {
                    try (SignPacker packer = new SignPacker(n, type.dataType, 3, vector)) {
                        final long[] dst = new long[packer.words()];
                        final NonFiniteVoteException e = assertThrows(NonFiniteVoteException.class, () -> packer.pack(c, 9, dst));
                        assertEquals(2, e.nonFiniteCount(), type + " at " + at + " " + bad + " vector=" + vector);
                        assertArrayEquals(new long[packer.words()], dst, "nothing written");
                    }
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldApplyTheDevicePathsBitsForEveryRuleRangeSliceCountAndPath(final Type type) {
        final Random random = new Random(47);
        final long n = 3 * 64 * 64 + 1003;
        final long[][] ranges = {{0, n}, {7, 71}, {1, n - 1}, {n - 3, n}};
        for (final int voters : new int[] {1, 2, 3, 4, 8, 255, 256, 1024}) {
            final long[][] votes = new long[voters][];
            for (int v = 0; v < voters; v++) {
                votes[v] = TestBits.random(random, n);
            }
            final int words = TestBits.words(n);
            final long[] sign = new long[words];
            final long[] tie = (voters & 1) == 0 ? new long[words] : null;
            VoteAggregator.majority(votes, voters, 0, words, sign, tie);
            final long[][] planes = new long[VoteAggregator.planes(voters)][words];
            VoteAggregator.count(votes, voters, 0, words, planes);
            for (final RoundResult result : new RoundResult[] {RoundResult.majority(0, n, voters, VoterSet.all(voters), sign, tie),
                RoundResult.average(0, n, voters, VoterSet.all(voters), planes)}) {
                for (final long[] range : ranges) {
                    checkAgainstDevice(type, result, random, range[0], range[1]);
                }
            }
        }
    }

    @Test
    void shouldApplySegmentsOnTheHostLikeTheDevice() {
        final Random random = new Random(53);
        final long n = 70_000;
        final int[] starts = {0, 100, 700, 1000};
        final int[] counts = {3, 2, 9, 1};
        final long[][] votes = new long[9][];
        for (int v = 0; v < votes.length; v++) {
            votes[v] = TestBits.random(random, n);
        }
        final long[][] planes = new long[4][TestBits.words(n)];
        VoteAggregator.count(votes, 9, 0, TestBits.words(n), planes);
        final RoundResult result = RoundResult.averageSegments(0, n, VoterSet.all(9), planes, starts, counts);
        for (final Type type : Type.values()) {
            checkAgainstDevice(type, result, random, 0, n);
            checkAgainstDevice(type, result, random, 6_399, 64_003);
        }
    }

    @Test
    void shouldApplyToAViewAtAnOffsetAndLeaveTheRestAlone() {
        final Random random = new Random(59);
        final long n = 1000;
        final long[] sign = TestBits.random(random, n);
        final RoundResult result = RoundResult.majority(0, n, 1, VoterSet.all(1), sign, null);
        final INDArray buffer = Nd4j.create(DataType.FLOAT, 1, n + 20).assign(5);
        final INDArray view = buffer.get(NDArrayIndex.point(0), NDArrayIndex.interval(7, 7 + n));
        for (final boolean vector : VECTOR) {
            view.assign(0);
            try (DeltaApplier applier = new DeltaApplier(2, vector)) {
                applier.addScaled(result, view, 3, n, 0.25);
            }
            for (int j = 0; j < n; j++) {
                final double expected = j < 3 ? 0 : TestBits.get(sign, j) ? 0.25 : -0.25;
                assertEquals(expected, view.getDouble(j), 0.0, "j=" + j + " vector=" + vector);
            }
            assertEquals(5.0, buffer.getDouble(0, 6));
            assertEquals(5.0, buffer.getDouble(0, 7 + n));
        }
    }

    @Test
    void shouldAllocateNothingPerRound() {
        final com.sun.management.ThreadMXBean bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        final Random random = new Random(61);
        final long n = 4 * 65_536 + 100;
        final int words = TestBits.words(n);
        final long[][] votes = new long[8][];
        for (int v = 0; v < 8; v++) {
            votes[v] = TestBits.random(random, n);
        }
        final long[] sign = new long[words];
        final long[] tie = new long[words];
        VoteAggregator.majority(votes, 8, 0, words, sign, tie);
        final long[][] planes = new long[4][words];
        VoteAggregator.count(votes, 8, 0, words, planes);
        final RoundResult majority = RoundResult.majority(0, n, 8, VoterSet.all(8), sign, tie);
        final RoundResult average = RoundResult.average(0, n, 8, VoterSet.all(8), planes);
        final INDArray c = Nd4j.rand(DataType.FLOAT, n).subi(0.5);
        final INDArray update = Nd4j.create(DataType.FLOAT, n);
        final long[] dst = new long[words];
        for (final boolean vector : VECTOR) {
            try (SignPacker packer = new SignPacker(n, DataType.FLOAT, 4, vector); DeltaApplier applier = new DeltaApplier(4, vector)) {
                final Runnable round = () -> {
                    packer.pack(c, 3, dst);
                    applier.addScaled(majority, update, 0, n, 1e-4);
                    applier.addScaled(average, update, 5, n - 5, 1e-4);
                };
                for (int i = 0; i < 500; i++) {
                    round.run();
                }
                // three windows of 20 rounds: an allocation per round shows in every window; a one-off of the JVM's (a
                // compilation, a deoptimization while other processes load the cores: 248 bytes once in a CI run) in one
                final long[] ids = kernelThreadIds();
                long fewest = Long.MAX_VALUE;
                for (int window = 0; window < 3 && fewest > 0; window++) {
                    final long before = allocated(bean, ids);
                    for (int i = 0; i < 20; i++) {
                        round.run();
                    }
                    fewest = Math.min(fewest, allocated(bean, ids) - before);
                }
                assertEquals(0, fewest, "bytes allocated by 20 rounds in the quietest of three windows, vector=" + vector);
            }
        }
    }

    /** Apply on the host (both paths, several slice counts) and on the device path, from the same start: same bits. */
    private static void checkAgainstDevice(final Type type, final RoundResult result, final Random random, final long from, final long to) {
        final long n = result.paramCount();
        final double[] start = new double[(int) n];
        for (int i = 0; i < n; i++) {
            start[i] = random.nextGaussian() * 1e-2;
        }
        final double lr = 1e-3 * (1 + random.nextInt(9));
        final INDArray deviceBuffer = Nd4j.create(type.dataType, 2 * n);
        final INDArray device = deviceBuffer.get(NDArrayIndex.interval(0, 2, 2 * n));
        device.assign(Nd4j.createFromArray(start).castTo(type.dataType));
        try (DeltaApplier applier = new DeltaApplier()) {
            applier.addScaled(result, device, from, to, lr);
        }
        final long[] expected = bits(device.toDoubleVector());
        for (final boolean vector : VECTOR) {
            for (final int slices : SLICES) {
                final INDArray host = Nd4j.createFromArray(start).castTo(type.dataType);
                try (DeltaApplier applier = new DeltaApplier(slices, vector)) {
                    applier.addScaled(result, host, from, to, lr);
                }
                assertArrayEquals(expected, bits(host.toDoubleVector()), type + " " + result.rule() + " N=" + result.voters()
                    + " range [" + from + ", " + to + ") vector=" + vector + " slices=" + slices);
            }
        }
    }

    private static long[] bits(final double[] values) {
        final long[] out = new long[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = Double.doubleToRawLongBits(values[i]);
        }
        return out;
    }

    /** Gaussian values with zeros of both signs, the type's smallest subnormals and values near its largest. */
    private static double[] values(final Random random, final int n, final Type type) {
        final double tiny = type == Type.FLOAT ? Float.MIN_VALUE : Double.MIN_VALUE;
        final double huge = type == Type.FLOAT ? Float.MAX_VALUE : Double.MAX_VALUE;
        final double[] values = new double[n];
        for (int i = 0; i < n; i++) {
            switch (random.nextInt(12)) {
                case 0:
                    values[i] = 0.0;
                    break;
                case 1:
                    values[i] = -0.0;
                    break;
                case 2:
                    values[i] = random.nextBoolean() ? tiny : -tiny;
                    break;
                case 3:
                    values[i] = random.nextBoolean() ? huge : -huge;
                    break;
                default:
                    values[i] = random.nextGaussian();
            }
        }
        return values;
    }

    /** SignPacker's rule, one parameter at a time. */
    private static long[] expected(final double[] c, final long round) {
        final long[] words = new long[TestBits.words(c.length)];
        for (int j = 0; j < c.length; j++) {
            final boolean plus = c[j] > 0 || (c[j] == 0 && round % 2 == 0);
            TestBits.set(words, j, plus);
        }
        return words;
    }

    private static long[] kernelThreadIds() {
        final List<Long> ids = new ArrayList<>();
        ids.add(Thread.currentThread().getId());
        for (final Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("dlion-kernel-")) {
                ids.add(t.getId());
            }
        }
        return ids.stream().mapToLong(Long::longValue).toArray();
    }

    private static long allocated(final com.sun.management.ThreadMXBean bean, final long[] ids) {
        long sum = 0;
        for (final long id : ids) {
            sum += bean.getThreadAllocatedBytes(id);
        }
        return sum;
    }
}
