package io.dlion.aeron.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encoder and decoder of a {@link MessageType#HELLO}: a worker announces itself to a shard's server, and a worker that
 * (re)joins a running job without parameters asks for its first round ({@link #JOIN_ROUND}, the join HELLO).
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  |  Magic 0xD1   |    Version    |   Type = 1    | NONE or HMAC  |  0
 *  +---------------+---------------+---------------+---------------+
 *  |                            Job Id                             |  4
 *  +---------------------------------------------------------------+
 *  |       Round voted in next, or JOIN_ROUND (-1) to rejoin       |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  First word of the shard                      | 16
 *  +-------------------------------+---------------+---------------+
 *  |              0                |   Worker Id   |  Shard Index  | 20
 *  +-------------------------------+---------------+---------------+
 *  |                  Parameter count of the vector                | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |   Credentials (HMAC_SHA256 only): nonce, timestamp, MAC ...  ... 32
 *  +---------------------------------------------------------------+
 * </pre>
 * The credentials are {@link HelloCredentials}: {@value HelloCredentials#BODY_LENGTH} bytes, the MAC covering the header,
 * nonce and timestamp. Fields are little-endian; the header's offsets are {@link MessageHeaderFlyweight}'s.
 */
public final class HelloFlyweight {
    /** Round field of a join HELLO: the worker has no parameters and waits to be told its first round. */
    public static final long JOIN_ROUND = MessageHeaderFlyweight.JOIN_ROUND;
    /** Offset of the parameter count. */
    public static final int PARAM_COUNT_OFFSET = MessageHeaderFlyweight.PARAM_COUNT_OFFSET;
    /** Offset of the credentials. */
    public static final int CREDENTIALS_OFFSET = MessageHeaderFlyweight.HEADER_LENGTH;
    /** Length of a HELLO without credentials ({@link Encoding#NONE}). */
    public static final int LENGTH = MessageHeaderFlyweight.HEADER_LENGTH;
    /** Length of a HELLO with credentials ({@link Encoding#HMAC_SHA256}). */
    public static final int SIGNED_LENGTH = CREDENTIALS_OFFSET + HelloCredentials.BODY_LENGTH;

    private final MessageHeaderFlyweight header = new MessageHeaderFlyweight();

    /**
     * @param buffer to write the HELLO into.
     * @param offset at which the HELLO starts.
     * @return this for a fluent API.
     */
    public HelloFlyweight wrap(final MutableDirectBuffer buffer, final int offset) {
        header.wrap(buffer, offset);
        return this;
    }

    /**
     * @param buffer holding a received HELLO (mutable, as Aeron's term buffers are).
     * @param offset at which the HELLO starts.
     * @return this for a fluent API.
     */
    public HelloFlyweight wrapForRead(final DirectBuffer buffer, final int offset) {
        header.wrapForRead(buffer, offset);
        return this;
    }

    /** @return the common header of the wrapped HELLO. */
    public MessageHeaderFlyweight header() {
        return header;
    }

    /**
     * @param signed true for a HELLO with credentials.
     * @return the length of the HELLO.
     */
    public static int length(final boolean signed) {
        return signed ? SIGNED_LENGTH : LENGTH;
    }

    /**
     * Write a whole HELLO at the wrapped offset.
     *
     * @param jobId       of the job.
     * @param round       the round the worker votes in next, or {@link #JOIN_ROUND}.
     * @param wordOffset  first 64-parameter word of the shard (0 in the fault tools' frames).
     * @param workerId    the worker.
     * @param shard       index of the server's slice.
     * @param paramCount  of the worker's whole vector.
     * @param credentials to sign with, or null for a HELLO without credentials.
     * @param nonce       of the credentials (ignored without credentials).
     * @param timestampMs of the credentials, ms since the epoch (ignored without credentials).
     * @return the length written.
     */
    public int encode(final int jobId, final long round, final int wordOffset, final int workerId, final int shard, final long paramCount,
        final HelloCredentials credentials, final long nonce, final long timestampMs) {
        header.writeHeader(MessageType.HELLO, credentials == null ? Encoding.NONE : Encoding.HMAC_SHA256)
            .jobId(jobId)
            .round(round)
            .chunkWordOffset(wordOffset)
            .chunkWords(0)
            .workerId(workerId)
            .shard(shard)
            .paramCount(paramCount);
        if (credentials == null) {
            return LENGTH;
        }
        credentials.sign(header.buffer(), header.offset(), nonce, timestampMs);
        return SIGNED_LENGTH;
    }

    /** @return the round the worker votes in next, or {@link #JOIN_ROUND}. */
    public long round() {
        return header.round();
    }

    /** @return true for a join HELLO: a worker without parameters that waits for its first round and a donor. */
    public boolean isJoin() {
        return header.round() == JOIN_ROUND;
    }

    /** @return the parameter count of the worker's vector. */
    public long paramCount() {
        return header.paramCount();
    }

    /** @return the nonce of the credentials. */
    public long nonce() {
        return HelloCredentials.nonce(header.buffer(), header.offset());
    }

    /** @return the timestamp of the credentials, ms since the epoch. */
    public long timestampMs() {
        return HelloCredentials.timestampMs(header.buffer(), header.offset());
    }

    /**
     * @param credentials of the job's secret.
     * @return true when the HELLO's MAC is the one of that secret.
     */
    public boolean verify(final HelloCredentials credentials) {
        return credentials.verify(header.buffer(), header.offset());
    }
}
