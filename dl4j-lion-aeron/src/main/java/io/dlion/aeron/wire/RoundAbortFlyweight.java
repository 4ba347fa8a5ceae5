package io.dlion.aeron.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encoder and decoder of a {@link MessageType#ROUND_ABORT}: the round named will have no result, because fewer workers
 * than the quorum voted before its deadline. No body.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  |  Magic 0xD1   |    Version    |   Type = 4    |   NONE = 0    |  0
 *  +---------------+---------------+---------------+---------------+
 *  |                            Job Id                             |  4
 *  +---------------------------------------------------------------+
 *  |                       Round aborted                           |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  First word of the shard                      | 16
 *  +-------------------------------+---------------+---------------+
 *  |              0                |     0xFF      |  Shard Index  | 20
 *  +-------------------------------+---------------+---------------+
 *  |           Voter Mask: the workers that did vote               | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 * </pre>
 * Fields are little-endian; the offsets are {@link MessageHeaderFlyweight}'s.
 */
public final class RoundAbortFlyweight {
    /** Length of a ROUND_ABORT. */
    public static final int LENGTH = MessageHeaderFlyweight.HEADER_LENGTH;
    /** Offset of the mask of the workers that voted. */
    public static final int VOTER_MASK_OFFSET = MessageHeaderFlyweight.VOTER_MASK_OFFSET;

    private final MessageHeaderFlyweight header = new MessageHeaderFlyweight();

    /**
     * @param buffer to write the message into.
     * @param offset at which the message starts.
     * @return this for a fluent API.
     */
    public RoundAbortFlyweight wrap(final MutableDirectBuffer buffer, final int offset) {
        header.wrap(buffer, offset);
        return this;
    }

    /**
     * @param buffer holding a received message (mutable, as Aeron's term buffers are).
     * @param offset at which the message starts.
     * @return this for a fluent API.
     */
    public RoundAbortFlyweight wrapForRead(final DirectBuffer buffer, final int offset) {
        header.wrapForRead(buffer, offset);
        return this;
    }

    /** @return the common header of the wrapped message. */
    public MessageHeaderFlyweight header() {
        return header;
    }

    /**
     * Write a whole ROUND_ABORT at the wrapped offset.
     *
     * @param jobId      of the job.
     * @param round      the round aborted.
     * @param wordOffset first word of the shard.
     * @param shard      index of the server's slice.
     * @param voterMask  workers that voted before the deadline.
     * @return the length written.
     */
    public int encode(final int jobId, final long round, final int wordOffset, final int shard, final long voterMask) {
        header.writeHeader(MessageType.ROUND_ABORT, Encoding.NONE)
            .jobId(jobId)
            .round(round)
            .chunkWordOffset(wordOffset)
            .chunkWords(0)
            .workerId(MessageHeaderFlyweight.SERVER_WORKER_ID)
            .shard(shard)
            .voterMask(voterMask);
        return LENGTH;
    }

    /** @return the round aborted. */
    public long round() {
        return header.round();
    }

    /** @return workers that voted before the deadline. */
    public long voterMask() {
        return header.voterMask();
    }
}
