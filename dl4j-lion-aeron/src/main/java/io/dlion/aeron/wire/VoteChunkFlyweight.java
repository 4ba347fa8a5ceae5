package io.dlion.aeron.wire;

import io.dlion.codec.SignEncoding;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encoder and decoder of a {@link MessageType#VOTE_CHUNK}: one chunk of a worker's packed sign vote, one Aeron frame.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  |  Magic 0xD1   |    Version    |   Type = 2    | SIGN_BITS = 1 |  0
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
 *  |        Signs, 1 bit per parameter, ceil(p / 8) bytes ...     ... 32
 *  +---------------------------------------------------------------+
 * </pre>
 * The body is {@link SignEncoding}'s packed layout of the {@code p} parameters the chunk covers (64 a word, fewer only
 * at the end of the vector). Fields are little-endian; the header's offsets are {@link MessageHeaderFlyweight}'s.
 */
public final class VoteChunkFlyweight {
    /** Offset of the signs. */
    public static final int BODY_OFFSET = MessageHeaderFlyweight.HEADER_LENGTH;

    private final MessageHeaderFlyweight header = new MessageHeaderFlyweight();
    private final LittleEndianView view = new LittleEndianView();

    /**
     * @param buffer to write the chunk into.
     * @param offset at which the chunk starts.
     * @return this for a fluent API.
     */
    public VoteChunkFlyweight wrap(final MutableDirectBuffer buffer, final int offset) {
        header.wrap(buffer, offset);
        return this;
    }

    /**
     * @param buffer holding a received chunk (mutable, as Aeron's term buffers are).
     * @param offset at which the chunk starts.
     * @return this for a fluent API.
     */
    public VoteChunkFlyweight wrapForRead(final DirectBuffer buffer, final int offset) {
        header.wrapForRead(buffer, offset);
        return this;
    }

    /** @return the common header of the wrapped chunk. */
    public MessageHeaderFlyweight header() {
        return header;
    }

    /**
     * @param chunkParams parameters the chunk covers.
     * @return the length of the chunk's message, header and signs.
     */
    public static int length(final long chunkParams) {
        return BODY_OFFSET + Encoding.bodyLength(Encoding.SIGN_BITS, 0, chunkParams, 1);
    }

    /**
     * Write a whole vote chunk at the wrapped offset: the header, then words {@code [fromWord, fromWord + words)} of
     * {@code signs} as the body.
     *
     * @param jobId      of the job.
     * @param round      round number.
     * @param wordOffset global word offset of the chunk.
     * @param words      words the chunk covers.
     * @param workerId   the voting worker.
     * @param slice      index of the server's slice.
     * @param signs      one plane of packed signs holding the chunk's words.
     * @param params     parameters of the vector {@code signs} holds (so the last word is cut to its bytes).
     * @param fromWord   index in {@code signs} of the chunk's first word.
     * @return the length written.
     */
    public int encode(final int jobId, final long round, final int wordOffset, final int words, final int workerId, final int slice,
        final long[][] signs, final long params, final int fromWord) {
        header.writeHeader(MessageType.VOTE_CHUNK, Encoding.SIGN_BITS)
            .jobId(jobId)
            .round(round)
            .chunkWordOffset(wordOffset)
            .chunkWords(words)
            .workerId(workerId)
            .slice(slice)
            .count(0);
        final MutableDirectBuffer buffer = header.buffer();
        return BODY_OFFSET + SignEncoding.INSTANCE.encode(signs, params, fromWord, fromWord + words, view.of(buffer),
            WireBuffers.index(buffer, header.bodyOffset()));
    }

    /**
     * Read the signs into chunk-local words: word 0 of {@code signs[0]} receives the chunk's first word.
     *
     * @param chunkParams parameters the chunk covers.
     * @param signs       one plane of at least {@link MessageHeaderFlyweight#chunkWords()} words.
     */
    public void decodeSigns(final long chunkParams, final long[][] signs) {
        final MutableDirectBuffer buffer = header.buffer();
        SignEncoding.INSTANCE.decode(view.of(buffer), WireBuffers.index(buffer, header.bodyOffset()), chunkParams, 0,
            header.chunkWords(), signs);
    }
}
