package io.dlion.aeron.server;

import org.agrona.DirectBuffer;

/**
 * The payload-specific part of a slice server: how a chunk's payloads are kept as they arrive, how a chunk is aggregated
 * once its voters are fixed, and how its result is sent. The {@link ChunkWindow} decides which chunk, which workers and
 * when; an aggregation keeps one chunk's data per window slot ({@link ChunkSlot#index}). Not thread-safe: the server's
 * agent thread only.
 */
interface Aggregation {
    /** @return the message type of the chunks it takes ({@code VOTE_CHUNK} or {@code GRADIENT_CHUNK}). */
    int frameType();

    /** @return the body encoding of the chunks it takes. */
    int encoding();

    /**
     * @param chunkParams parameters of a chunk.
     * @return the length of its message, without a frame tag.
     */
    int frameLength(long chunkParams);

    /**
     * Copy a worker's chunk out of Aeron's buffer into a slot.
     *
     * @param buffer      holding the message, checked by the window.
     * @param offset      of the message.
     * @param slot        the window slot of the chunk.
     * @param worker      the sender.
     * @param chunkParams parameters of the chunk.
     */
    void store(DirectBuffer buffer, int offset, ChunkSlot slot, int worker, long chunkParams);

    /**
     * Aggregate a slot's chunk over its voters ({@link ChunkSlot#voterMask}).
     *
     * @param slot        the chunk.
     * @param words       64-parameter words of the chunk.
     * @param chunkParams parameters of the chunk.
     */
    void aggregate(ChunkSlot slot, int words, long chunkParams);

    /**
     * Send an aggregated chunk's result, continuing where a refused offer stopped.
     *
     * @param publisher the server's publication.
     * @param round     the round.
     * @param slot      the chunk.
     * @return true when the whole result went out.
     */
    boolean publish(ResultPublisher publisher, long round, ChunkSlot slot);
}
