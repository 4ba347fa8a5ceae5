package io.dlion.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * The sliced BLAS calls against one unsliced call and against a plain loop in double. The 2^31-element case
 * itself needs 16 GB of arrays, so the slice length is set small instead: every slice boundary, the short last
 * slice and the offset of a view are exercised the same way.
 */
class BlasSlicesTest {

    private static final int N = 10_007;

    @Test
    void axpyInSlicesEqualsOneCallAndTheDoubleLoop() {
        for (final DataType type : new DataType[] {DataType.FLOAT, DataType.DOUBLE}) {
            final double[] x = gaussian(N, 1);
            final double[] y = gaussian(N, 2);
            final double alpha = 0.37;
            final INDArray xs = Nd4j.createFromArray(x).castTo(type);
            final double[] xCast = xs.toDoubleVector();
            final double[] yCast = Nd4j.createFromArray(y).castTo(type).toDoubleVector();
            final INDArray once = Nd4j.createFromArray(y).castTo(type);
            BlasSlices.axpy(alpha, xs, once, BlasSlices.MAX_SLICE);
            for (final long slice : new long[] {1, 64, 1000, N - 1, BlasSlices.MAX_SLICE}) {
                final INDArray sliced = Nd4j.createFromArray(y).castTo(type);
                BlasSlices.axpy(alpha, xs, sliced, slice);
                final double[] got = sliced.toDoubleVector();
                final double[] one = once.toDoubleVector();
                for (int i = 0; i < N; i++) {
                    final double want = yCast[i] + alpha * xCast[i];
                    // fused or not: the two results differ by at most one rounding of alpha * x and one of the sum
                    final double ulps = type == DataType.FLOAT
                        ? Math.ulp((float) want) + Math.ulp((float) (alpha * xCast[i])) : Math.ulp(want) + Math.ulp(alpha * xCast[i]);
                    assertEquals(one[i], got[i], ulps, type + " slice " + slice + ": one call vs sliced at " + i);
                    assertEquals(want, got[i], 2 * ulps, type + " slice " + slice + ": double loop vs sliced at " + i);
                }
            }
        }
    }

    @Test
    void axpyOnViewsWithAnOffsetTouchesOnlyTheView() {
        final INDArray xAll = Nd4j.createFromArray(gaussian(3 * N, 3)).castTo(DataType.FLOAT).reshape(3, N);
        final INDArray yAll = Nd4j.createFromArray(gaussian(3 * N, 4)).castTo(DataType.FLOAT).reshape(3, N);
        final double[] yBefore = yAll.dup().data().asDouble();
        final INDArray x = xAll.get(NDArrayIndex.point(1), NDArrayIndex.all());
        final INDArray y = yAll.get(NDArrayIndex.point(1), NDArrayIndex.all());
        final double[] xRow = x.toDoubleVector();
        BlasSlices.axpy(-2.0, x, y, 960);
        final double[] after = yAll.data().asDouble();
        for (int i = 0; i < 3 * N; i++) {
            final double want = i / N == 1 ? (float) (yBefore[i] - 2.0 * xRow[i - N]) : yBefore[i];
            assertEquals(want, after[i], Math.abs(want) * 1e-6, "element " + i);
        }
    }

    @Test
    void dotInSlicesSumsEverySlice() {
        final double[] x = gaussian(N, 5);
        double want = 0;
        for (final double v : x) {
            want += v * v;
        }
        final INDArray xs = Nd4j.createFromArray(x);
        for (final long slice : new long[] {64, 1024, BlasSlices.MAX_SLICE}) {
            assertEquals(want, BlasSlices.dotSelf(xs, slice), want * 1e-12, "slice " + slice);
        }
        final double[] withNan = Arrays.copyOf(x, N);
        withNan[N - 1] = Double.NaN;
        assertTrue(Double.isNaN(BlasSlices.dotSelf(Nd4j.createFromArray(withNan), 1024)), "NaN in the short last slice");
    }

    @Test
    void refusesSlicesOutsideTheBlasRange() {
        final INDArray x = Nd4j.create(DataType.FLOAT, 10);
        assertThrows(IllegalArgumentException.class, () -> BlasSlices.axpy(1, x, x.dup(), 0));
        assertThrows(IllegalArgumentException.class, () -> BlasSlices.dotSelf(x, BlasSlices.MAX_SLICE + 1));
    }

    private static double[] gaussian(final int n, final long seed) {
        final Random random = new Random(seed);
        final double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = random.nextGaussian();
        }
        return v;
    }
}
