package io.dlion.aeron.wire;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encoder and decoder of a {@link MessageType#HELLO_ACK}: a slice's server answers a worker's accepted HELLO on its
 * result stream and so proves itself: the answer echoes the HELLO's nonce, names the Aeron session of the server's
 * result publication and, with the job's secret, carries an HMAC-SHA256 over both, the job, the slice and the worker.
 * A worker reads results only from an image whose session such an answer proved.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  |  Magic 0xD1   |    Version    |   Type = 6    | NONE or HMAC  |  0
 *  +---------------+---------------+---------------+---------------+
 *  |                            Job Id                             |  4
 *  +---------------------------------------------------------------+
 *  |   The worker's first round of a pending (re)join, or NO_JOIN  |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  First word of the slice                      | 16
 *  +-------------------------------+-------------------------------+
 *  |        Donor or 0xFFFF        |           Worker Id           | 20
 *  +-------------------------------+-------------------------------+
 *  |          Slice Index          |                               | 24
 *  +-------------------------------+   Parameter count (48 bits)   |
 *  |                                                               | 28
 *  +---------------------------------------------------------------+
 *  |                  Nonce of the HELLO answered                  | 32
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |       Server session: the Aeron session of the result         | 40
 *  |       publication this answer is sent on                      |
 *  +---------------------------------------------------------------+
 *  |   Serving rank + 1: the rank of the sharded job whose process   | 44
 *  |   serves the slice, or 0 (a server of no rank, or not saying)   |
 *  +---------------------------------------------------------------+
 *  |   HMAC-SHA256(secret, bytes 0 to 47), HMAC_SHA256 only        | 48
 *  |                          (32 bytes)                          ...
 *  +---------------------------------------------------------------+
 * </pre>
 * The serving rank tells a worker of a sharded job which rank's process answered, whichever host it looked on (on one
 * host every rank's server of a slice has the same address).
 * The round and donor repeat what a JOIN_NOTICE naming this worker said, as long as its join is pending: a worker whose
 * result destination was added with its HELLO may have missed the notice broadcast before its image was set up.
 * Fields are little-endian; the header's offsets are {@link MessageHeaderFlyweight}'s.
 */
public final class HelloAckFlyweight {
    /** Round field when the worker has no pending join. */
    public static final long NO_JOIN = -1L;
    /** Offset of the donor (16 bits in the chunk length field; {@link JoinNoticeFlyweight#NO_DONOR} for none). */
    public static final int DONOR_OFFSET = MessageHeaderFlyweight.CHUNK_WORDS_OFFSET;
    /** Offset of the nonce echoed. */
    public static final int NONCE_OFFSET = MessageHeaderFlyweight.HEADER_LENGTH;
    /** Offset of the server's session id. */
    public static final int SERVER_SESSION_OFFSET = NONCE_OFFSET + Long.BYTES;
    /** Offset of the serving rank + 1 (0: not said). */
    public static final int SERVING_RANK_OFFSET = SERVER_SESSION_OFFSET + Integer.BYTES;
    /** Offset of the MAC ({@link Encoding#HMAC_SHA256} only); the MAC covers every byte before it. */
    public static final int MAC_OFFSET = SERVER_SESSION_OFFSET + 2 * Integer.BYTES;
    /** Length of an answer without credentials. */
    public static final int LENGTH = MAC_OFFSET;
    /** Length of an answer with credentials. */
    public static final int SIGNED_LENGTH = MAC_OFFSET + HelloCredentials.MAC_LENGTH;

    private static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;
    private final MessageHeaderFlyweight header = new MessageHeaderFlyweight();

    /**
     * @param buffer to write the answer into.
     * @param offset at which it starts.
     * @return this for a fluent API.
     */
    public HelloAckFlyweight wrap(final MutableDirectBuffer buffer, final int offset) {
        header.wrap(buffer, offset);
        return this;
    }

    /**
     * @param buffer holding a received answer (mutable, as Aeron's term buffers are).
     * @param offset at which it starts.
     * @return this for a fluent API.
     */
    public HelloAckFlyweight wrapForRead(final DirectBuffer buffer, final int offset) {
        header.wrapForRead(buffer, offset);
        return this;
    }

    /** @return the common header of the wrapped answer. */
    public MessageHeaderFlyweight header() {
        return header;
    }

    /**
     * @param signed true for an answer with credentials.
     * @return its length.
     */
    public static int length(final boolean signed) {
        return signed ? SIGNED_LENGTH : LENGTH;
    }

    /**
     * Write a whole answer at the wrapped offset.
     *
     * @param jobId           of the job.
     * @param joinRound       the worker's first round when its join is pending, else {@link #NO_JOIN}.
     * @param wordOffset      first word of the slice.
     * @param donor           the joining worker's donor, or {@link JoinNoticeFlyweight#NO_DONOR}.
     * @param workerId        the worker answered.
     * @param slice           index of the server's slice.
     * @param paramCount      of the job's vector.
     * @param nonce           of the HELLO answered.
     * @param serverSessionId Aeron session of the result publication the answer goes out on.
     * @param credentials     to sign with, or null without a secret.
     * @return the length written.
     */
    public int encode(final int jobId, final long joinRound, final int wordOffset, final int donor, final int workerId, final int slice,
        final long paramCount, final long nonce, final int serverSessionId, final HelloCredentials credentials) {
        return encode(jobId, joinRound, wordOffset, donor, workerId, slice, paramCount, nonce, serverSessionId, -1, credentials);
    }

    /**
     * Write a whole answer at the wrapped offset, naming the rank whose process serves the slice.
     *
     * @param jobId           of the job.
     * @param joinRound       the worker's first round when its join is pending, else {@link #NO_JOIN}.
     * @param wordOffset      first word of the slice.
     * @param donor           the joining worker's donor, or {@link JoinNoticeFlyweight#NO_DONOR}.
     * @param workerId        the worker answered.
     * @param slice           index of the server's slice.
     * @param paramCount      of the job's vector.
     * @param nonce           of the HELLO answered.
     * @param serverSessionId Aeron session of the result publication the answer goes out on.
     * @param servingRank     the rank of the sharded job whose process serves the slice, or -1 to say nothing.
     * @param credentials     to sign with, or null without a secret.
     * @return the length written.
     */
    public int encode(final int jobId, final long joinRound, final int wordOffset, final int donor, final int workerId, final int slice,
        final long paramCount, final long nonce, final int serverSessionId, final int servingRank, final HelloCredentials credentials) {
        header.writeHeader(MessageType.HELLO_ACK, credentials == null ? Encoding.NONE : Encoding.HMAC_SHA256)
            .jobId(jobId)
            .round(joinRound)
            .chunkWordOffset(wordOffset)
            .chunkWords(donor)
            .workerId(workerId)
            .slice(slice)
            .paramCount(paramCount);
        final MutableDirectBuffer buffer = header.buffer();
        final int offset = header.offset();
        buffer.putLong(offset + NONCE_OFFSET, nonce, ORDER);
        buffer.putInt(offset + SERVER_SESSION_OFFSET, serverSessionId, ORDER);
        buffer.putInt(offset + SERVING_RANK_OFFSET, servingRank < 0 ? 0 : servingRank + 1, ORDER);
        if (credentials == null) {
            return LENGTH;
        }
        credentials.sign(buffer, offset, MAC_OFFSET);
        return SIGNED_LENGTH;
    }

    /** @return the worker's first round of a pending join, or {@link #NO_JOIN}. */
    public long joinRound() {
        return header.round();
    }

    /** @return the donor of a pending join, or {@link JoinNoticeFlyweight#NO_DONOR}. */
    public int donor() {
        return header.chunkWords();
    }

    /** @return the nonce of the HELLO answered. */
    public long nonce() {
        return header.buffer().getLong(header.offset() + NONCE_OFFSET, ORDER);
    }

    /** @return the session the server says it publishes on. */
    public int serverSessionId() {
        return header.buffer().getInt(header.offset() + SERVER_SESSION_OFFSET, ORDER);
    }

    /** @return the rank whose process serves the slice, or -1 when the answer does not say. */
    public int servingRank() {
        return header.buffer().getInt(header.offset() + SERVING_RANK_OFFSET, ORDER) - 1;
    }

    /**
     * @param credentials of the job's secret.
     * @return true when the answer's MAC is the one of that secret.
     */
    public boolean verify(final HelloCredentials credentials) {
        return credentials.verify(header.buffer(), header.offset(), MAC_OFFSET);
    }
}
