package io.dlion.aeron.wire;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encoder and decoder of a {@link MessageType#HANDOVER_CHUNK}: a piece of a hand-over's payload, sent by the donor
 * after its {@link HandOverBeginFlyweight} and relayed by the server. Pieces go in order; each names its byte offset in
 * the payload, so a receiver sees at once when one is missing.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  |  Magic 0xD1   |    Version    |   Type = 17   |   NONE = 0    |  0
 *  +---------------+---------------+---------------+---------------+
 *  |                            Job Id                             |  4
 *  +---------------------------------------------------------------+
 *  |            First round of the joining worker (R)              |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                               0                               | 16
 *  +-------------------------------+-------------------------------+
 *  |               0               |            Donor Id           | 20
 *  +-------------------------------+-------------------------------+
 *  |          Slice Index          |                               | 24
 *  +-------------------------------+    Joining worker (48 bits)   |
 *  |                                                               | 28
 *  +---------------------------------------------------------------+
 *  |                 Byte offset of the piece in the payload       | 32
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                         Piece ...                            ... 40
 *  +---------------------------------------------------------------+
 * </pre>
 * Fields are little-endian; the header's offsets are {@link MessageHeaderFlyweight}'s.
 */
public final class HandOverChunkFlyweight {
    /** Offset of the piece's byte offset in the payload. */
    public static final int PAYLOAD_OFFSET_OFFSET = MessageHeaderFlyweight.HEADER_LENGTH;
    /** Offset of the piece. */
    public static final int DATA_OFFSET = PAYLOAD_OFFSET_OFFSET + Long.BYTES;

    private final MessageHeaderFlyweight header = new MessageHeaderFlyweight();

    /**
     * @param buffer to write the message into.
     * @param offset at which the message starts.
     * @return this for a fluent API.
     */
    public HandOverChunkFlyweight wrap(final MutableDirectBuffer buffer, final int offset) {
        header.wrap(buffer, offset);
        return this;
    }

    /**
     * @param buffer holding a received message (mutable, as Aeron's term buffers are).
     * @param offset at which the message starts.
     * @return this for a fluent API.
     */
    public HandOverChunkFlyweight wrapForRead(final DirectBuffer buffer, final int offset) {
        header.wrapForRead(buffer, offset);
        return this;
    }

    /** @return the common header of the wrapped message. */
    public MessageHeaderFlyweight header() {
        return header;
    }

    /**
     * @param pieceLength bytes of payload in the frame.
     * @return the length of the frame.
     */
    public static int length(final int pieceLength) {
        return DATA_OFFSET + pieceLength;
    }

    /**
     * Write a whole HANDOVER_CHUNK at the wrapped offset.
     *
     * @param jobId         of the job.
     * @param firstRound    the joining worker's first round.
     * @param donor         the donor's worker id.
     * @param slice         index of the slice whose server relays it.
     * @param joiningWorker the joining worker's id.
     * @param payloadOffset byte offset of the piece in the payload.
     * @param piece         holds the piece.
     * @param pieceOffset   where the piece starts in {@code piece}.
     * @param pieceLength   bytes of the piece.
     * @return the length written.
     */
    public int encode(final int jobId, final long firstRound, final int donor, final int slice, final int joiningWorker,
        final long payloadOffset, final byte[] piece, final int pieceOffset, final int pieceLength) {
        header.writeHeader(MessageType.HANDOVER_CHUNK, Encoding.NONE)
            .jobId(jobId)
            .round(firstRound)
            .chunkWordOffset(0)
            .chunkWords(0)
            .workerId(donor)
            .slice(slice)
            .joiningWorker(joiningWorker);
        header.buffer().putLong(header.offset() + PAYLOAD_OFFSET_OFFSET, payloadOffset, ByteOrder.LITTLE_ENDIAN);
        header.buffer().putBytes(header.offset() + DATA_OFFSET, piece, pieceOffset, pieceLength);
        return length(pieceLength);
    }

    /** @return the joining worker's first round. */
    public long firstRound() {
        return header.round();
    }

    /** @return the donor's worker id. */
    public int donor() {
        return header.workerId();
    }

    /** @return the joining worker (any value: check it against the job). */
    public int joiningWorker() {
        return header.joiningWorker();
    }

    /** @return the piece's byte offset in the payload. */
    public long payloadOffset() {
        return header.buffer().getLong(header.offset() + PAYLOAD_OFFSET_OFFSET, ByteOrder.LITTLE_ENDIAN);
    }

    /** @return offset of the piece in the buffer. */
    public int dataOffset() {
        return header.offset() + DATA_OFFSET;
    }
}
