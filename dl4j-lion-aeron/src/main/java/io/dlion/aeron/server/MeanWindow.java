package io.dlion.aeron.server;

import io.dlion.aeron.RejectReason;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.GradientChunkFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;

/**
 * The window of dense data-parallel rounds on one shard's server: the round open now and the fp32 gradients of its
 * chunks in flight, averaged chunk by chunk, the counterpart of the {@link VoteWindow} of sign votes.
 * <p>
 * The same rules as the vote window: a round is opened by its first gradient chunk and completes when its last chunk's
 * mean is published; gradients are copied out of Aeron's receive buffer into {@code windowChunks} slots of one chunk per
 * worker, and a chunk beyond the window is left in the log by the caller until the oldest chunk is published. A chunk
 * is ready once every required worker's gradient is in (the round's voters once its first chunk was averaged, before
 * that every active worker); the first chunk averaged fixes the round's voters. The mean of a chunk is
 * {@code (float) (sum_i (double) g_i / voters)}, summed in worker order: N identical gradients give back the gradient
 * exactly. Deadline: as the vote window's. Not thread-safe: the server's agent thread only.
 */
final class MeanWindow {
    private final ChunkLayout layout;
    private final int shard;
    private final ServerCounters counters;
    private final Slot[] slots;
    private final double[] sum;

    private long currentRound = -1;
    private boolean open;
    private boolean completedRound;
    private long progressNs;
    private long roundMask;
    private int baseChunk;
    private boolean meanDue;

    /** One chunk in flight: every worker's gradient for it and, once averaged, its mean. */
    static final class Slot {
        final float[][] gradients;
        final float[] mean;
        int chunk = -1;
        long arrived;
        boolean averaged;
        long voterMask;

        Slot(final int workers, final int chunkParams) {
            gradients = new float[workers][chunkParams];
            mean = new float[chunkParams];
        }

        void reset(final int chunk) {
            this.chunk = chunk;
            arrived = 0;
            averaged = false;
        }
    }

