package io.dlion.codec;

import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.util.Arrays;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.concurrency.AffinityManager;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.DynamicCustomOp;
import org.nd4j.linalg.api.ops.impl.transforms.pairwise.arithmetic.Axpy;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.INDArrayIndex;
import org.nd4j.linalg.indexing.NDArrayIndex;

import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoteRule;

/**
 * Adds a round's result, scaled by a learning rate, into an update array: on ND4J's CPU backend, for a contiguous FLOAT
 * or DOUBLE update, in one pass over the host buffer split over the cores ({@link HostDeltaApplier},
 * {@link KernelThreads}: the update is read and written once, nothing is allocated per call); otherwise on the array's
 * device. Both paths compute the same values bit for bit.
 * <p>
 * For parameter j in {@code [from, to)}, with N = {@link RoundResult#voters()} (AVERAGE: the voter count of j's
 * segment, {@link RoundResult#votersAt(long)}):
 * <pre>
 *   update[j] += lr * Delta[j]
 *   MAJORITY: Delta = tie ? 0 : (sign ? +1 : -1)        code = 2 (sign AND NOT tie) + tie,  Delta = code - 1
 *             (odd N, no tie words)                    code = sign,                      Delta = 2 (code - 1/2)
 *   AVERAGE:  Delta = (2k - N) / N                      code = k,                         Delta = (2/N) (code - N/2)
 * </pre>
 * On the device, only the packed words cross (one byte per 8 parameters and per plane). A chunk of P
 * parameters is seen on the device as an {@code [8, P/8]} byte matrix whose row k holds the parameters
 * {@code [k P/8, (k+1) P/8)}, so that broadcasting runs along the long contiguous rows (ND4J broadcasts a
 * {@code [P/8, 8]} layout an order of magnitude slower). The host prepares it with an 8x8 bit-matrix
 * transpose per 64 parameters (byte i of the uploaded row has bit {@code 7 - k} = parameter
 * {@code k P/8 + i}). On the device: {@code bitwise_and} of the bytes {@code [1, P/8]} with the masks
 * {@code [8, 1] = 128, 64, .., 1}, {@code cyclic_rshift_bits} to move each bit to its plane's position,
 * {@code bitwise_or} of the planes, a cast of the per-parameter code to the update's type, the constant
 * offset above, and {@code Axpy} ({@code update += alpha * (code - offset)}: one rounding of the product and
 * one of the sum). Every worker runs the same ops on the same bits, so all workers apply bit-identical values.
 * <p>
 * An AVERAGE result with several segments (voter counts that differ between word ranges) is applied segment by
 * segment: the range is split at the segment boundaries (whole words) and each piece gets its own alpha and offset, and
 * only the {@code planes(N)} count planes of its own N; with one segment nothing changes.
 * <p>
 * Work goes in chunks of {@link #CHUNK_WORDS} words through scratch arrays allocated once (per plane count
 * and update type seen); ranges need no alignment. One instance per worker thread, not thread-safe; call order: construct,
 * {@link #addScaled} any number of times, {@link #close()}.
 */
public final class DeltaApplier implements AutoCloseable {

    /** Words unpacked per batch of device ops (2^22 parameters: few, large ops; 4 MB + 4 MB + 4 values per parameter of scratch). */
    public static final int CHUNK_WORDS = 1 << 16;

    private static final int CHUNK_BYTES = CHUNK_WORDS << 3;
    private static final int CHUNK_PARAMS = CHUNK_WORDS << 6;
    private static final int MAX_PLANES = VoteAggregator.MAX_PLANES;
    /** Planes of one UINT8 code. */
    private static final int BYTE_PLANES = 8;

    private final INDArray[] planeBytes = new INDArray[MAX_PLANES];
    private final LongBuffer[] planeHost = new LongBuffer[MAX_PLANES];
    private final INDArray[] rotations = new INDArray[BYTE_PLANES];
    private final INDArray masks;
    private final INDArray bits;
    private final INDArray code;
    private final INDArray[] values = new INDArray[DataType.values().length];
    private final long[] hostScratch = new long[CHUNK_WORDS];
    private final HostDeltaApplier host;
    private boolean closed;

