package io.dlion.aeron.server;

import io.dlion.aeron.RejectReason;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.vote.VoterSet;
import org.agrona.DirectBuffer;

/**
 * The window of one slice server: the round open now, and the chunks in flight, aggregated chunk by chunk by its
 * {@link Aggregation} (sign votes voted, or fp32 gradients averaged).
 * <p>
 * A round is opened by its first chunk ({@link #open}) and completes when its last chunk's result is published
 * ({@link #published}). Payloads are copied out of Aeron's receive buffer into {@code windowChunks} slots of one chunk
 * per worker; a chunk beyond the window ({@link #isBeyond}) is held back by the caller until the oldest chunk is
 * published. A chunk is ready once every required worker's payload for it is in: the round's voters once its first chunk
 * was aggregated, before that every active worker (the membership's). The first chunk aggregated fixes the round's
 * voters.
 * <p>
 * The window never decides <em>when</em> to aggregate: it records that a chunk may be due ({@link #aggregateDue()}) and
 * aggregates every ready chunk when its owner's duty cycle calls {@link #aggregateReady(long)}. Deadline:
 * {@link #deadlinePassed} when the round made no progress (opened, or published a chunk) for the round timeout; the owner
 * then drops the workers missing from the oldest chunk and either goes on with the others ({@link #goOnWith}) or aborts
 * the round ({@link #abort()}). Not thread-safe: the server's agent thread only.
 */
final class ChunkWindow {
    private final ChunkLayout layout;
    private final int slice;
    private final Aggregation aggregation;
    private final ServerCounters counters;
    private final ChunkSlot[] slots;
    private final int minVoters;

    private long currentRound = -1;
    private boolean open;
    private boolean completedRound;
    private long progressNs;
    /** The open round's voters, fixed by its first chunk aggregated; empty before. */
    private final VoterSet roundVoters;
    private final VoterSet present;
    private int baseChunk;
    private boolean aggregateDue;