    /**
     * @param layout       the shard's dense chunk grid ({@link GradientChunkFlyweight#CHUNK_WORDS} words a chunk).
     * @param shard        index of the shard.
     * @param workers      of the job.
     * @param windowChunks chunks held at once.
     * @param counters     where chunks averaged, rounds and voters are counted.
     */
    MeanWindow(final ChunkLayout layout, final int shard, final int workers, final int windowChunks, final ServerCounters counters) {
        this.layout = layout;
        this.shard = shard;
        this.counters = counters;
        final int chunkParams = layout.chunkWords() * Long.SIZE;
        this.sum = new double[chunkParams];
        this.slots = new Slot[windowChunks];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Slot(workers, chunkParams);
        }
    }

    long currentRound() {
        return currentRound;
    }

    boolean isOpen() {
        return open;
    }

    boolean hasCompletedRound() {
        return completedRound;
    }

    long roundMask() {
        return roundMask;
    }

    /**
     * @param frame  a GRADIENT_CHUNK from a known worker of the job.
     * @param length of the message.
     * @return why the frame is not a gradient chunk of this shard's grid, or null when it is.
     */
    RejectReason checkFrame(final MessageHeaderFlyweight frame, final int length) {
        if (frame.shard() != shard) {
            return RejectReason.WRONG_SHARD;
        }
        final int chunk = layout.chunkAt(frame.chunkWordOffset());
        if (chunk < 0 || frame.chunkWords() != layout.wordsOf(chunk)) {
            return RejectReason.OUT_OF_RANGE;
        }
        if (frame.encoding() != Encoding.FP32) {
            return RejectReason.MALFORMED;
        }
        if (length != GradientChunkFlyweight.length(layout.paramsOf(frame.chunkWordOffset(), frame.chunkWords()))) {
            return RejectReason.BAD_LENGTH;
        }
        return null;
    }

    long openableRound(final long helloRound) {
        return currentRound >= 0 ? currentRound + 1 : helloRound;
    }

    void open(final long round, final long nowNs) {
        currentRound = round;
        open = true;
        progressNs = nowNs;
        roundMask = 0;
        baseChunk = 0;
        for (final Slot slot : slots) {
            slot.reset(-1);
        }
    }

    void discard() {
        open = false;
        for (final Slot slot : slots) {
            slot.reset(-1);
        }
    }

    int chunkOf(final MessageHeaderFlyweight frame) {
        return layout.chunkAt(frame.chunkWordOffset());
    }

    RejectReason checkArrival(final int chunk, final int worker) {
        if (chunk < baseChunk) {
            return RejectReason.DUPLICATE;
        }
        if (roundMask != 0 && (roundMask & (1L << worker)) == 0) {
            return RejectReason.LATE;
        }
        return null;
    }

    boolean isBeyond(final int chunk) {
        return chunk >= baseChunk + slots.length;
    }

    /**
     * Copy a gradient chunk into its slot.
     *
     * @return {@code DUPLICATE} when the worker's chunk is in already or the chunk was averaged, otherwise null.
     */
    RejectReason add(final GradientChunkFlyweight frame, final int chunk, final int worker) {
        final Slot slot = slots[chunk % slots.length];
        if (slot.chunk != chunk) {
            slot.reset(chunk);
        }
        final long bit = 1L << worker;
        if ((slot.arrived & bit) != 0 || slot.averaged) {
            return RejectReason.DUPLICATE;
        }
        frame.decode((int) layout.paramsOf(layout.wordOffset(chunk), layout.wordsOf(chunk)), slot.gradients[worker], 0);
        slot.arrived |= bit;
        return null;
    }

    void arrived(final int chunk, final long activeMask) {
        final Slot slot = slots[chunk % slots.length];
        meanDue |= slot.chunk == chunk && isReady(slot, activeMask);
    }

    void excuse(final int worker, final int minVoters) {
        final long bit = 1L << worker;
        if (open && roundMask != 0 && (roundMask & bit) != 0 && Long.bitCount(roundMask & ~bit) >= minVoters) {
            roundMask &= ~bit;
            meanDue = true;
        } else if (open && roundMask == 0) {
            meanDue = true;
        }
    }

    boolean meanDue() {
        return meanDue;
    }

    /**
     * Average every chunk of the window whose required gradients are in, in chunk order.
     *
     * @param activeMask the workers a round waits for before its voters are fixed.
     * @return chunks averaged.
     */
    int averageReady(final long activeMask) {
        if (!meanDue) {
            return 0;
        }
        meanDue = false;
        int averaged = 0;
        if (open) {
            for (int c = baseChunk; c < Math.min(layout.chunkCount(), baseChunk + slots.length); c++) {
                final Slot slot = slots[c % slots.length];
                if (slot.chunk == c && isReady(slot, activeMask)) {
                    final long voters = roundMask != 0 ? slot.arrived & roundMask : slot.arrived;
                    if (roundMask == 0) {
                        roundMask = voters;
                    }
                    average(slot, (int) layout.paramsOf(layout.wordOffset(c), layout.wordsOf(c)), voters);
                    averaged++;
                }
            }
        }
        return averaged;
    }

    /** @return the oldest chunk of the open round when it is averaged and not yet published, otherwise null. */
    Slot nextToPublish() {
        if (!open || baseChunk >= layout.chunkCount()) {
            return null;
        }
        final Slot slot = slots[baseChunk % slots.length];
        return slot.chunk == baseChunk && slot.averaged ? slot : null;
    }

    /**
     * The oldest chunk's mean is published: the window moves on, and the round completes with its last chunk.
     *
     * @return true when the round completed.
     */
    boolean published(final long nowNs, final long activeMask) {
        slots[baseChunk % slots.length].reset(-1);
        baseChunk++;
        progressNs = nowNs;
        if (baseChunk == layout.chunkCount()) {
            open = false;
            completedRound = true;
            counters.votersLastRound().setRelease(Long.bitCount(roundMask));
            counters.rounds().incrementRelease();
            return true;
        }
        final Slot next = slots[baseChunk % slots.length];
        meanDue |= next.chunk == baseChunk && isReady(next, activeMask);
        return false;
    }

    boolean deadlinePassed(final long nowNs, final long timeoutNs) {
        return open && nowNs - progressNs > timeoutNs;
    }

    boolean isOldestChunkAveraged() {
        final Slot base = slots[baseChunk % slots.length];
        return base.chunk == baseChunk && base.averaged;
    }

    void progress(final long nowNs) {
        progressNs = nowNs;
    }

    long required(final long activeMask) {
        return roundMask != 0 ? roundMask : activeMask;
    }

    long presentInOldestChunk() {
        final Slot base = slots[baseChunk % slots.length];
        final long arrived = base.chunk == baseChunk ? base.arrived : 0;
        return roundMask != 0 ? arrived & roundMask : arrived;
    }

    void goOnWith(final long present, final long nowNs) {
        roundMask = present;
        progressNs = nowNs;
        meanDue = true;
    }

    void abort() {
        open = false;
    }

    private boolean isReady(final Slot slot, final long activeMask) {
        final long required = roundMask != 0 ? roundMask : activeMask;
        return !slot.averaged && (slot.arrived & required) == required;
    }

    private void average(final Slot slot, final int params, final long voterMask) {
        java.util.Arrays.fill(sum, 0, params, 0.0);
        for (long m = voterMask; m != 0; m &= m - 1) {
            final float[] g = slot.gradients[Long.numberOfTrailingZeros(m)];
            for (int j = 0; j < params; j++) {
                sum[j] += g[j];
            }
        }
        final double voters = Long.bitCount(voterMask);
        for (int j = 0; j < params; j++) {
            slot.mean[j] = (float) (sum[j] / voters);
        }
        slot.voterMask = voterMask;
        slot.averaged = true;
        counters.chunksVoted().incrementPlain();
    }
}
