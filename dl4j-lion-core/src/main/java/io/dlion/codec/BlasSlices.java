package io.dlion.codec;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * BLAS level-1 calls on vectors of any length. ND4J M2.1's BLAS wrappers pass the element count to CBLAS as an
 * {@code int}: on a vector of more than 2^31 - 1 elements (one updater block of a 3B-parameter model) {@code axpy}
 * silently does nothing and {@code dot} returns 0. These methods cut the vectors into contiguous slices of at most
 * {@code slice} elements, each a view over the same buffer, and make one BLAS call per slice. On shorter vectors
 * they make exactly the one call ND4J would make. Per element, a sliced call computes what one call computes up to
 * the rounding of the kernel's scalar tail loop (OpenBLAS's vector body uses fused multiply-add, its tail does
 * not): one ulp of the result at most, as between two of OpenBLAS's own thread splits of one call.
 * <p>
 * Arguments are FLOAT or DOUBLE arrays with an element-wise stride (a strided vector, or a contiguous array); for
 * {@code axpy} both have the same length, type and ordering, which is where the callers use BLAS at all.
 */
public final class BlasSlices {
    /** The largest slice handed to one BLAS call: 2^30 elements, well below {@code Integer.MAX_VALUE}. */
    public static final long MAX_SLICE = 1L << 30;

    private BlasSlices() {
    }

    /**
     * {@code y += alpha * x}, in place.
     *
     * @param alpha the factor.
     * @param x     read.
     * @param y     updated; the same length, type and ordering as x.
     * @param slice elements per BLAS call, in [1, {@link #MAX_SLICE}].
     */
    public static void axpy(final double alpha, final INDArray x, final INDArray y, final long slice) {
        checkSlice(slice);
        final long n = x.length();
        if (n <= slice) {
            Nd4j.getBlasWrapper().level1().axpy(n, alpha, x, y);
            return;
        }
        final INDArray xs = flat(x);
        final INDArray ys = flat(y);
        for (long from = 0; from < n; from += slice) {
            final long len = Math.min(slice, n - from);
            Nd4j.getBlasWrapper().level1().axpy(len, alpha, view(xs, from, len), view(ys, from, len));
        }
    }

    /**
     * @param x     a vector.
     * @param slice elements per BLAS call, in [1, {@link #MAX_SLICE}].
     * @return {@code x . x}, summed over the slices in double.
     */
    public static double dotSelf(final INDArray x, final long slice) {
        checkSlice(slice);
        final long n = x.length();
        if (n <= slice) {
            return Nd4j.getBlasWrapper().dot(x, x);
        }
        final INDArray xs = flat(x);
        double sum = 0;
        for (long from = 0; from < n; from += slice) {
            final INDArray part = view(xs, from, Math.min(slice, n - from));
            sum += Nd4j.getBlasWrapper().dot(part, part);
        }
        return sum;
    }

    private static void checkSlice(final long slice) {
        if (slice < 1 || slice > MAX_SLICE) {
            throw new IllegalArgumentException("slice must be in [1, " + MAX_SLICE + "], got " + slice);
        }
    }

    /** A rank-1 view over the same buffer, with the array's element-wise stride. */
    private static INDArray flat(final INDArray x) {
        final int stride = x.elementWiseStride();
        if (stride < 1) {
            throw new IllegalArgumentException("BLAS slices need an element-wise stride, the array has none: " + x.shapeInfoToString());
        }
        return Nd4j.create(x.data(), new long[] {x.length()}, new long[] {stride}, x.offset(), 'c', x.dataType());
    }

    private static INDArray view(final INDArray flat, final long from, final long len) {
        final long stride = flat.stride(0);
        return Nd4j.create(flat.data(), new long[] {len}, new long[] {stride}, flat.offset() + from * stride, 'c', flat.dataType());
    }
}
