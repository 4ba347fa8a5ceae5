package io.dlion.codec;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;

import org.nd4j.linalg.api.buffer.DataBuffer;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

import io.dlion.vote.VoteAggregator;

/**
 * {@link DeltaApplier}'s {@code update[j] += alpha * (code[j] - offset)} on the host buffer of a contiguous FLOAT or
 * DOUBLE update vector (ND4J's CPU backend), split over {@link KernelThreads}, with the arithmetic of the device path:
 * {@code code - offset} exact in the update's type, then one rounding of the product with {@code alpha} (rounded to
 * the type) and one of the sum, no fused multiply-add. Every worker thus applies the same bits on either path.
 * <p>
 * The per-call table {@code delta[code] = alpha * (code - offset)} holds every product the device path can form
 * (codes are below {@code 2^planes}), so the update only needs {@code update[j] += delta[code[j]]}. Work goes in chunks of
 * {@link #CHUNK} parameters through per-thread heap arrays: the update's values are copied in and out of the
 * off-heap buffer in bulk, and the deltas of a chunk are looked up from the bit planes' bytes (with at most 4
 * planes: one 64-bit row of two FLOAT deltas per pair of parameters, found from the planes' bytes through a
 * 256-entry spreading table; with more planes or DOUBLE, one delta per parameter, its code read a byte of planes at
 * a time: planes 0-7, then planes 8 and up for counts of 256 voters or more) and added by a loop the JIT
 * vectorizes. When the JVM has the Vector API ({@link KernelThreads#VECTOR_API}), the whole words of a slice go through
 * {@link VectorCodec} instead, straight on the off-heap buffer, and only the partial words at a slice's ends are done
 * one parameter at a time here. The update is read once and written once. Nothing is allocated per call once the
 * update's view is cached.
 */
final class HostDeltaApplier implements KernelThreads.Slices {

    /** Parameters per chunk (a multiple of 64). */
    static final int CHUNK = 1024;

    /** Smallest slice handed to another thread. */
    static final long MIN_SLICE = 1 << 16;

    private static final boolean ENABLED = Nd4j.getEnvironment().isCPU() && ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    static final int SIGN = 0;
    static final int TERNARY = 1;
    static final int COUNT = 2;
    /** Planes whose codes fit one byte of {@link #byteCodes}. */
    private static final int BYTE_PLANES = 8;
    /** Codes of at most this many planes are looked up two parameters at a time. */
    private static final int PAIR_PLANES = 4;
    /**
     * For a plane byte b: byte m (m = 0..3) is {@code 16 bit(7 - 2m) + bit(6 - 2m)}, the pair of parameters 2m, 2m + 1
     * as two nibbles; summed with weights 2^p over at most 4 planes it is the pair's index {@code 16 code + code'}.
     */
    private static final int[] PAIR_SPREAD = new int[256];
    /** For a plane byte b: byte k (k = 0..7) is {@code bit(7 - k)}; summed with weights 2^p it is parameter k's code. */
    private static final long[] BYTE_SPREAD = new long[256];
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    static {
        for (int b = 0; b < 256; b++) {
            int pairs = 0;
            long bytes = 0;
            for (int k = 0; k < 8; k++) {
                final int bit = (b >>> (7 - k)) & 1;
                pairs |= bit << (8 * (k >>> 1) + ((k & 1) == 0 ? 4 : 0));
                bytes |= (long) bit << (8 * k);
            }
            PAIR_SPREAD[b] = pairs;
            BYTE_SPREAD[b] = bytes;
        }
    }

    private final KernelThreads threads;
    private final int fixedSlices;
    private final boolean vectorApi;
    private final float[] deltaF = new float[1 << VoteAggregator.MAX_PLANES];
    private final double[] deltaD = new double[1 << VoteAggregator.MAX_PLANES];
    /** Pair index {@code 16 c + c'}: FLOAT bits of delta[c] (low half) and delta[c'] (high half). */
    private final long[] pairDeltaF = new long[256];

    private DataBuffer viewData;
    private ByteBuffer bytes;
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

    /** Per-thread chunk arrays, and a small direct buffer that turns looked-up 64-bit rows into FLOATs. */
    private static final class Scratch {
        final float[] valuesF = new float[CHUNK];
        final float[] deltasF = new float[CHUNK];
        final double[] valuesD = new double[CHUNK];
        final double[] deltasD = new double[CHUNK];
        final long[] rows = new long[CHUNK / 2];
        final long[] planeWords = new long[VoteAggregator.MAX_PLANES];
        final LongBuffer rowsOut;
        final FloatBuffer rowsIn;

        Scratch() {
            final ByteBuffer direct = ByteBuffer.allocateDirect(CHUNK * Float.BYTES).order(ByteOrder.nativeOrder());
            rowsOut = direct.asLongBuffer();
            rowsIn = direct.asFloatBuffer();
        }
    }

