package io.dlion.codec;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.util.Arrays;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.concurrency.AffinityManager;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.DynamicCustomOp;
import org.nd4j.linalg.api.ops.impl.reduce.longer.MatchCondition;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;
import org.nd4j.linalg.indexing.conditions.Conditions;

/**
 * Packs a worker's vote vector {@code c} (Distributed Lion, Algorithm 1: {@code delta = sign(c)}) into one bit
 * per parameter, on the array's device, so that only {@code n / 8} bytes reach the host.
 * <p>
 * Rule, for parameter j of round t (bit 1 is the vote +1, bit 0 the vote -1):
 * <pre>
 *   bit(j) = 1   if c[j] &gt; 0
 *          = 0   if c[j] &lt; 0
 *          = 1   if c[j] == 0 (either sign of zero) and t is even
 *          = 0   if c[j] == 0 and t is odd
 *   NaN or +-Inf anywhere in c: {@link NonFiniteVoteException}, nothing is written to dst
 * </pre>
 * One bit cannot say 0. A fixed rule for zero (signSGD-MV maps 0 to +1) would move a parameter that never
 * gets a gradient by lr every round; alternating with the round's parity makes such a parameter vote
 * +1, -1, +1, ... so it does not drift (with an odd number of identical voters it moves by +lr, -lr, ...;
 * a parameter zero on all workers comes back to where it was every two rounds).
 * <p>
 * On ND4J's CPU backend a contiguous FLOAT or DOUBLE vector is packed on the host in one read, split over the
 * cores ({@link HostSignPacker}, {@link KernelThreads}); the result is the same whatever the number of threads.
 * Elsewhere (the CUDA backend, HALF, strided views) the work stays on the device:
 * the device work is ND4J's {@code compare_and_bitpack} ({@code bit = c > threshold}, most significant bit
 * first): the threshold is 0 on odd rounds and minus the smallest subnormal of the data type on even rounds
 * (so that exactly the values {@code >= 0} give 1), writing into a preallocated UINT8 array of its own (ND4J
 * M2.1 is about 3x slower when the op's output is a view). The last {@code n mod 8} values are copied into a
 * small preallocated device buffer and packed the same way; the padding bits past n are cleared on the host.
 * The NaN/Inf check costs one read of c: a BLAS dot product {@code c . c} (FLOAT, DOUBLE; in slices below 2^31
 * elements, {@link BlasSlices}) is finite exactly
 * when no value is NaN or infinite, unless it overflows; only a non-finite dot product (or HALF data, which
 * BLAS does not cover) pays for an exact count, of the values with {@code |c| < Inf} (a comparison is false
 * for NaN; ND4J 1.0.0-M2.1's own NaN test misses NaN in HALF arrays).
 * <p>
 * Output layout: the packed layout of {@link io.dlion.vote.RoundResult}, {@code (n + 63) / 64} words.
 * One instance per worker thread, sized once; nothing is allocated per round on the host path; not thread-safe. Call order: construct, {@link #pack} per
 * round, {@link #close()}.
 */
public final class SignPacker implements AutoCloseable {
    /** Elements per BLAS call of the NaN/Inf check ({@link BlasSlices}); a test seam. */
    static long blasSlice = BlasSlices.MAX_SLICE;

    private final long paramCount;
    private final DataType dataType;
    private final int words;
    private final long alignedCount;
    private final int tailCount;
    private final INDArray prefixOut;
    private final INDArray tailIn;
    private final INDArray tailOut;
    private final INDArray thresholdEven;
    private final INDArray thresholdOdd;
    private final ByteBuffer prefixHost;
    private final LongBuffer prefixWords;
    private final ByteBuffer tailHost;
    private final int fullWords;
    private final long lastWordMask;
    private INDArray lastInput;
    private INDArray lastFlat;
    private INDArray lastPrefix;
    private final HostSignPacker host;
    private boolean closed;

    /**
     * @param paramCount length of the vote vectors, {@code >= 0} and below {@code 2^37}.
     * @param dataType   FLOAT, DOUBLE or HALF: the type of the vote vectors.
     */
    public SignPacker(final long paramCount, final DataType dataType) {
        this(paramCount, dataType, 0, true);
    }

