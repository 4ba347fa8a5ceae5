package io.dlion.codec;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.nio.LongBuffer;

import org.nd4j.linalg.api.buffer.DataBuffer;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * {@link SignPacker}'s rule on the host buffer of a contiguous FLOAT or DOUBLE vector (ND4J's CPU backend), in one
 * read of the vector, split over {@link KernelThreads} by whole words.
 * <p>
 * The vector is read as 64-bit words (two FLOATs or one DOUBLE each) in chunks copied to a per-thread heap array,
 * and every bit is computed from the IEEE representation with integer operations that the JIT vectorizes: with
 * {@code s} the sign bit and {@code nz} "the magnitude is not zero" (the carry of magnitude + all ones), the bit is {@code nz AND NOT s} on odd rounds
 * and {@code NOT (nz AND s)} on even rounds (so that both zeros give the round's parity), and a value is NaN or
 * infinite when its exponent bits are all ones. Each value's bit is multiplied into its place in the packed layout
 * and the 32 (FLOAT) or 64 (DOUBLE) placed values of a word, whose bits are disjoint, are ORed together. Words
 * go to a scratch array first and reach the caller's array only when no value was NaN or infinite. The parameters
 * after the last whole word are packed one by one. When the JVM has the Vector API ({@link KernelThreads#VECTOR_API}),
 * whole words go through {@link VectorCodec} instead (a compare per lane, the lanes' places ORed into the word).
 * Nothing is allocated per call once the vector's views are cached.
 */
final class HostSignPacker implements KernelThreads.Slices {

    /** Words per chunk copied through the per-thread heap arrays (1024 parameters). */
    static final int CHUNK_WORDS = 16;

    /** Smallest slice, in words, handed to another thread (65,536 parameters). */
    static final long MIN_SLICE_WORDS = 1 << 10;

    private static final boolean ENABLED = Nd4j.getEnvironment().isCPU() && ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    private static final long SIGNS_F = 0x8000000080000000L;
    private static final long MAGNITUDES_F = 0x7FFFFFFF7FFFFFFFL;
    private static final long EXPONENTS_F = 0x7F8000007F800000L;
    private static final long EXPONENT_ONES_F = 0x0080000000800000L;
    private static final long SIGN_D = 0x8000000000000000L;
    private static final long MAGNITUDE_D = 0x7FFFFFFFFFFFFFFFL;
    private static final long EXPONENT_D = 0x7FF0000000000000L;
    private static final long EXPONENT_ONE_D = 0x0010000000000000L;
    private static final int CHUNK_PARAMS = CHUNK_WORDS << 6;
    /** For the two FLOATs of 64-bit word q of a chunk: 1 at the place of the second (the first's place is one higher). */
    private static final long[] PLACES_F = new long[CHUNK_PARAMS >>> 1];
    /** For the DOUBLE j of a chunk: 1 at its place. */
    private static final long[] PLACES_D = new long[CHUNK_PARAMS];
    private static final ThreadLocal<long[][]> SCRATCH = ThreadLocal.withInitial(() -> new long[2][CHUNK_PARAMS]);

    static {
        for (int q = 0; q < PLACES_F.length; q++) {
            PLACES_F[q] = 1L << (place(2 * q) - 1);
        }
        for (int j = 0; j < PLACES_D.length; j++) {
            PLACES_D[j] = 1L << place(j);
        }
    }

    private final long paramCount;
    private final boolean isFloat;
    private final int fullWords;
    private final long[] words;
    private final KernelThreads threads;
    private final int fixedSlices;
    private final boolean vectorApi;

    private DataBuffer viewData;
    private long viewOffset = -1;
    private ByteBuffer bytes;
    private LongBuffer longs;
    private IntBuffer ints;
    private boolean odd;
    private long flipSign;
    private long flipBit;
    private volatile boolean nonFiniteSeen;

    /**
     * @param paramCount  length of the vote vectors.
     * @param dataType    FLOAT or DOUBLE.
     * @param threads     the pool.
     * @param fixedSlices slices per call, or 0 for one per thread (at least {@link #MIN_SLICE_WORDS} words each).
     * @param vectorApi   use {@link VectorCodec} (only when {@link KernelThreads#VECTOR_API}).
     */
    HostSignPacker(final long paramCount, final DataType dataType, final KernelThreads threads, final int fixedSlices,
        final boolean vectorApi) {
        this.paramCount = paramCount;
        this.isFloat = dataType == DataType.FLOAT;
        this.fullWords = (int) (paramCount >>> 6);
        this.words = new long[(int) ((paramCount + 63) >>> 6)];
        this.threads = threads;
        this.fixedSlices = fixedSlices;
        this.vectorApi = vectorApi && KernelThreads.VECTOR_API;
    }

    /** @return true when this class packs vectors of this type on this backend. */
    static boolean supportsType(final DataType dataType) {
        return ENABLED && (dataType == DataType.FLOAT || dataType == DataType.DOUBLE);
    }

    /** @return true when {@code c} (a vector of a supported type) is contiguous and its buffer fits a NIO view. */
    static boolean supports(final INDArray c) {
        return supportsType(c.dataType()) && c.elementWiseStride() == 1
            && c.data().underlyingLength() * c.dataType().width() <= Integer.MAX_VALUE;
    }

    /**
     * Pack {@code c} with {@link SignPacker}'s rule into {@code dst[0, words)}, unless it holds NaN or an infinity.
     *
     * @return the number of NaN and infinite values; when it is not 0, {@code dst} is untouched.
     */
    long pack(final INDArray c, final long round, final long[] dst) {
        views(c);
        odd = (round & 1) != 0;
        flipSign = odd ? (isFloat ? SIGNS_F : SIGN_D) : 0L;
        flipBit = odd ? 0L : (isFloat ? SIGNS_F : SIGN_D);
        nonFiniteSeen = false;
        if (fullWords > 0) {
            threads.run(this, fixedSlices > 0 ? fixedSlices : threads.slicesFor(fullWords, MIN_SLICE_WORDS));
        }
        boolean bad = nonFiniteSeen;
        if (fullWords < words.length) {
            long last = 0;
            for (long j = (long) fullWords << 6; j < paramCount; j++) {
                final int valueBit;
                if (isFloat) {
                    final int b = ints.get((int) j);
                    bad |= (b & 0x7F800000) == 0x7F800000;
                    valueBit = odd ? (b > 0 ? 1 : 0) : (b >= 0 || b == Integer.MIN_VALUE ? 1 : 0);
                } else {
                    final long b = longs.get((int) j);
                    bad |= (b & EXPONENT_D) == EXPONENT_D;
                    valueBit = odd ? (b > 0 ? 1 : 0) : (b >= 0 || b == Long.MIN_VALUE ? 1 : 0);
                }
                last |= (long) valueBit << place((int) (j & 63));
            }
            words[fullWords] = last;
        }
        if (bad) {
            return countNonFinite();
        }
        System.arraycopy(words, 0, dst, 0, words.length);
        return 0;
    }

    @Override
    public void run(final int slice, final int slices) {
        final int from = (int) ((long) fullWords * slice / slices);
        final int to = (int) ((long) fullWords * (slice + 1) / slices);
        final boolean bad;
        if (vectorApi) {
            bad = isFloat ? VectorCodec.packFloats(bytes, 0, words, from, to, odd) : VectorCodec.packDoubles(bytes, 0, words, from, to, odd);
        } else {
            bad = isFloat ? packFloats(from, to) : packDoubles(from, to);
        }
        if (bad) {
            nonFiniteSeen = true;
        }
    }

    private boolean packFloats(final int fromWord, final int toWord) {
        final long[][] scratch = SCRATCH.get();
        final long[] in = scratch[0];
        final long[] placed = scratch[1];
        final long[] places = PLACES_F;
        final long s1 = flipSign;
        final long s2 = flipBit;
        long exponents = 0;
        for (int w0 = fromWord; w0 < toWord; w0 += CHUNK_WORDS) {
            final int chunkWords = Math.min(CHUNK_WORDS, toWord - w0);
            final int len = chunkWords << 5;
            longs.get(w0 << 5, in, 0, len);
            for (int i = 0; i < len; i++) {
                final long v = in[i];
                final long nonZero = (v & MAGNITUDES_F) + MAGNITUDES_F;
                final long bits = (nonZero & ((v & SIGNS_F) ^ s1)) ^ s2;
                exponents |= (v & EXPONENTS_F) + EXPONENT_ONES_F;
                placed[i] = (((bits >>> 30) & 2L) | (bits >>> 63)) * places[i];
            }
            for (int w = 0; w < chunkWords; w++) {
                final int p = w << 5;
                long word = 0;
                for (int k = 0; k < 32; k++) {
                    word |= placed[p + k];
                }
                words[w0 + w] = word;
            }
        }
        return (exponents & SIGNS_F) != 0;
    }

    private boolean packDoubles(final int fromWord, final int toWord) {
        final long[][] scratch = SCRATCH.get();
        final long[] in = scratch[0];
        final long[] placed = scratch[1];
        final long[] places = PLACES_D;
        final long s1 = flipSign;
        final long s2 = flipBit;
        long exponents = 0;
        for (int w0 = fromWord; w0 < toWord; w0 += CHUNK_WORDS) {
            final int chunkWords = Math.min(CHUNK_WORDS, toWord - w0);
            final int len = chunkWords << 6;
            longs.get(w0 << 6, in, 0, len);
            for (int i = 0; i < len; i++) {
                final long v = in[i];
                final long nonZero = (v & MAGNITUDE_D) + MAGNITUDE_D;
                final long bits = (nonZero & ((v & SIGN_D) ^ s1)) ^ s2;
                exponents |= (v & EXPONENT_D) + EXPONENT_ONE_D;
                placed[i] = (bits >>> 63) * places[i];
            }
            for (int w = 0; w < chunkWords; w++) {
                final int p = w << 6;
                long word = 0;
                for (int k = 0; k < 64; k++) {
                    word |= placed[p + k];
                }
                words[w0 + w] = word;
            }
        }
        return (exponents & SIGN_D) != 0;
    }

    /** NaN and infinite values of the current vector, counted one by one (only when some were seen). */
    private long countNonFinite() {
        long count = 0;
        for (long j = 0; j < paramCount; j++) {
            if (isFloat) {
                count += (ints.get((int) j) & 0x7F800000) == 0x7F800000 ? 1 : 0;
            } else {
                count += (longs.get((int) j) & EXPONENT_D) == EXPONENT_D ? 1 : 0;
            }
        }
        return count;
    }

    /** Views whose index 0 is the vector's first value: 64-bit words, and (FLOAT) single values for the tail. */
    private void views(final INDArray c) {
        final DataBuffer data = c.data();
        final long offset = c.offset();
        if (data == viewData && offset == viewOffset) {
            return;
        }
        final ByteBuffer bytes = data.asNio().order(ByteOrder.nativeOrder());
        bytes.position((int) (offset * c.dataType().width()));
        final ByteBuffer slice = bytes.slice().order(ByteOrder.nativeOrder());
        this.bytes = slice;
        longs = slice.asLongBuffer();
        ints = isFloat ? slice.asIntBuffer() : null;
        viewData = data;
        viewOffset = offset;
    }

    /** Bit of parameter {@code j & 63} in its word of the packed layout. */
    private static int place(final int j) {
        return 8 * ((j >>> 3) & 7) + 7 - (j & 7);
    }
}