    /**
     * @param threads     the pool.
     * @param fixedSlices slices per call, or 0 for one per thread (at least {@link #MIN_SLICE} parameters each).
     * @param vectorApi   use {@link VectorCodec} for whole words (only when {@link KernelThreads#VECTOR_API}).
     */
    HostDeltaApplier(final KernelThreads threads, final int fixedSlices, final boolean vectorApi) {
        this.threads = threads;
        this.fixedSlices = fixedSlices;
        this.vectorApi = vectorApi && KernelThreads.VECTOR_API;
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
        this.mode = COUNT;
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
        final int codes = 1 << planes;
        alphaF = (float) alpha;
        offsetF = (float) offset;
        alphaD = alpha;
        offsetD = offset;
        if (isFloat) {
            final float a = alphaF;
            final float o = offsetF;
            for (int c = 0; c < codes; c++) {
                deltaF[c] = a * ((float) c - o);
            }
            if (planes <= PAIR_PLANES) {
                for (int i = 0; i < 256; i++) {
                    final int first = i >>> 4;
                    final int second = i & 15;
                    pairDeltaF[i] = first < codes && second < codes
                        ? (Float.floatToRawIntBits(deltaF[first]) & 0xFFFFFFFFL) | (long) Float.floatToRawIntBits(deltaF[second]) << 32
                        : 0L;
                }
            }
        } else {
            for (int c = 0; c < codes; c++) {
                deltaD[c] = alpha * ((double) c - offset);
            }
        }
        try {
            threads.run(this, fixedSlices > 0 ? fixedSlices : threads.slicesFor(hi - lo, MIN_SLICE));
        } finally {
            sign = null;
            tie = null;
            countPlanes = null;
        }
    }

    @Override
    public void run(final int slice, final int slices) {
        final long lo = boundary(slice, slices);
        final long hi = boundary(slice + 1, slices);
        final Scratch scratch = SCRATCH.get();
        if (vectorApi) {
            final long firstWord = (lo + 63) >>> 6;
            final long endWord = hi >>> 6;
            if (firstWord < endWord) {
                addOneByOne(lo, firstWord << 6);
                final int base = (int) (updateOffset * (isFloat ? Float.BYTES : Double.BYTES));
                if (isFloat) {
                    VectorCodec.applyFloats(bytes, base, mode, sign, tie, countPlanes, planes, scratch.planeWords, (int) firstWord,
                        (int) endWord, deltaF[0], deltaF[1], alphaF, offsetF);
                } else {
                    VectorCodec.applyDoubles(bytes, base, mode, sign, tie, countPlanes, planes, scratch.planeWords, (int) firstWord,
                        (int) endWord, deltaD[0], deltaD[1], alphaD, offsetD);
                }
                addOneByOne(endWord << 6, hi);
            } else {
                addOneByOne(lo, hi);
            }
            return;
        }
        for (long c = lo; c < hi; ) {
            final long next = Math.min(hi, (c & ~7L) + CHUNK);
            if (isFloat) {
                chunkFloat(scratch, c, next);
            } else {
                chunkDouble(scratch, c, next);
            }
            c = next;
        }
    }

    /** Parameters {@code [lo, hi)} one at a time (the partial words at the ends of a slice). */
    private void addOneByOne(final long lo, final long hi) {
        for (long j = lo; j < hi; j++) {
            final int q = (int) (j >>> 3);
            final int shift = (int) ((j & 7) << 3);
            final int code = (int) (byteCodes(q) >>> shift) & 0xFF | ((int) (highCodes(q) >>> shift) & 0xFF) << 8;
            final int at = (int) (updateOffset + j);
            if (isFloat) {
                floats.put(at, floats.get(at) + deltaF[code]);
            } else {
                doubles.put(at, doubles.get(at) + deltaD[code]);
            }
        }
    }

