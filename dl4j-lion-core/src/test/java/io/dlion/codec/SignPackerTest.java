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
import org.nd4j.linalg.indexing.NDArrayIndex;

class SignPackerTest {

    enum Type {
        FLOAT(DataType.FLOAT), DOUBLE(DataType.DOUBLE), HALF(DataType.FLOAT16);
        final DataType dataType;

        Type(final DataType dataType) {
            this.dataType = dataType;
        }
    }

    private static final long[] LENGTHS = {1, 7, 8, 9, 63, 64, 65, 1000, 100_003};

    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldPackSignsLikeNaiveReferenceOnBothParities(final Type type) {
        final Random random = new Random(7);
        for (final long n : LENGTHS) {
            final double[] values = new double[(int) n];
            for (int i = 0; i < n; i++) {
                values[i] = random.nextInt(5) == 0 ? 0.0 : random.nextGaussian();
            }
            final INDArray c = Nd4j.createFromArray(values).castTo(type.dataType);
            final double[] cast = c.toDoubleVector();
            try (SignPacker packer = new SignPacker(n, type.dataType)) {
                for (final long round : new long[] {0, 1, 6, 13}) {
                    final long[] dst = new long[packer.words() + 1];
                    Arrays.fill(dst, -1L);
                    packer.pack(c, round, dst);
                    assertEquals(-1L, dst[packer.words()], "word past the vector untouched");
                    assertArrayEquals(expected(cast, round), Arrays.copyOf(dst, packer.words()), type + " n=" + n + " round=" + round);
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldVoteAlternatelyForZeroSoThatAZeroParameterDoesNotDrift(final Type type) {
        final long n = 77;
        final INDArray c = Nd4j.create(type.dataType, n);
        c.putScalar(3, -0.0);
        c.putScalar(5, 1e-3);
        try (SignPacker packer = new SignPacker(n, type.dataType)) {
            long drift = 0;
            for (long round = 0; round < 10; round++) {
                final long[] dst = new long[packer.words()];
                packer.pack(c, round, dst);
                for (long j = 0; j < n; j++) {
                    final boolean plus = TestBits.get(dst, j);
                    if (j == 5) {
                        assertEquals(true, plus);
                    } else {
                        assertEquals(round % 2 == 0, plus, "zero at " + j + " round " + round);
                    }
                }
                drift += TestBits.get(dst, 0) ? 1 : -1;
                assertEquals(round % 2 == 0 ? 1 : 0, drift);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldPackSmallestMagnitudesBySign(final Type type) {
        final double tiny = type == Type.DOUBLE ? Double.MIN_VALUE : type == Type.FLOAT ? Float.MIN_VALUE : 0x1.0p-24;
        final INDArray c = Nd4j.createFromArray(new double[] {tiny, -tiny, 0, -0.0, tiny, -tiny, 0, -0.0, -tiny}).castTo(type.dataType);
        try (SignPacker packer = new SignPacker(9, type.dataType)) {
            for (final long round : new long[] {0, 1}) {
                final long[] dst = new long[1];
                packer.pack(c, round, dst);
                assertArrayEquals(expected(c.toDoubleVector(), round), dst, type + " round " + round);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldRefuseNanAndInfinityNamingRoundAndCount(final Type type) {
        for (final double bad : new double[] {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY}) {
            final long n = 70;
            final INDArray c = Nd4j.rand(type.dataType, n).subi(0.5);
            c.putScalar(3, bad);
            c.putScalar(68, bad);
            try (SignPacker packer = new SignPacker(n, type.dataType)) {
                final long[] dst = new long[2];
                final NonFiniteVoteException e = assertThrows(NonFiniteVoteException.class, () -> packer.pack(c, 42, dst));
                assertEquals(42, e.round());
                assertEquals(2, e.nonFiniteCount());
                assertEquals(n, e.paramCount());
                assertArrayEquals(new long[2], dst, "nothing written");
            }
        }
    }

    /** The device path's NaN/Inf check with its dot product cut into slices of 64: a bad value in any slice is caught. */
    @Test
    void shouldFindNonFiniteValuesInAnySliceOfTheCheck() {
        final long before = SignPacker.blasSlice;
        try {
            SignPacker.blasSlice = 64;
            for (final int at : new int[] {0, 63, 64, 77, 149}) {
                final INDArray all = Nd4j.rand(DataType.FLOAT, 300).subi(0.5);
                final INDArray strided = all.get(NDArrayIndex.interval(1, 2, 300));
                strided.putScalar(at, Float.NaN);
                try (SignPacker packer = new SignPacker(150, DataType.FLOAT)) {
                    final NonFiniteVoteException e = assertThrows(NonFiniteVoteException.class, () -> packer.pack(strided, 3, new long[3]));
                    assertEquals(1, e.nonFiniteCount(), "NaN at " + at);
                }
            }
            final INDArray finite = Nd4j.rand(DataType.FLOAT, 300).subi(0.5).get(NDArrayIndex.interval(1, 2, 300));
            try (SignPacker packer = new SignPacker(150, DataType.FLOAT)) {
                final long[] dst = new long[3];
                packer.pack(finite, 3, dst);
                assertArrayEquals(expected(finite.toDoubleVector(), 3), dst);
            }
        } finally {
            SignPacker.blasSlice = before;
        }
    }

    @Test
    void shouldAcceptLargeFiniteValuesWhoseSquaresOverflow() {
        final INDArray c = Nd4j.createFromArray(new float[] {3e38f, -3e38f, 1, -1, 0, 2e38f, 1e30f, -5, 1e38f});
        try (SignPacker packer = new SignPacker(9, DataType.FLOAT)) {
            final long[] dst = new long[1];
            packer.pack(c, 1, dst);
            assertArrayEquals(expected(c.toDoubleVector(), 1), dst);
        }
    }

    @Test
    void shouldPackViewsAndRows() {
        final Random random = new Random(3);
        final double[] values = new double[300];
        for (int i = 0; i < values.length; i++) {
            values[i] = random.nextGaussian();
        }
        final INDArray all = Nd4j.createFromArray(values).castTo(DataType.FLOAT).reshape(1, 300);
        final INDArray view = all.get(NDArrayIndex.point(0), NDArrayIndex.interval(13, 13 + 131));
        try (SignPacker packer = new SignPacker(131, DataType.FLOAT)) {
            final long[] dst = new long[packer.words()];
            packer.pack(view, 2, dst);
            assertArrayEquals(expected(Arrays.copyOfRange(values, 13, 13 + 131), 2), dst);
        }
        final INDArray strided = Nd4j.createFromArray(values).castTo(DataType.FLOAT).get(NDArrayIndex.interval(1, 2, 300));
        final double[] stridedValues = new double[150];
        for (int i = 0; i < 150; i++) {
            stridedValues[i] = values[1 + 2 * i];
        }
        try (SignPacker packer = new SignPacker(150, DataType.FLOAT)) {
            final long[] dst = new long[packer.words()];
            packer.pack(strided, 5, dst);
            assertArrayEquals(expected(stridedValues, 5), dst);
        }
        try (SignPacker packer = new SignPacker(300, DataType.FLOAT)) {
            final long[] dst = new long[packer.words()];
            packer.pack(all, 3, dst);
            assertArrayEquals(expected(all.toDoubleVector(), 3), dst);
        }
    }

    @Test
    void shouldRejectWrongLengthTypeAndZeroLengthIsANoOp() {
        try (SignPacker packer = new SignPacker(16, DataType.FLOAT)) {
            assertThrows(IllegalArgumentException.class, () -> packer.pack(Nd4j.create(DataType.FLOAT, 15), 0, new long[1]));
            assertThrows(IllegalArgumentException.class, () -> packer.pack(Nd4j.create(DataType.DOUBLE, 16), 0, new long[1]));
            assertThrows(IllegalArgumentException.class, () -> packer.pack(Nd4j.create(DataType.FLOAT, 16), 0, new long[0]));
        }
        assertThrows(IllegalArgumentException.class, () -> new SignPacker(16, DataType.INT32));
        try (SignPacker packer = new SignPacker(0, DataType.FLOAT)) {
            assertEquals(0, packer.words());
            packer.pack(Nd4j.create(DataType.FLOAT, 0), 0, new long[0]);
        }
    }

    /** The rule of SignPacker's javadoc, one parameter at a time. */
    private static long[] expected(final double[] c, final long round) {
        final long[] words = new long[TestBits.words(c.length)];
        for (int j = 0; j < c.length; j++) {
            final boolean plus = c[j] > 0 || (c[j] == 0 && round % 2 == 0);
            TestBits.set(words, j, plus);
        }
        return words;
    }
}
