package io.dlion.aeron.server;

/**
 * One chunk in flight in the {@link ChunkWindow}: which chunk it holds, whose payloads for it are in, and, once
 * aggregated, whose it counts. The payloads themselves are the {@link Aggregation}'s, kept per slot {@link #index}.
 */
final class ChunkSlot {
    /** Position of the slot in its window. */
    final int index;
    int chunk = -1;
    long arrived;
    boolean aggregated;
    long voterMask;

    ChunkSlot(final int index) {
        this.index = index;
    }

    void reset(final int chunk) {
        this.chunk = chunk;
        arrived = 0;
        aggregated = false;
    }
}