    /**
     * @param hostSlices slices of the host path per call, or 0 for one per kernel thread (a test seam).
     * @param vectorApi  whether the host path may use the Vector API when the JVM has it (a test seam).
     */
    SignPacker(final long paramCount, final DataType dataType, final int hostSlices, final boolean vectorApi) {
        if (paramCount < 0 || paramCount > ((long) Integer.MAX_VALUE << 6)) {
            throw new IllegalArgumentException("paramCount must be in [0, 2^37), got " + paramCount);
        }
        if (dataType != DataType.FLOAT && dataType != DataType.DOUBLE && dataType != DataType.FLOAT16) {
            throw new IllegalArgumentException("dataType must be FLOAT, DOUBLE or HALF, got " + dataType);
        }
        this.paramCount = paramCount;
        this.dataType = dataType;
        this.words = (int) ((paramCount + 63) >>> 6);
        this.alignedCount = paramCount & ~7L;
        this.tailCount = (int) (paramCount & 7);
        this.fullWords = (int) (alignedCount >>> 6);
        this.prefixOut = alignedCount == 0 ? null : Nd4j.create(DataType.UINT8, alignedCount >>> 3);
        this.tailIn = tailCount == 0 ? null : Nd4j.create(dataType, 8);
        this.tailOut = tailCount == 0 ? null : Nd4j.create(DataType.UINT8, 1);
        this.thresholdEven = Nd4j.scalar(dataType, -smallestSubnormal(dataType));
        this.thresholdOdd = Nd4j.scalar(dataType, 0.0);
        this.prefixHost = prefixOut == null ? null : prefixOut.data().asNio().order(ByteOrder.LITTLE_ENDIAN);
        this.prefixWords = prefixHost == null ? null : prefixHost.asLongBuffer();
        this.tailHost = tailOut == null ? null : tailOut.data().asNio();
        final long lastValid = paramCount - ((long) Math.max(0, words - 1) << 6);
        this.lastWordMask = words == 0 ? 0L : maskOfFirst((int) lastValid);
        this.host = paramCount > 0 && paramCount <= Integer.MAX_VALUE && HostSignPacker.supportsType(dataType)
            ? new HostSignPacker(paramCount, dataType, KernelThreads.shared(), hostSlices, vectorApi) : null;
    }

    /** @return length of the vote vectors. */
    public long paramCount() {
        return paramCount;
    }

    /** @return the data type of the vote vectors. */
    public DataType dataType() {
        return dataType;
    }

    /** @return words written by {@link #pack}, {@code (paramCount + 63) / 64}. */
    public int words() {
        return words;
    }

    /**
     * Pack {@code sign(c)} with the rule of the class comment.
     *
     * @param c     the vote vector: {@link #paramCount()} values of {@link #dataType()}, a vector or a row
     *              (views are fine); not modified.
     * @param round the round number, for the sign of zero.
     * @param dst   receives {@link #words()} words in the packed layout; longer arrays keep their other words.
     * @throws NonFiniteVoteException when c holds NaN or an infinity.
     */
    public void pack(final INDArray c, final long round, final long[] dst) {
        if (closed) {
            throw new IllegalStateException("SignPacker is closed");
        }
        if (c.length() != paramCount || !c.isVectorOrScalar() && paramCount > 1) {
            throw new IllegalArgumentException("c must be a vector of length " + paramCount + ", got shape "
                + Arrays.toString(c.shape()));
        }
        if (c.dataType() != dataType) {
            throw new IllegalArgumentException("c must be " + dataType + ", got " + c.dataType());
        }
        if (dst == null || dst.length < words) {
            throw new IllegalArgumentException("dst must hold at least " + words + " words");
        }
        if (paramCount == 0) {
            return;
        }
        if (host != null && HostSignPacker.supports(c)) {
            final long nonFinite = host.pack(c, round, dst);
            if (nonFinite > 0) {
                throw new NonFiniteVoteException(round, nonFinite, paramCount);
            }
            return;
        }
        final INDArray flat = flat(c);
        checkFinite(flat, round);
        final INDArray threshold = (round & 1) == 0 ? thresholdEven : thresholdOdd;
        if (alignedCount > 0) {
            Nd4j.exec(DynamicCustomOp.builder("compare_and_bitpack").addInputs(prefix(c, flat), threshold).addOutputs(prefixOut).build());
        }
        if (tailCount > 0) {
            tailIn.get(NDArrayIndex.interval(0, tailCount)).assign(flat.get(NDArrayIndex.interval(alignedCount, paramCount)));
            Nd4j.exec(DynamicCustomOp.builder("compare_and_bitpack").addInputs(tailIn, threshold).addOutputs(tailOut).build());
        }
        if (prefixOut != null) {
            Nd4j.getAffinityManager().ensureLocation(prefixOut, AffinityManager.Location.HOST);
            prefixWords.get(0, dst, 0, fullWords);
        }
        if (words > fullWords) {
            final int restBytes = (int) ((alignedCount >>> 3) & 7);
            long last = 0;
            for (int i = 0; i < restBytes; i++) {
                last |= (prefixHost.get(8 * fullWords + i) & 0xFFL) << (8 * i);
            }
            if (tailOut != null) {
                Nd4j.getAffinityManager().ensureLocation(tailOut, AffinityManager.Location.HOST);
                last |= (tailHost.get(0) & 0xFFL) << (8 * restBytes);
            }
            dst[words - 1] = last & lastWordMask;
        }
    }

