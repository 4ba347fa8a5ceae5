package io.dlion.aeron.server;

import io.dlion.vote.VoterSet;

/**
 * One chunk in flight in the {@link ChunkWindow}: which chunk it holds, whose payloads for it are in, and, once
 * aggregated, whose it counts. The payloads themselves are the {@link Aggregation}'s, kept per slot {@link #index}.
 */
final class ChunkSlot {
    /** Position of the slot in its window. */
    final int index;
    /** Workers whose payload for the chunk is in. */
    final VoterSet arrived;
    /** Once aggregated: the workers the result counts. */
    final VoterSet voters;
    int chunk = -1;
    boolean aggregated;

    ChunkSlot(final int index, final int workers) {
        this.index = index;
        this.arrived = new VoterSet(workers);
        this.voters = new VoterSet(workers);
    }

    void reset(final int chunk) {
        this.chunk = chunk;
        arrived.clear();
        aggregated = false;
    }
}
