package io.dlion.codec;

import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;

import org.nd4j.linalg.api.buffer.DataBuffer;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * {@link DeltaApplier}'s {@code update[j] += alpha * (code[j] - offset)} on the host buffer of a contiguous FLOAT or
 * DOUBLE update vector (ND4J's CPU backend), split over {@link KernelThreads}, with the arithmetic of the device path:
 * {@code code - offset} exact in the update's type, then one rounding of the product with {@code alpha} (rounded to
 * the type) and one of the sum, no fused multiply-add. Every worker thus applies the same bits on either path.
 * <p>
 * Work goes in chunks of {@link #CHUNK} parameters. The bytes of the code's bit planes are expanded to one value per
 * parameter by table look-up (an 8-value row of a 256-row table per byte, copied whole), into per-thread heap
 * arrays; a loop the JIT vectorizes adds the planes ({@code code = sum of 2^p bit_p}, exact) and the scaled code
 * to the update's values, which are copied in and out of the off-heap buffer in bulk. With one plane (majority
 * vote, odd N) the table holds the two deltas themselves, so the update is read and written once plus one table row
 * per 8 parameters. The update is read once and written once. Nothing is allocated per call once the update's view
 * is cached.
 */
final class HostDeltaApplier implements KernelThreads.Slices {

    /** Parameters per chunk (a multiple of 64). */
    static final int CHUNK = 1024;

    /** Smallest slice handed to another thread. */
    static final long MIN_SLICE = 1 << 16;

    private static final boolean ENABLED = Nd4j.getEnvironment().isCPU();
    private static final int SIGN = 0;
    private static final int TERNARY = 1;
    private static final int COUNT = 2;
    /** Row b: bit {@code 7 - k} of b as 0 or 1, k = 0..7 (the packed layout's order inside a byte). */
    private static final float[] BITS_F = new float[256 * 8];
    private static final double[] BITS_D = new double[256 * 8];
    private static final ThreadLocal<float[][]> SCRATCH_F = ThreadLocal.withInitial(() -> new float[3][CHUNK]);
    private static final ThreadLocal<double[][]> SCRATCH_D = ThreadLocal.withInitial(() -> new double[3][CHUNK]);

    static {
        for (int b = 0; b < 256; b++) {
            for (int k = 0; k < 8; k++) {
                BITS_F[8 * b + k] = (b >>> (7 - k)) & 1;
                BITS_D[8 * b + k] = (b >>> (7 - k)) & 1;
            }
        }
    }

    private final KernelThreads threads;
    private final int fixedSlices;
    private final float[] deltasF = new float[256 * 8];
    private final double[] deltasD = new double[256 * 8];

    private DataBuffer viewData;
    private FloatBuffer floats;
    private DoubleBuffer doubles;
    private boolean isFloat;
    private int mode;
    private long[] sign;
    private long[] tie;
    private long[][] countPlanes;
    private int planes;
    private long updateOffset;
    private long from;
    private long to;
    private float alphaF;
    private float offsetF;
    private double alphaD;
    private double offsetD;

    /**
     * @param threads     the pool.
     * @param fixedSlices slices per call, or 0 for one per thread (at least {@link #MIN_SLICE} parameters each).
     */
    HostDeltaApplier(final KernelThreads threads, final int fixedSlices) {
        this.threads = threads;
        this.fixedSlices = fixedSlices;
    }

    /** @return true when {@code update} (a vector) is FLOAT or DOUBLE, contiguous, on the CPU backend, and fits a NIO view. */
    static boolean supports(final INDArray update) {
        final DataType type = update.dataType();
        return ENABLED && (type == DataType.FLOAT || type == DataType.DOUBLE) && update.elementWiseStride() == 1
            && update.data().underlyingLength() * type.width() <= Integer.MAX_VALUE;
    }

    /** Majority with odd N: {@code code = sign}. */
    void applySign(final long[] signWords, final INDArray update, final long lo, final long hi, final double alpha, final double offset) {
        this.mode = SIGN;
        this.sign = signWords;
        this.planes = 1;
        run(update, lo, hi, alpha, offset);
    }

    /** Majority with ties: {@code code = tie + 2 (sign AND NOT tie)}. */
    void applyTernary(final long[] signWords, final long[] tieWords, final INDArray update, final long lo, final long hi,
        final double alpha, final double offset) {
        this.mode = TERNARY;
        this.sign = signWords;
        this.tie = tieWords;
        this.planes = 2;
        run(update, lo, hi, alpha, offset);
    }

    /** Average: {@code code = sum of 2^p planes[p]} over the first {@code planeCount} planes. */
    void applyCount(final long[][] planeWords, final int planeCount, final INDArray update, final long lo, final long hi,
        final double alpha, final double offset) {
        this.mode = planeCount == 1 ? SIGN : COUNT;
        this.sign = planeWords[0];
        this.countPlanes = planeWords;
        this.planes = planeCount;
        run(update, lo, hi, alpha, offset);
    }

    private void run(final INDArray update, final long lo, final long hi, final double alpha, final double offset) {
        isFloat = update.dataType() == DataType.FLOAT;
        view(update.data());
        updateOffset = update.offset();
        from = lo;
        to = hi;
        alphaF = (float) alpha;
        offsetF = (float) offset;
        alphaD = alpha;
        offsetD = offset;
        if (mode == SIGN) {
            for (int b = 0; b < 256 * 8; b++) {
                deltasF[b] = alphaF * (BITS_F[b] - offsetF);
                deltasD[b] = alphaD * (BITS_D[b] - offsetD);
            }
        }
        threads.run(this, fixedSlices > 0 ? fixedSlices : threads.slicesFor(hi - lo, MIN_SLICE));
        sign = null;
        tie = null;
        countPlanes = null;
    }

