package io.dlion.aeron.server;

import io.dlion.aeron.RejectReason;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.VoteChunkFlyweight;
import io.dlion.codec.DownlinkEncoding;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoteRule;
import io.dlion.vote.VoterSet;

/**
 * The vote window of one shard's server: the round open now, and the votes of its chunks in flight, aggregated chunk by
 * chunk.
 * <p>
 * A round is opened by its first vote ({@link #open}) and completes when its last chunk's result is published
 * ({@link #published}). Votes are copied out of Aeron's receive buffer into {@code windowChunks} slots of one chunk per
 * worker; a chunk beyond the window ({@link #isBeyond}) is held back by the caller until the oldest chunk is published.
 * A chunk is ready once every required worker's vote for it is in: the round's voters once its first chunk was voted,
 * before that every active worker (the membership's). The first chunk voted fixes the round's voters.
 * <p>
 * The window never decides <em>when</em> to vote: it records that a vote may be due ({@link #voteDue()}) and votes
 * every ready chunk when its owner's duty cycle calls {@link #voteReady(long)}. Deadline: {@link #deadlinePassed} when
 * the round made no progress (opened, or published a chunk) for the round timeout; the owner then drops the workers
 * missing from the oldest chunk and either goes on with the others ({@link #goOnWith}) or aborts the round
 * ({@link #abort()}). Not thread-safe: the server's agent thread only.
 */
final class VoteWindow {
    private final ChunkLayout layout;
    private final int shard;
    private final boolean majority;
    private final VoteRule rule;
    private final ServerCounters counters;
    private final ChunkSlot[] slots;
    private final int minVoters;

    private long currentRound = -1;
    private boolean open;
    private boolean completedRound;
    private long progressNs;
    /** The open round's voters, fixed by its first chunk voted; empty before. */
    private final VoterSet roundVoters;
    private final VoterSet present;
    private int baseChunk;
    private boolean voteDue;