    /** Allocates the byte scratch; the value scratch of each update type is allocated at its first use. */
    public DeltaApplier() {
        this(0, true);
    }

    /**
     * @param hostSlices slices of the host path per call, or 0 for one per kernel thread (a test seam).
     * @param vectorApi  whether the host path may use the Vector API when the JVM has it (a test seam).
     */
    DeltaApplier(final int hostSlices, final boolean vectorApi) {
        this.host = new HostDeltaApplier(KernelThreads.shared(), hostSlices, vectorApi);
        this.masks = Nd4j.createFromArray(new int[] {128, 64, 32, 16, 8, 4, 2, 1}).castTo(DataType.UINT8).reshape(8, 1);
        this.bits = Nd4j.create(DataType.UINT8, CHUNK_PARAMS);
        this.code = Nd4j.create(DataType.UINT8, CHUNK_PARAMS);
    }

    /**
     * {@code update[j] += lr * Delta[j]} for j in {@code [from, to)}, with the rule of the class comment.
     *
     * @param result the round's result.
     * @param update the model's flat update vector (rank 1, or a row or column): FLOAT, DOUBLE or HALF;
     *               parameter j of the result is element j of the vector.
     * @param from   first parameter of the range.
     * @param to     parameter after the range's last.
     * @param lr     learning rate of the range (of its updater block).
     */
    public void addScaled(final RoundResult result, final INDArray update, final long from, final long to, final double lr) {
        if (closed) {
            throw new IllegalStateException("DeltaApplier is closed");
        }
        final DataType type = update.dataType();
        if (type != DataType.FLOAT && type != DataType.DOUBLE && type != DataType.FLOAT16) {
            throw new IllegalArgumentException("update must be FLOAT, DOUBLE or HALF, got " + type);
        }
        if (!update.isVectorOrScalar()) {
            throw new IllegalArgumentException("update must be a vector, got shape " + Arrays.toString(update.shape()));
        }
        if (from < 0 || to < from || to > result.paramCount() || to > update.length()) {
            throw new IllegalArgumentException("bad range [" + from + ", " + to + ") for " + result.paramCount()
                + " parameters and an update of length " + update.length());
        }
        if (from == to) {
            return;
        }
        if (HostDeltaApplier.supports(update)) {
            addScaledOnHost(result, update, from, to, lr);
            return;
        }
        if (result.rule() == VoteRule.MAJORITY) {
            if (result.tie() == null) {
                applyRange(result, new long[][] {result.sign()}, update, from, to, 2.0 * lr, 0.5);
            } else {
                applyRange(result, new long[][] {result.tie(), null}, update, from, to, lr, 1.0);
            }
        } else if (result.segmentCount() == 1) {
            applyAverage(result, result.voters(), update, from, to, lr);
        } else {
            for (int s = 0; s < result.segmentCount(); s++) {
                final long lo = Math.max(from, (long) result.segmentStartWord(s) << 6);
                final long hi = Math.min(to, (long) result.segmentEndWord(s) << 6);
                if (lo < hi) {
                    applyAverage(result, result.segmentVoters(s), update, lo, hi, lr);
                }
            }
        }
    }

    /** {@link #addScaled} on the host buffer: the same codes, alphas and offsets as the device path. */
    private void addScaledOnHost(final RoundResult result, final INDArray update, final long from, final long to, final double lr) {
        if (result.rule() == VoteRule.MAJORITY) {
            if (result.tie() == null) {
                host.applySign(result.sign(), update, from, to, 2.0 * lr, 0.5);
            } else {
                host.applyTernary(result.sign(), result.tie(), update, from, to, lr, 1.0);
            }
            return;
        }
        for (int s = 0; s < result.segmentCount(); s++) {
            final long lo = Math.max(from, (long) result.segmentStartWord(s) << 6);
            final long hi = Math.min(to, (long) result.segmentEndWord(s) << 6);
            if (lo < hi) {
                final int voters = result.segmentVoters(s);
                host.applyCount(result.countPlanes(), VoteAggregator.planes(voters), update, lo, hi, 2.0 * lr / voters, voters / 2.0);
            }
        }
    }