    /** The bit planes of word {@code w} of a code (mode {@link #SIGN}, {@link #TERNARY} or {@link #COUNT}) into {@code x}. */
    static void planeWords(final int mode, final long[] sign, final long[] tie, final long[][] countPlanes, final int planes,
        final int w, final long[] x) {
        switch (mode) {
            case SIGN:
                x[0] = sign[w];
                break;
            case TERNARY:
                x[0] = tie[w];
                x[1] = sign[w] & ~tie[w];
                break;
            default:
                for (int p = 0; p < planes; p++) {
                    x[p] = countPlanes[p][w];
                }
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
    private void chunkFloat(final Scratch scratch, final long lo, final long hi) {
        final float[] values = scratch.valuesF;
        final float[] deltas = scratch.deltasF;
        final int shift = (int) (lo & 7);
        final int len = (int) (hi - lo);
        final int firstByte = (int) (lo >>> 3);
        final int lastByte = (int) ((hi + 7) >>> 3);
        final int at = (int) (updateOffset + lo);
        floats.get(at, values, 0, len);
        if (planes <= PAIR_PLANES) {
            final long[] rows = scratch.rows;
            final long[] table = pairDeltaF;
            for (int q = firstByte; q < lastByte; q++) {
                final int pairs = pairIndices(q);
                final int r = (q - firstByte) << 2;
                rows[r] = table[pairs & 0xFF];
                rows[r + 1] = table[(pairs >>> 8) & 0xFF];
                rows[r + 2] = table[(pairs >>> 16) & 0xFF];
                rows[r + 3] = table[pairs >>> 24];
            }
            final int count = (lastByte - firstByte) << 3;
            scratch.rowsOut.put(0, rows, 0, count >>> 1);
            scratch.rowsIn.get(0, deltas, 0, count);
        } else {
            final float[] table = deltaF;
            for (int q = firstByte; q < lastByte; q++) {
                final long codes = byteCodes(q);
                final long high = highCodes(q);
                final int o = (q - firstByte) << 3;
                for (int k = 0; k < 8; k++) {
                    deltas[o + k] = table[(int) (codes >>> (k << 3)) & 0xFF | ((int) (high >>> (k << 3)) & 0xFF) << 8];
                }
            }
        }
        for (int i = 0; i < len; i++) {
            values[i] += deltas[i + shift];
        }
        floats.put(at, values, 0, len);
    }

    /** Parameters {@code [lo, hi)}, {@code hi - floor8(lo) <= CHUNK}. */
    private void chunkDouble(final Scratch scratch, final long lo, final long hi) {
        final double[] values = scratch.valuesD;
        final double[] deltas = scratch.deltasD;
        final double[] table = deltaD;
        final int shift = (int) (lo & 7);
        final int len = (int) (hi - lo);
        final int firstByte = (int) (lo >>> 3);
        final int lastByte = (int) ((hi + 7) >>> 3);
        final int at = (int) (updateOffset + lo);
        doubles.get(at, values, 0, len);
        for (int q = firstByte; q < lastByte; q++) {
            final long codes = byteCodes(q);
            final long high = highCodes(q);
            final int o = (q - firstByte) << 3;
            for (int k = 0; k < 8; k++) {
                deltas[o + k] = table[(int) (codes >>> (k << 3)) & 0xFF | ((int) (high >>> (k << 3)) & 0xFF) << 8];
            }
        }
        for (int i = 0; i < len; i++) {
            values[i] += deltas[i + shift];
        }
        doubles.put(at, values, 0, len);
    }

    /** Byte {@code m} (m = 0..3): {@code 16 code(8q + 2m) + code(8q + 2m + 1)} (at most {@link #PAIR_PLANES} planes). */
    private int pairIndices(final int q) {
        final int w = q >>> 3;
        final int s = (q & 7) << 3;
        switch (mode) {
            case SIGN:
                return PAIR_SPREAD[(int) (sign[w] >>> s) & 0xFF];
            case TERNARY: {
                final long t = tie[w];
                return PAIR_SPREAD[(int) (t >>> s) & 0xFF] | PAIR_SPREAD[(int) ((sign[w] & ~t) >>> s) & 0xFF] << 1;
            }
            default: {
                int pairs = 0;
                for (int p = 0; p < planes; p++) {
                    pairs |= PAIR_SPREAD[(int) (countPlanes[p][w] >>> s) & 0xFF] << p;
                }
                return pairs;
            }
        }
    }

    /** Byte {@code k} (k = 0..7): the code of parameter {@code 8q + k}. */
    private long byteCodes(final int q) {
        final int w = q >>> 3;
        final int s = (q & 7) << 3;
        switch (mode) {
            case SIGN:
                return BYTE_SPREAD[(int) (sign[w] >>> s) & 0xFF];
            case TERNARY: {
                final long t = tie[w];
                return BYTE_SPREAD[(int) (t >>> s) & 0xFF] | BYTE_SPREAD[(int) ((sign[w] & ~t) >>> s) & 0xFF] << 1;
            }
            default: {
                long codes = 0;
                for (int p = 0, end = Math.min(planes, BYTE_PLANES); p < end; p++) {
                    codes |= BYTE_SPREAD[(int) (countPlanes[p][w] >>> s) & 0xFF] << p;
                }
                return codes;
            }
        }
    }

    /** Byte {@code k} (k = 0..7): bits 8 and up of the code of parameter {@code 8q + k} (zero with 8 planes or fewer). */
    private long highCodes(final int q) {
        if (planes <= BYTE_PLANES) {
            return 0L;
        }
        final int w = q >>> 3;
        final int s = (q & 7) << 3;
        long codes = 0;
        for (int p = BYTE_PLANES; p < planes; p++) {
            codes |= BYTE_SPREAD[(int) (countPlanes[p][w] >>> s) & 0xFF] << (p - BYTE_PLANES);
        }
        return codes;
    }

    private void view(final DataBuffer buffer) {
        if (buffer == viewData) {
            return;
        }
        bytes = buffer.asNio().order(ByteOrder.nativeOrder());
        floats = bytes.asFloatBuffer();
        doubles = bytes.asDoubleBuffer();
        viewData = buffer;
    }
}