    /**
     * A rank-1 array of the vote vector. For a contiguous vector this is a new array over the same buffer (ND4J
     * M2.1's {@code compare_and_bitpack} is about 3x slower on arrays made by {@code get(interval(..))}).
     */
    private INDArray flat(final INDArray c) {
        if (c == lastInput) {
            return lastFlat;
        }
        final long stride = c.rank() == 1 || c.size(0) != 1 ? c.stride(0) : c.stride(1);
        final INDArray flat;
        if (stride == 1) {
            flat = Nd4j.create(c.data(), new long[] {paramCount}, new long[] {1}, c.offset(), 'c', dataType);
        } else {
            flat = c.rank() == 1 ? c : c.reshape(paramCount);
        }
        lastInput = c;
        lastFlat = flat;
        lastPrefix = null;
        return flat;
    }

    private INDArray prefix(final INDArray c, final INDArray flat) {
        if (alignedCount == paramCount) {
            return flat;
        }
        if (lastPrefix == null) {
            lastPrefix = flat.stride(0) == 1
                ? Nd4j.create(flat.data(), new long[] {alignedCount}, new long[] {1}, flat.offset(), 'c', dataType)
                : flat.get(NDArrayIndex.interval(0, alignedCount));
        }
        return lastPrefix;
    }

    private void checkFinite(final INDArray flat, final long round) {
        if (dataType != DataType.FLOAT16 && Double.isFinite(BlasSlices.dotSelf(flat, blasSlice))) {
            return;
        }
        final long finite = Nd4j.getExecutioner()
            .exec(new MatchCondition(flat, Conditions.absLessThan(Double.POSITIVE_INFINITY))).getLong(0);
        final long nonFinite = paramCount - finite;
        if (nonFinite > 0) {
            throw new NonFiniteVoteException(round, nonFinite, paramCount);
        }
    }

    private static double smallestSubnormal(final DataType type) {
        switch (type) {
            case DOUBLE:
                return Double.MIN_VALUE;
            case FLOAT:
                return Float.MIN_VALUE;
            default:
                return 0x1.0p-24;
        }
    }

    /** @return the mask of the first {@code valid} parameters (1..64) of a word in the packed layout. */
    private static long maskOfFirst(final int valid) {
        if (valid >= 64) {
            return -1L;
        }
        final int full = valid >>> 3;
        final int rest = valid & 7;
        final long fullMask = full == 0 ? 0L : -1L >>> (64 - 8 * full);
        return fullMask | (((0xFF00L >>> rest) & 0xFFL) << (8 * full));
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            if (prefixOut != null) {
                prefixOut.close();
            }
            if (tailIn != null) {
                tailIn.close();
                tailOut.close();
            }
            thresholdEven.close();
            thresholdOdd.close();
        }
    }
}