    /** AVERAGE with one voter count over {@code [from, to)}: only the count planes that count can fill. */
    private void applyAverage(final RoundResult result, final int voters, final INDArray update, final long from, final long to,
        final double lr) {
        final int count = VoteAggregator.planes(voters);
        final long[][] planes = new long[count][];
        System.arraycopy(result.countPlanes(), 0, planes, 0, count);
        applyRange(result, planes, update, from, to, 2.0 * lr / voters, voters / 2.0);
    }

    /**
     * {@code update[j] += alpha * (code[j] - offset)} for j in {@code [from, to)}, chunk by chunk. {@code planes} are
     * the code's bit planes; {@code {tie, null}} stands for the MAJORITY code {@code {sign AND NOT tie, tie}}.
     */
    private void applyRange(final RoundResult result, final long[][] planes, final INDArray update, final long from, final long to,
        final double alpha, final double offset) {
        final int fromWord = (int) (from >>> 6);
        final int toWord = (int) ((to + 63) >>> 6);
        for (int w0 = fromWord; w0 < toWord; w0 += CHUNK_WORDS) {
            final int w1 = Math.min(toWord, w0 + CHUNK_WORDS);
            if (planes.length == 2 && planes[1] == null) {
                final long[] sign = result.sign();
                final long[] tie = result.tie();
                for (int w = w0; w < w1; w++) {
                    hostScratch[w - w0] = sign[w] & ~tie[w];
                }
            }
            applyChunk(planes, w0, w1, update, Math.max(from, (long) w0 << 6), Math.min(to, (long) w1 << 6), alpha, offset);
        }
    }

    private void applyChunk(final long[][] planes, final int w0, final int w1, final INDArray update, final long lo, final long hi,
        final double alpha, final double offset) {
        final int words = (w1 - w0 + 7) & ~7;
        final long base = (long) w0 << 6;
        final INDArray valuesView = values(update.dataType()).get(NDArrayIndex.interval(lo - base, hi - base));
        buildCode(planes, 0, Math.min(planes.length, BYTE_PLANES), w0, w1, words);
        valuesView.assign(code.get(NDArrayIndex.interval(lo - base, hi - base)));
        if (planes.length > BYTE_PLANES) {
            buildCode(planes, BYTE_PLANES, planes.length, w0, w1, words);
            final INDArray high = values(update.dataType() == DataType.DOUBLE ? DataType.INT32 : DataType.INT16)
                .get(NDArrayIndex.interval(lo - base, hi - base));
            high.assign(code.get(NDArrayIndex.interval(lo - base, hi - base)));
            valuesView.addi(high.castTo(update.dataType()).muli(1 << BYTE_PLANES));
        }
        valuesView.subi(offset);
        final INDArray target = update.get(rangeIndex(update, lo, hi));
        final INDArray flatTarget = target.rank() == 1 ? target : target.reshape(hi - lo);
        Nd4j.exec(new Axpy(valuesView, flatTarget, flatTarget, alpha));
    }

    /**
     * The UINT8 code of planes {@code [first, end)} (at most {@link #BYTE_PLANES}) into {@code code}: plane
     * {@code first + b} in bit b. Codes of more planes are built a byte at a time, the high byte's code then weighs 256.
     */
    private void buildCode(final long[][] planes, final int first, final int end, final int w0, final int w1, final int words) {
        final long rowBytes = words;
        final long params = (long) words << 6;
        final INDArray bitsView = bits.get(NDArrayIndex.interval(0, params)).reshape(8, rowBytes * 8);
        final INDArray codeView = code.get(NDArrayIndex.interval(0, params)).reshape(8, rowBytes * 8);
        for (int p = first; p < end; p++) {
            final INDArray device = planeBytes(p);
            Nd4j.getAffinityManager().ensureLocation(device, AffinityManager.Location.HOST);
            if (planes[p] == null) {
                transposeRows(hostScratch, 0, w1 - w0, words, planeHost[p]);
            } else {
                transposeRows(planes[p], w0, w1, words, planeHost[p]);
            }
            Nd4j.getAffinityManager().tagLocation(device, AffinityManager.Location.HOST);
            final INDArray packedRow = device.get(NDArrayIndex.interval(0, rowBytes * 8)).reshape(1, rowBytes * 8);
            final INDArray target = p == first ? codeView : bitsView;
            Nd4j.exec(DynamicCustomOp.builder("bitwise_and").addInputs(packedRow, masks).addOutputs(target).build());
            Nd4j.exec(DynamicCustomOp.builder("cyclic_rshift_bits").addInputs(target, rotation(p - first)).addOutputs(target).build());
            if (p > first) {
                Nd4j.exec(DynamicCustomOp.builder("bitwise_or").addInputs(codeView, bitsView).addOutputs(codeView).build());
            }
        }
    }