    /**
     * @param layout       the slice's chunk grid.
     * @param slice        index of the slice.
     * @param workers      of the job.
     * @param windowChunks chunks held at once.
     * @param aggregation  what the chunks carry, and how they are aggregated and sent.
     * @param minVoters    the quorum: a round's voters are never fewer (its chunks wait, then the deadline aborts it).
     * @param counters     where chunks aggregated, rounds and voters are counted.
     */
    ChunkWindow(final ChunkLayout layout, final int slice, final int workers, final int windowChunks, final Aggregation aggregation,
        final int minVoters, final ServerCounters counters) {
        this.minVoters = minVoters;
        this.layout = layout;
        this.slice = slice;
        this.aggregation = aggregation;
        this.counters = counters;
        this.roundVoters = new VoterSet(workers);
        this.present = new VoterSet(workers);
        this.slots = new ChunkSlot[windowChunks];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new ChunkSlot(i, workers);
        }
    }

    /** @return the highest round opened so far, -1 before the first chunk. */
    long currentRound() {
        return currentRound;
    }

    /** @return true while a round is open (opened, neither completed nor aborted). */
    boolean isOpen() {
        return open;
    }

    /** @return true once a round has completed (every chunk published). */
    boolean hasCompletedRound() {
        return completedRound;
    }

    /** @return the open round's voters, fixed by its first chunk aggregated; empty before. */
    VoterSet roundVoters() {
        return roundVoters;
    }

    /** @return true once the open round's voters are fixed (its first chunk aggregated, or a deadline went on without some). */
    boolean votersFixed() {
        return !roundVoters.isEmpty();
    }

    /**
     * @param frame  a chunk of the aggregation's type from a known worker of the job.
     * @param length of the message, without a frame tag.
     * @return why the frame is not a chunk of this slice's grid, or null when it is.
     */
    RejectReason checkFrame(final MessageHeaderFlyweight frame, final int length) {
        if (frame.slice() != slice) {
            return RejectReason.WRONG_SLICE;
        }
        final int chunk = layout.chunkAt(frame.chunkWordOffset());
        if (chunk < 0 || frame.chunkWords() != layout.wordsOf(chunk)) {
            return RejectReason.OUT_OF_RANGE;
        }
        if (frame.encoding() != aggregation.encoding()) {
            return RejectReason.MALFORMED;
        }
        if (length != aggregation.frameLength(layout.paramsOf(frame.chunkWordOffset(), frame.chunkWords()))) {
            return RejectReason.BAD_LENGTH;
        }
        return null;
    }

    /**
     * @param helloRound the round the sender's HELLO named.
     * @return the highest round a chunk may open: the one after the current, or on a fresh server the HELLO's.
     */
    long openableRound(final long helloRound) {
        return currentRound >= 0 ? currentRound + 1 : helloRound;
    }

    /**
     * Open a round: its voters are not fixed yet and no chunk is in.
     *
     * @param round the round.
     * @param nowNs now, the round's first progress.
     */
    void open(final long round, final long nowNs) {
        currentRound = round;
        open = true;
        progressNs = nowNs;
        roundVoters.clear();
        baseChunk = 0;
        for (final ChunkSlot slot : slots) {
            slot.reset(-1);
        }
    }

    /** Close the open round without a result (only laggards sent in it, see {@link Membership}). */
    void discard() {
        open = false;
        for (final ChunkSlot slot : slots) {
            slot.reset(-1);
        }
    }

    /**
     * @param frame header of a chunk of the open round, checked by {@link #checkFrame}.
     * @return the chunk index.
     */
    int chunkOf(final MessageHeaderFlyweight frame) {
        return layout.chunkAt(frame.chunkWordOffset());
    }

    /**
     * @param chunk  of a chunk of the open round.
     * @param worker the sender.
     * @return {@code DUPLICATE} for a chunk already published, {@code LATE} for a worker left out of the round's voters,
     *     otherwise null.
     */
    RejectReason checkArrival(final int chunk, final int worker) {
        if (chunk < baseChunk) {
            return RejectReason.DUPLICATE;
        }
        if (votersFixed() && !roundVoters.contains(worker)) {
            return RejectReason.LATE;
        }
        return null;
    }

    /**
     * @param chunk of a chunk of the open round.
     * @return true when the chunk is beyond the window: it must be offered again once the oldest chunk is published.
     */
    boolean isBeyond(final int chunk) {
        return chunk >= baseChunk + slots.length;
    }

    /**
     * Copy a worker's chunk into its slot.
     *
     * @param buffer holding the message, checked by {@link #checkFrame}.
     * @param offset of the message.
     * @param chunk  its chunk, in the window.
     * @param worker the sender.
     * @return {@code DUPLICATE} when the worker's chunk is in already or the chunk was aggregated, otherwise null.
     */
    RejectReason add(final DirectBuffer buffer, final int offset, final int chunk, final int worker) {
        final ChunkSlot slot = slots[chunk % slots.length];
        if (slot.chunk != chunk) {
            slot.reset(chunk);
        }
        if (slot.arrived.contains(worker) || slot.aggregated) {
            return RejectReason.DUPLICATE;
        }
        aggregation.store(buffer, offset, slot, worker, layout.paramsOf(layout.wordOffset(chunk), layout.wordsOf(chunk)));
        slot.arrived.add(worker);
        return null;
    }

    /**
     * Note that a chunk got a payload: an aggregation is due when the chunk now has every required one.
     *
     * @param chunk  the chunk, in the window.
     * @param active the workers a round waits for before its voters are fixed.
     */
    void arrived(final int chunk, final VoterSet active) {
        final ChunkSlot slot = slots[chunk % slots.length];
        aggregateDue |= slot.chunk == chunk && isReady(slot, active);
    }

    /**
     * A worker is no longer waited for (it rejoins with a later first round): it leaves the open round's voters when
     * at least {@code minVoters} others remain.
     *
     * @param worker    the worker.
     * @param minVoters the quorum.
     */
    void excuse(final int worker, final int minVoters) {
        if (open && votersFixed() && roundVoters.contains(worker) && roundVoters.count() - 1 >= minVoters) {
            roundVoters.remove(worker);
            aggregateDue = true;
        } else if (open && !votersFixed()) {
            aggregateDue = true;
        }
    }

    /** @return true when a chunk may have every required payload: the duty cycle must call {@link #aggregateReady}. */
    boolean aggregateDue() {
        return aggregateDue;
    }

    /**
     * Aggregate every chunk of the window whose required payloads are in, in chunk order.
     *
     * @param active the workers a round waits for before its voters are fixed.
     * @return chunks aggregated.
     */
    int aggregateReady(final VoterSet active) {
        if (!aggregateDue) {
            return 0;
        }
        aggregateDue = false;
        int aggregated = 0;
        if (open) {
            for (int c = baseChunk; c < Math.min(layout.chunkCount(), baseChunk + slots.length); c++) {
                final ChunkSlot slot = slots[c % slots.length];
                if (slot.chunk == c && isReady(slot, active)) {
                    slot.voters.copyFrom(slot.arrived);
                    if (votersFixed()) {
                        slot.voters.and(roundVoters);
                    } else {
                        roundVoters.copyFrom(slot.voters);
                    }
                    final int words = layout.wordsOf(c);
                    aggregation.aggregate(slot, words, layout.paramsOf(layout.wordOffset(c), words));
                    slot.aggregated = true;
                    counters.chunksVoted().incrementPlain();
                    aggregated++;
                }
            }
        }
        return aggregated;
    }

    /** @return the oldest chunk of the open round when it is aggregated and not yet published, otherwise null. */
    ChunkSlot nextToPublish() {
        if (!open || baseChunk >= layout.chunkCount()) {
            return null;
        }
        final ChunkSlot slot = slots[baseChunk % slots.length];
        return slot.chunk == baseChunk && slot.aggregated ? slot : null;
    }

    /**
     * The oldest chunk's result is published: the window moves on, and the round completes with its last chunk.
     *
     * @param nowNs  now, the round's latest progress.
     * @param active the workers a round waits for before its voters are fixed.
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
        final ChunkSlot next = slots[baseChunk % slots.length];
        aggregateDue |= next.chunk == baseChunk && isReady(next, active);
        return false;
    }

    /**
     * @param nowNs     now.
     * @param timeoutNs the round timeout.
     * @return true when a round is open and made no progress for longer than the timeout.
     */
    boolean deadlinePassed(final long nowNs, final long timeoutNs) {
        return open && nowNs - progressNs > timeoutNs;
    }

    /**
     * The owner did not run for a while (its process was paused): the open round's deadline moves on by as much.
     *
     * @param pauseNs how long.
     */
    void paused(final long pauseNs) {
        if (open) {
            progressNs += pauseNs;
        }
    }

    /** @return true when the oldest chunk is aggregated (its result waits for the publication): no worker is missing. */
    boolean isOldestChunkAggregated() {
        final ChunkSlot base = slots[baseChunk % slots.length];
        return base.chunk == baseChunk && base.aggregated;
    }

    /**
     * Count the time from now as progress (the round is not stuck on missing payloads).
     *
     * @param nowNs now.
     */
    void progress(final long nowNs) {
        progressNs = nowNs;
    }

    /**
     * @param active the workers a round waits for before its voters are fixed.
     * @return the workers the oldest chunk waits for.
     */
    VoterSet required(final VoterSet active) {
        return votersFixed() ? roundVoters : active;
    }

    /**
     * @return the required workers whose payload for the oldest chunk is in (any worker's before the voters are fixed);
     *     the set is the window's, valid until its next call.
     */
    VoterSet presentInOldestChunk() {
        final ChunkSlot base = slots[baseChunk % slots.length];
        if (base.chunk != baseChunk) {
            return present.clear();
        }
        present.copyFrom(base.arrived);
        return votersFixed() ? present.and(roundVoters) : present;
    }

    /**
     * At the deadline, with at least the quorum present: the round's voters become the workers present.
     *
     * @param present workers whose payload for the oldest chunk is in.
     * @param nowNs   now.
     */
    void goOnWith(final VoterSet present, final long nowNs) {
        roundVoters.copyFrom(present);
        progressNs = nowNs;
        aggregateDue = true;
    }

    /** At the deadline, below the quorum: the round closes without a result. */
    void abort() {
        open = false;
    }

    private boolean isReady(final ChunkSlot slot, final VoterSet active) {
        final boolean fixed = votersFixed();
        // the active workers can be fewer than the quorum (a worker rejoining is not waited for until its first round):
        // the voters are then not fixed below it, the chunk waits for more payloads or the deadline (which aborts)
        return !slot.aggregated && slot.arrived.containsAll(fixed ? roundVoters : active) && (fixed || slot.arrived.count() >= minVoters);
    }
}
