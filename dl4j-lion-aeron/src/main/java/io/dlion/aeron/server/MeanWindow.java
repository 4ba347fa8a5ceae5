package io.dlion.aeron.server;

import io.dlion.aeron.RejectReason;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.GradientChunkFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.vote.VoterSet;

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
    /** The open round's voters, fixed by its first chunk averaged; empty before. */
    private final VoterSet roundVoters;
    private final VoterSet present;
    private int baseChunk;
    private boolean meanDue;

    /** One chunk in flight: every worker's gradient for it and, once averaged, its mean. */
    static final class Slot {
        final float[][] gradients;
        final float[] mean;
        int chunk = -1;
        final VoterSet arrived;
        final VoterSet voters;
        boolean averaged;

        Slot(final int workers, final int chunkParams) {
            gradients = new float[workers][chunkParams];
            mean = new float[chunkParams];
            arrived = new VoterSet(workers);
            voters = new VoterSet(workers);
        }

        void reset(final int chunk) {
            this.chunk = chunk;
            arrived.clear();
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
        this.roundVoters = new VoterSet(workers);
        this.present = new VoterSet(workers);
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

    /** @return true once the open round's voters are fixed. */
    boolean votersFixed() {
        return !roundVoters.isEmpty();
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
        roundVoters.clear();
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
        if (votersFixed() && !roundVoters.contains(worker)) {
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
        if (slot.arrived.contains(worker) || slot.averaged) {
            return RejectReason.DUPLICATE;
        }
        frame.decode((int) layout.paramsOf(layout.wordOffset(chunk), layout.wordsOf(chunk)), slot.gradients[worker], 0);
        slot.arrived.add(worker);
        return null;
    }

    void arrived(final int chunk, final VoterSet active) {
        final Slot slot = slots[chunk % slots.length];
        meanDue |= slot.chunk == chunk && isReady(slot, active);
    }

    void excuse(final int worker, final int minVoters) {
        if (open && votersFixed() && roundVoters.contains(worker) && roundVoters.count() - 1 >= minVoters) {
            roundVoters.remove(worker);
            meanDue = true;
        } else if (open && !votersFixed()) {
            meanDue = true;
        }
    }

    boolean meanDue() {
        return meanDue;
    }

    /**
     * Average every chunk of the window whose required gradients are in, in chunk order.
     *
     * @param active the workers a round waits for before its voters are fixed.
     * @return chunks averaged.
     */
    int averageReady(final VoterSet active) {
        if (!meanDue) {
            return 0;
        }
        meanDue = false;
        int averaged = 0;
        if (open) {
            for (int c = baseChunk; c < Math.min(layout.chunkCount(), baseChunk + slots.length); c++) {
                final Slot slot = slots[c % slots.length];
                if (slot.chunk == c && isReady(slot, active)) {
                    slot.voters.copyFrom(slot.arrived);
                    if (votersFixed()) {
                        slot.voters.and(roundVoters);
                    } else {
                        roundVoters.copyFrom(slot.voters);
                    }
                    average(slot, (int) layout.paramsOf(layout.wordOffset(c), layout.wordsOf(c)));
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
    boolean published(final long nowNs, final VoterSet active) {
        slots[baseChunk % slots.length].reset(-1);
        baseChunk++;
        progressNs = nowNs;
        if (baseChunk == layout.chunkCount()) {
            open = false;
            completedRound = true;
            counters.votersLastRound().setRelease(roundVoters.count());
            counters.rounds().incrementRelease();
            return true;
        }
        final Slot next = slots[baseChunk % slots.length];
        meanDue |= next.chunk == baseChunk && isReady(next, active);
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

    VoterSet required(final VoterSet active) {
        return votersFixed() ? roundVoters : active;
    }

    /** @return the required workers whose gradient for the oldest chunk is in; the window's set, valid until the next call. */
    VoterSet presentInOldestChunk() {
        final Slot base = slots[baseChunk % slots.length];
        if (base.chunk != baseChunk) {
            return present.clear();
        }
        present.copyFrom(base.arrived);
        return votersFixed() ? present.and(roundVoters) : present;
    }

    void goOnWith(final VoterSet present, final long nowNs) {
        roundVoters.copyFrom(present);
        progressNs = nowNs;
        meanDue = true;
    }

    void abort() {
        open = false;
    }

    private boolean isReady(final Slot slot, final VoterSet active) {
        return !slot.averaged && slot.arrived.containsAll(votersFixed() ? roundVoters : active);
    }

    private void average(final Slot slot, final int params) {
        java.util.Arrays.fill(sum, 0, params, 0.0);
        for (int w = slot.voters.next(0); w >= 0; w = slot.voters.next(w + 1)) {
            final float[] g = slot.gradients[w];
            for (int j = 0; j < params; j++) {
                sum[j] += g[j];
            }
        }
        final double voters = slot.voters.count();
        for (int j = 0; j < params; j++) {
            slot.mean[j] = (float) (sum[j] / voters);
        }
        slot.averaged = true;
        counters.chunksVoted().incrementPlain();
    }
}