    /**
     * @param layout       the shard's chunk grid.
     * @param shard        index of the shard.
     * @param workers      of the job.
     * @param windowChunks chunks held at once.
     * @param rule         majority vote or averaging.
     * @param minVoters    the quorum: a round's voters are never fewer (its chunks wait, then the deadline aborts it).
     * @param counters     where chunks voted, ties, rounds and voters are counted.
     */
    VoteWindow(final ChunkLayout layout, final int shard, final int workers, final int windowChunks, final VoteRule rule,
        final int minVoters, final ServerCounters counters) {
        this.minVoters = minVoters;
        this.layout = layout;
        this.shard = shard;
        this.rule = rule;
        this.majority = rule == VoteRule.MAJORITY;
        this.counters = counters;
        final int planes = majority ? 2 : VoteAggregator.planes(workers);
        this.roundVoters = new VoterSet(workers);
        this.present = new VoterSet(workers);
        this.slots = new ChunkSlot[windowChunks];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new ChunkSlot(workers, layout.chunkWords(), planes);
        }
    }

    /** @return the highest round opened so far, -1 before the first vote. */
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

    /** @return the open round's voters, fixed by its first chunk voted; empty before. */
    VoterSet roundVoters() {
        return roundVoters;
    }

    /** @return true once the open round's voters are fixed (its first chunk voted, or a deadline went on without some). */
    boolean votersFixed() {
        return !roundVoters.isEmpty();
    }

    /**
     * @param vote   a VOTE_CHUNK from a known worker of the job.
     * @param length of the message.
     * @return why the frame is not a vote of this shard's grid, or null when it is.
     */
    RejectReason checkFrame(final MessageHeaderFlyweight vote, final int length) {
        if (vote.shard() != shard) {
            return RejectReason.WRONG_SHARD;
        }
        final int chunk = layout.chunkAt(vote.chunkWordOffset());
        if (chunk < 0 || vote.chunkWords() != layout.wordsOf(chunk)) {
            return RejectReason.OUT_OF_RANGE;
        }
        if (vote.encoding() != Encoding.SIGN_BITS) {
            return RejectReason.MALFORMED;
        }
        if (length != VoteChunkFlyweight.length(layout.paramsOf(vote.chunkWordOffset(), vote.chunkWords()))) {
            return RejectReason.BAD_LENGTH;
        }
        return null;
    }

    /**
     * @param helloRound the round the voter's HELLO named.
     * @return the highest round a vote may open: the one after the current, or on a fresh server the HELLO's.
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

    /** Close the open round without a vote (only laggards voted in it, see {@link Membership}). */
    void discard() {
        open = false;
        for (final ChunkSlot slot : slots) {
            slot.reset(-1);
        }
    }

    /**
     * @param vote header of a vote of the open round, checked by {@link #checkFrame}.
     * @return the chunk index of the vote.
     */
    int chunkOf(final MessageHeaderFlyweight vote) {
        return layout.chunkAt(vote.chunkWordOffset());
    }

    /**
     * @param chunk  of a vote of the open round.
     * @param worker the voter.
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
     * @param chunk of a vote of the open round.
     * @return true when the chunk is beyond the window: the vote must be offered again once the oldest chunk is published.
     */
    boolean isBeyond(final int chunk) {
        return chunk >= baseChunk + slots.length;
    }

    /**
     * Copy a vote into its slot.
     *
     * @param vote   the vote, wrapped.
     * @param chunk  its chunk, in the window.
     * @param worker the voter.
     * @return {@code DUPLICATE} when the worker's vote for that chunk is in already or the chunk was voted, otherwise null.
     */
    RejectReason add(final VoteChunkFlyweight vote, final int chunk, final int worker) {
        final ChunkSlot slot = slots[chunk % slots.length];
        if (slot.chunk != chunk) {
            slot.reset(chunk);
        }
        if (slot.arrived.contains(worker) || slot.voted) {
            return RejectReason.DUPLICATE;
        }
        vote.decodeSigns(layout.paramsOf(layout.wordOffset(chunk), layout.wordsOf(chunk)), slot.voteView[worker]);
        slot.arrived.add(worker);
        return null;
    }

    /**
     * Note that a chunk got a vote: a vote is due when the chunk now has every required vote.
     *
     * @param chunk      the chunk, in the window.
     * @param active the workers a round waits for before its voters are fixed.
     */
    void arrived(final int chunk, final VoterSet active) {
        final ChunkSlot slot = slots[chunk % slots.length];
        voteDue |= slot.chunk == chunk && isReady(slot, active);
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
            voteDue = true;
        } else if (open && !votersFixed()) {
            voteDue = true;
        }
    }

    /** @return true when a chunk may have every required vote: the duty cycle must call {@link #voteReady(long)}. */
    boolean voteDue() {
        return voteDue;
    }

    /**
     * Vote every chunk of the window whose required votes are in, in chunk order.
     *
     * @param active the workers a round waits for before its voters are fixed.
     * @return chunks voted.
     */
    int voteReady(final VoterSet active) {
        if (!voteDue) {
            return 0;
        }
        voteDue = false;
        int voted = 0;
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
                    vote(slot, layout.wordsOf(c));
                    voted++;
                }
            }
        }
        return voted;
    }

    /** @return the oldest chunk of the open round when it is voted and not yet published, otherwise null. */
    ChunkSlot nextToPublish() {
        if (!open || baseChunk >= layout.chunkCount()) {
            return null;
        }
        final ChunkSlot slot = slots[baseChunk % slots.length];
        return slot.chunk == baseChunk && slot.voted ? slot : null;
    }

    /**
     * The oldest chunk's result is published: the window moves on, and the round completes with its last chunk.
     *
     * @param nowNs      now, the round's latest progress.
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
        voteDue |= next.chunk == baseChunk && isReady(next, active);
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

    /** @return true when the oldest chunk is voted (its result waits for the publication): no worker is missing. */
    boolean isOldestChunkVoted() {
        final ChunkSlot base = slots[baseChunk % slots.length];
        return base.chunk == baseChunk && base.voted;
    }

    /**
     * Count the time from now as progress (the round is not stuck on missing votes).
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
     * @return the required workers whose vote for the oldest chunk is in (any worker's before the voters are fixed); the
     *     set is the window's, valid until its next call.
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
     * @param present workers whose vote for the oldest chunk is in.
     * @param nowNs   now.
     */
    void goOnWith(final VoterSet present, final long nowNs) {
        roundVoters.copyFrom(present);
        progressNs = nowNs;
        voteDue = true;
    }

    /** At the deadline, below the quorum: the round closes without a result. */
    void abort() {
        open = false;
    }

    private boolean isReady(final ChunkSlot slot, final VoterSet active) {
        final boolean fixed = votersFixed();
        // the active workers can be fewer than the quorum (a worker rejoining is not waited for until its first round):
        // the voters are then not fixed below it, the chunk waits for more votes or the deadline (which aborts)
        return !slot.voted && slot.arrived.containsAll(fixed ? roundVoters : active) && (fixed || slot.arrived.count() >= minVoters);
    }

    private void vote(final ChunkSlot slot, final int words) {
        int voters = 0;
        for (int w = slot.voters.next(0); w >= 0; w = slot.voters.next(w + 1)) {
            slot.present[voters++] = slot.votes[w];
        }
        slot.voterCount = voters;
        slot.downlink = DownlinkEncoding.of(rule, voters);
        if (majority) {
            final int ties = VoteAggregator.majority(slot.present, voters, 0, words, slot.out[0], slot.out[1]);
            counters.ties().getAndAddPlain(ties);
            slot.encoding = (voters & 1) == 1 ? Encoding.SIGN_BITS : Encoding.TERNARY;
        } else {
            VoteAggregator.count(slot.present, voters, 0, words, slot.out);
            slot.encoding = Encoding.COUNT_PLANES;
        }
        slot.voted = true;
        counters.chunksVoted().incrementPlain();
    }
}