    /**
     * Write the words {@code [from, to)} of {@code src} (padded with zero words to {@code words}, a multiple of
     * 8) as 8 rows of {@code words / 8} words each, transposed so that byte i of the output has bit
     * {@code 7 - k} = bit i of row k (both in the packed layout's bit order).
     */
    private static void transposeRows(final long[] src, final int from, final int to, final int words, final LongBuffer dst) {
        final int rowWords = words >>> 3;
        final long[] row = new long[8];
        for (int q = 0; q < rowWords; q++) {
            for (int k = 0; k < 8; k++) {
                final int w = from + k * rowWords + q;
                row[k] = w < to ? src[w] : 0L;
            }
            for (int r = 0; r < 8; r++) {
                final int shift = 8 * r;
                long x = 0;
                for (int k = 0; k < 8; k++) {
                    x |= ((row[k] >>> shift) & 0xFFL) << (56 - 8 * k);
                }
                dst.put(8 * q + r, Long.reverseBytes(transpose8(x)));
            }
        }
    }

    /**
     * Transpose an 8x8 bit matrix: row r in byte {@code 7 - r} of the long (row 0 most significant), column c
     * at bit {@code 7 - c} of its byte (Hacker's Delight, 7-3).
     */
    private static long transpose8(final long matrix) {
        long x = matrix;
        long t = (x ^ (x >>> 7)) & 0x00AA00AA00AA00AAL;
        x = x ^ t ^ (t << 7);
        t = (x ^ (x >>> 14)) & 0x0000CCCC0000CCCCL;
        x = x ^ t ^ (t << 14);
        t = (x ^ (x >>> 28)) & 0x00000000F0F0F0F0L;
        return x ^ t ^ (t << 28);
    }

    private static INDArrayIndex[] rangeIndex(final INDArray update, final long lo, final long hi) {
        if (update.rank() == 1) {
            return new INDArrayIndex[] {NDArrayIndex.interval(lo, hi)};
        }
        if (update.size(0) == 1) {
            return new INDArrayIndex[] {NDArrayIndex.point(0), NDArrayIndex.interval(lo, hi)};
        }
        return new INDArrayIndex[] {NDArrayIndex.interval(lo, hi), NDArrayIndex.point(0)};
    }

    private INDArray values(final DataType type) {
        final int i = type.ordinal();
        if (values[i] == null) {
            values[i] = Nd4j.create(type, CHUNK_PARAMS);
        }
        return values[i];
    }

    private INDArray planeBytes(final int plane) {
        if (planeBytes[plane] == null) {
            planeBytes[plane] = Nd4j.create(DataType.UINT8, CHUNK_BYTES);
            planeHost[plane] = planeBytes[plane].data().asNio().order(ByteOrder.LITTLE_ENDIAN).asLongBuffer();
        }
        return planeBytes[plane];
    }

    /** Rotation that moves bit {@code 7 - k} (row k) to bit {@code plane}. */
    private INDArray rotation(final int plane) {
        if (rotations[plane] == null) {
            final byte[] shifts = new byte[8];
            for (int k = 0; k < 8; k++) {
                shifts[k] = (byte) Math.floorMod(7 - k - plane, 8);
            }
            rotations[plane] = Nd4j.createFromArray(shifts).castTo(DataType.UINT8).reshape(8, 1);
        }
        return rotations[plane];
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            for (final INDArray a : planeBytes) {
                if (a != null) {
                    a.close();
                }
            }
            for (final INDArray a : rotations) {
                if (a != null) {
                    a.close();
                }
            }
            masks.close();
            bits.close();
            code.close();
            for (final INDArray a : values) {
                if (a != null) {
                    a.close();
                }
            }
        }
    }
}
