package io.dlion.aeron.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encoder and decoder of a {@link MessageType#JOIN_NOTICE}: a worker (re)joins the job. It votes from the round named
 * on, and the donor hands it the job's parameters as of the start of that round. No body.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  |  Magic 0xD1   |    Version    |   Type = 5    |   NONE = 0    |  0
 *  +---------------+---------------+---------------+---------------+
 *  |                            Job Id                             |  4
 *  +---------------------------------------------------------------+
 *  |              First round the joining worker votes in          |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  First word of the slice                      | 16
 *  +-------------------------------+-------------------------------+
 *  |               0               |        Donor or 0xFFFF        | 20
 *  +-------------------------------+-------------------------------+
 *  |          Slice Index          |                               | 24
 *  +-------------------------------+    Joining worker (48 bits)   |
 *  |                                                               | 28
 *  +---------------------------------------------------------------+
 * </pre>
 * The donor field is {@link MessageHeaderFlyweight#SERVER_WORKER_ID} when no live worker can hand over parameters.
 * Fields are little-endian; the offsets are {@link MessageHeaderFlyweight}'s.
 */
public final class JoinNoticeFlyweight {
    /** Length of a JOIN_NOTICE. */
    public static final int LENGTH = MessageHeaderFlyweight.HEADER_LENGTH;
    /** Offset of the donor's worker id. */
    public static final int DONOR_OFFSET = MessageHeaderFlyweight.WORKER_ID_OFFSET;
    /** Offset of the joining worker. */
    public static final int JOINING_WORKER_OFFSET = MessageHeaderFlyweight.COUNT_OFFSET;
    /** Donor field when there is no donor. */
    public static final int NO_DONOR = MessageHeaderFlyweight.SERVER_WORKER_ID;

    private final MessageHeaderFlyweight header = new MessageHeaderFlyweight();

    /**
     * @param buffer to write the message into.
     * @param offset at which the message starts.
     * @return this for a fluent API.
     */
    public JoinNoticeFlyweight wrap(final MutableDirectBuffer buffer, final int offset) {
        header.wrap(buffer, offset);
        return this;
    }

    /**
     * @param buffer holding a received message (mutable, as Aeron's term buffers are).
     * @param offset at which the message starts.
     * @return this for a fluent API.
     */
    public JoinNoticeFlyweight wrapForRead(final DirectBuffer buffer, final int offset) {
        header.wrapForRead(buffer, offset);
        return this;
    }

    /** @return the common header of the wrapped message. */
    public MessageHeaderFlyweight header() {
        return header;
    }

    /**
     * Write a whole JOIN_NOTICE at the wrapped offset.
     *
     * @param jobId         of the job.
     * @param firstRound    the first round the joining worker votes in.
     * @param wordOffset    first word of the slice.
     * @param donor         worker id of the donor, or {@link #NO_DONOR}.
     * @param slice         index of the server's slice.
     * @param joiningWorker worker id of the joining worker.
     * @return the length written.
     */
    public int encode(final int jobId, final long firstRound, final int wordOffset, final int donor, final int slice, final int joiningWorker) {
        header.writeHeader(MessageType.JOIN_NOTICE, Encoding.NONE)
            .jobId(jobId)
            .round(firstRound)
            .chunkWordOffset(wordOffset)
            .chunkWords(0)
            .workerId(donor)
            .slice(slice)
            .joiningWorker(joiningWorker);
        return LENGTH;
    }

    /** @return the first round the joining worker votes in. */
    public long firstRound() {
        return header.round();
    }

    /** @return the donor's worker id, or {@link #NO_DONOR}. */
    public int donor() {
        return header.workerId();
    }

    /** @return the joining worker (any value: check it against the job). */
    public int joiningWorker() {
        return header.joiningWorker();
    }
}
