package io.dlion.aeron.wire;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encoder and decoder of a {@link MessageType#GRADIENT_CHUNK}: one chunk of a worker's fp32 gradient, one Aeron frame
 * (dense data-parallel training, the baseline D-Lion is measured against).
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  |  Magic 0xD1   |    Version    |   Type = 6    |   FP32 = 5    |  0
 *  +---------------+---------------+---------------+---------------+
 *  |                            Job Id                             |  4
 *  +---------------------------------------------------------------+
 *  |                         Round Number                          |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  Chunk Word Offset (global)                   | 16
 *  +-------------------------------+-------------------------------+
 *  |     Chunk Length in Words     |           Worker Id           | 20
 *  +-------------------------------+-------------------------------+
 *  |          Slice Index          |                               | 24
 *  +-------------------------------+        0 (no voter set)       |
 *  |                                                               | 28
 *  +---------------------------------------------------------------+
 *  |     Gradient, one little-endian fp32 per parameter ...       ... 32
 *  +---------------------------------------------------------------+
 * </pre>
 * A chunk covers {@value #CHUNK_WORDS} words of 64 parameters (fewer only at the end of the vector), so the grid is a
 * {@link ChunkLayout} of {@value #CHUNK_WORDS} words: 1,280 parameters, a 5,120-byte body, one frame under
 * {@code mtu=8k}. The header's offsets are {@link MessageHeaderFlyweight}'s.
 */
public final class GradientChunkFlyweight {
    /** Offset of the gradient values. */
    public static final int BODY_OFFSET = MessageHeaderFlyweight.HEADER_LENGTH;
    /** Words (64 parameters each) per dense chunk: 1,280 fp32 values, 5,120 bytes. */
    public static final int CHUNK_WORDS = ChunkLayout.WORD_ALIGNMENT;

    private final MessageHeaderFlyweight header = new MessageHeaderFlyweight();

    /**
     * @param buffer to write the chunk into.
     * @param offset at which the chunk starts.
     * @return this for a fluent API.
     */
    public GradientChunkFlyweight wrap(final MutableDirectBuffer buffer, final int offset) {
        header.wrap(buffer, offset);
        return this;
    }

    /**
     * @param buffer holding a received chunk (mutable, as Aeron's term buffers are).
     * @param offset at which the chunk starts.
     * @return this for a fluent API.
     */
    public GradientChunkFlyweight wrapForRead(final DirectBuffer buffer, final int offset) {
        header.wrapForRead(buffer, offset);
        return this;
    }

    /** @return the common header of the wrapped chunk. */
    public MessageHeaderFlyweight header() {
        return header;
    }

    /**
     * @param chunkParams parameters the chunk covers.
     * @return the length of the chunk's message, header and values.
     */
    public static int length(final long chunkParams) {
        return BODY_OFFSET + Encoding.bodyLength(Encoding.FP32, 0, chunkParams, 1);
    }

    /**
     * Write a whole gradient chunk at the wrapped offset: the header, then {@code values[wordOffset * 64, + chunkParams)}.
     *
     * @param jobId       of the job.
     * @param round       round number.
     * @param wordOffset  global word offset of the chunk.
     * @param words       words the chunk covers.
     * @param workerId    the sending worker.
     * @param slice       index of the server's slice.
     * @param values      the whole gradient vector.
     * @param chunkParams parameters the chunk covers.
     * @return the length written.
     */
    public int encode(final int jobId, final long round, final int wordOffset, final int words, final int workerId, final int slice,
        final float[] values, final int chunkParams) {
        header.writeHeader(MessageType.GRADIENT_CHUNK, Encoding.FP32)
            .jobId(jobId)
            .round(round)
            .chunkWordOffset(wordOffset)
            .chunkWords(words)
            .workerId(workerId)
            .slice(slice)
            .count(0);
        putFloats(header.buffer(), header.bodyOffset(), values, wordOffset << 6, chunkParams);
        return BODY_OFFSET + chunkParams * Float.BYTES;
    }

    /**
     * Read the values into {@code dst[dstOffset, dstOffset + chunkParams)}.
     *
     * @param chunkParams parameters the chunk covers.
     * @param dst         where they go.
     * @param dstOffset   index of the chunk's first value in {@code dst}.
     */
    public void decode(final int chunkParams, final float[] dst, final int dstOffset) {
        getFloats(header.buffer(), header.bodyOffset(), dst, dstOffset, chunkParams);
    }

    static void putFloats(final MutableDirectBuffer buffer, final int index, final float[] values, final int from, final int count) {
        for (int i = 0; i < count; i++) {
            buffer.putFloat(index + i * Float.BYTES, values[from + i], ByteOrder.LITTLE_ENDIAN);
        }
    }

    static void getFloats(final DirectBuffer buffer, final int index, final float[] dst, final int dstOffset, final int count) {
        for (int i = 0; i < count; i++) {
            dst[dstOffset + i] = buffer.getFloat(index + i * Float.BYTES, ByteOrder.LITTLE_ENDIAN);
        }
    }
}
