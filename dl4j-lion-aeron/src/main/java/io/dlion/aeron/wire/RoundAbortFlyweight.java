package io.dlion.aeron.wire;

import io.dlion.vote.VoterSet;
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
 *  |                  First word of the slice                      | 16
 *  +-------------------------------+-------------------------------+
 *  |               0               |        0xFFFF (server)        | 20
 *  +-------------------------------+-------------------------------+
 *  |          Slice Index          |                               | 24
 *  +-------------------------------+   k = ceil(N / 64) (48 bits)  |
 *  |                                                               | 28
 *  +---------------------------------------------------------------+
 *  |        Voter set: k words, the workers that did vote        ... 32
 *  +---------------------------------------------------------------+
 * </pre>
 * Fields are little-endian; the offsets are {@link MessageHeaderFlyweight}'s.
 */
public final class RoundAbortFlyweight {
    /**
     * @param voterWords words of the job's voter set, {@code ceil(N / 64)}.
     * @return length of a ROUND_ABORT.
     */
    public static int length(final int voterWords) {
        return MessageHeaderFlyweight.headerLength(voterWords);
    }

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
     * @param wordOffset first word of the slice.
     * @param slice      index of the server's slice.
     * @param voters     workers that voted before the deadline.
     * @return the length written.
     */
    public int encode(final int jobId, final long round, final int wordOffset, final int slice, final VoterSet voters) {
        header.writeHeader(MessageType.ROUND_ABORT, Encoding.NONE)
            .jobId(jobId)
            .round(round)
            .chunkWordOffset(wordOffset)
            .chunkWords(0)
            .workerId(MessageHeaderFlyweight.SERVER_WORKER_ID)
            .slice(slice)
            .voterSet(voters);
        return length(voters.wordCount());
    }

    /** @return the round aborted. */
    public long round() {
        return header.round();
    }

    /**
     * @param into   a set of the job's capacity: receives the workers that voted before the deadline.
     * @param length of the message.
     * @return false when the voter set is malformed (not the job's words, a worker past the job, beyond the message).
     */
    public boolean readVoters(final VoterSet into, final int length) {
        return header.readVoterSet(into, length);
    }
}