    @Override
    public void run(final int slice, final int slices) {
        final long lo = boundary(slice, slices);
        final long hi = boundary(slice + 1, slices);
        for (long c = lo; c < hi; ) {
            final long next = Math.min(hi, (c & ~7L) + CHUNK);
            if (isFloat) {
                chunkFloat(c, next);
            } else {
                chunkDouble(c, next);
            }
            c = next;
        }
    }

    /** Start of slice {@code s}: a word boundary inside {@code [from, to]}, {@code from} for the first, {@code to} past the last. */
    private long boundary(final int s, final int slices) {
        if (s == 0) {
            return from;
        }
        if (s == slices) {
            return to;
        }
        final long wordsFrom = from >>> 6;
        final long wordsTo = (to + 63) >>> 6;
        return Math.max(from, Math.min(to, (wordsFrom + (wordsTo - wordsFrom) * s / slices) << 6));
    }

    /** Parameters {@code [lo, hi)}, {@code hi - floor8(lo) <= CHUNK}. */
    private void chunkFloat(final long lo, final long hi) {
        final float[][] scratch = SCRATCH_F.get();
        final float[] values = scratch[0];
        final float[] code = scratch[1];
        final float[] plane = scratch[2];
        final long base = lo & ~7L;
        final int shift = (int) (lo - base);
        final int len = (int) (hi - lo);
        final int firstByte = (int) (base >>> 3);
        final int lastByte = (int) ((hi + 7) >>> 3);
        final int at = (int) (updateOffset + lo);
        floats.get(at, values, 0, len);
        if (mode == SIGN) {
            expand(0, firstByte, lastByte, deltasF, code);
            for (int i = 0; i < len; i++) {
                values[i] += code[i + shift];
            }
        } else {
            expand(0, firstByte, lastByte, BITS_F, code);
            final int count = (lastByte - firstByte) << 3;
            for (int p = 1; p < planes; p++) {
                expand(p, firstByte, lastByte, BITS_F, plane);
                final float scale = 1 << p;
                for (int i = 0; i < count; i++) {
                    code[i] += scale * plane[i];
                }
            }
            final float alpha = alphaF;
            final float offset = offsetF;
            for (int i = 0; i < len; i++) {
                values[i] += alpha * (code[i + shift] - offset);
            }
        }
        floats.put(at, values, 0, len);
    }

    /** Parameters {@code [lo, hi)}, {@code hi - floor8(lo) <= CHUNK}. */
    private void chunkDouble(final long lo, final long hi) {
        final double[][] scratch = SCRATCH_D.get();
        final double[] values = scratch[0];
        final double[] code = scratch[1];
        final double[] plane = scratch[2];
        final long base = lo & ~7L;
        final int shift = (int) (lo - base);
        final int len = (int) (hi - lo);
        final int firstByte = (int) (base >>> 3);
        final int lastByte = (int) ((hi + 7) >>> 3);
        final int at = (int) (updateOffset + lo);
        doubles.get(at, values, 0, len);
        if (mode == SIGN) {
            expand(0, firstByte, lastByte, deltasD, code);
            for (int i = 0; i < len; i++) {
                values[i] += code[i + shift];
            }
        } else {
            expand(0, firstByte, lastByte, BITS_D, code);
            final int count = (lastByte - firstByte) << 3;
            for (int p = 1; p < planes; p++) {
                expand(p, firstByte, lastByte, BITS_D, plane);
                final double scale = 1 << p;
                for (int i = 0; i < count; i++) {
                    code[i] += scale * plane[i];
                }
            }
            final double alpha = alphaD;
            final double offset = offsetD;
            for (int i = 0; i < len; i++) {
                values[i] += alpha * (code[i + shift] - offset);
            }
        }
        doubles.put(at, values, 0, len);
    }

    /** Row look-up of plane {@code p}'s bytes {@code [firstByte, lastByte)} into {@code out}, 8 values per byte. */
    private void expand(final int p, final int firstByte, final int lastByte, final float[] table, final float[] out) {
        for (int q = firstByte; q < lastByte; q++) {
            final int b = (int) (word(p, q >>> 3) >>> ((q & 7) << 3)) & 0xFF;
            System.arraycopy(table, b << 3, out, (q - firstByte) << 3, 8);
        }
    }

    private void expand(final int p, final int firstByte, final int lastByte, final double[] table, final double[] out) {
        for (int q = firstByte; q < lastByte; q++) {
            final int b = (int) (word(p, q >>> 3) >>> ((q & 7) << 3)) & 0xFF;
            System.arraycopy(table, b << 3, out, (q - firstByte) << 3, 8);
        }
    }

    /** Word {@code w} of the code's bit plane {@code p}. */
    private long word(final int p, final int w) {
        switch (mode) {
            case SIGN:
                return sign[w];
            case TERNARY:
                return p == 0 ? tie[w] : sign[w] & ~tie[w];
            default:
                return countPlanes[p][w];
        }
    }

    private void view(final DataBuffer buffer) {
        if (buffer == viewData) {
            return;
        }
        if (isFloat) {
            floats = buffer.asNio().order(ByteOrder.nativeOrder()).asFloatBuffer();
            doubles = null;
        } else {
            doubles = buffer.asNio().order(ByteOrder.nativeOrder()).asDoubleBuffer();
            floats = null;
        }
        viewData = buffer;
    }
}
