package io.dlion.aeron.wire;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encoder and decoder of a {@link MessageType#HANDOVER_BEGIN}: a donor starts handing a joining worker the job's state
 * (a checkpoint of its model) as of the joining worker's first round. The server relays it unchanged to the joining
 * worker, and the payload follows in {@link HandOverChunkFlyweight}s.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  |  Magic 0xD1   |    Version    |   Type = 16   | NONE or HMAC  |  0
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
 *  |                 Run Id (of the donor's job start)             | 32
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  Payload length in bytes                      | 40
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                SHA-256 of the payload (32 bytes)             ... 48
 *  +---------------------------------------------------------------+
 *  |   HMAC-SHA256(secret, bytes 0 to 79) (32 bytes, HMAC only)   ... 80
 *  +---------------------------------------------------------------+
 * </pre>
 * With the encoding {@link Encoding#HMAC_SHA256} the frame ends with an HMAC of the job's secret over everything
 * before it, so neither the ids nor the digest (and through it no byte of the payload) can be changed without the
 * secret. Fields are little-endian; the header's offsets are {@link MessageHeaderFlyweight}'s.
 */
public final class HandOverBeginFlyweight {
    /** Offset of the donor's worker id. */
    public static final int DONOR_OFFSET = MessageHeaderFlyweight.WORKER_ID_OFFSET;
    /** Offset of the joining worker. */
    public static final int JOINING_WORKER_OFFSET = MessageHeaderFlyweight.COUNT_OFFSET;
    /** Offset of the run id. */
    public static final int RUN_ID_OFFSET = MessageHeaderFlyweight.HEADER_LENGTH;
    /** Offset of the payload length. */
    public static final int PAYLOAD_LENGTH_OFFSET = RUN_ID_OFFSET + Long.BYTES;
    /** Offset of the payload's SHA-256 digest. */
    public static final int DIGEST_OFFSET = PAYLOAD_LENGTH_OFFSET + Long.BYTES;
    /** Length of a SHA-256 digest, and of the HMAC. */
    public static final int DIGEST_LENGTH = 32;
    /** Offset of the HMAC ({@link Encoding#HMAC_SHA256} only). */
    public static final int MAC_OFFSET = DIGEST_OFFSET + DIGEST_LENGTH;
    /** Length of a HANDOVER_BEGIN without an HMAC. */
    public static final int LENGTH = MAC_OFFSET;
    /** Length of a HANDOVER_BEGIN with an HMAC. */
    public static final int SIGNED_LENGTH = MAC_OFFSET + DIGEST_LENGTH;

    private final MessageHeaderFlyweight header = new MessageHeaderFlyweight();

    /**
     * @param secret the job's shared secret.
     * @return an HMAC-SHA256 keyed with it, for {@link #encode} and {@link #verify}.
     */
    public static Hmac mac(final byte[] secret) {
        return Hmac.of(secret);
    }

    /**
     * @param signed true for a frame with an HMAC.
     * @return the length of the frame.
     */
    public static int length(final boolean signed) {
        return signed ? SIGNED_LENGTH : LENGTH;
    }

    /**
     * @param buffer to write the message into.
     * @param offset at which the message starts.
     * @return this for a fluent API.
     */
    public HandOverBeginFlyweight wrap(final MutableDirectBuffer buffer, final int offset) {
        header.wrap(buffer, offset);
        return this;
    }

    /**
     * @param buffer holding a received message (mutable, as Aeron's term buffers are).
     * @param offset at which the message starts.
     * @return this for a fluent API.
     */
    public HandOverBeginFlyweight wrapForRead(final DirectBuffer buffer, final int offset) {
        header.wrapForRead(buffer, offset);
        return this;
    }

    /** @return the common header of the wrapped message. */
    public MessageHeaderFlyweight header() {
        return header;
    }

    /**
     * Write a whole HANDOVER_BEGIN at the wrapped offset.
     *
     * @param jobId         of the job.
     * @param firstRound    the joining worker's first round.
     * @param donor         the donor's worker id.
     * @param slice         index of the slice whose server relays it.
     * @param joiningWorker the joining worker's id.
     * @param runId         the run id of the donor's job start.
     * @param payloadLength length of the payload in bytes.
     * @param digest        SHA-256 of the payload, 32 bytes.
     * @param mac           HMAC of the job's secret ({@link #mac(byte[])}), or null for a frame without one.
     * @return the length written.
     */
    public int encode(final int jobId, final long firstRound, final int donor, final int slice, final int joiningWorker, final long runId,
        final long payloadLength, final byte[] digest, final Hmac mac) {
        if (digest.length != DIGEST_LENGTH) {
            throw new IllegalArgumentException("digest must be " + DIGEST_LENGTH + " bytes, got " + digest.length);
        }
        header.writeHeader(MessageType.HANDOVER_BEGIN, mac == null ? Encoding.NONE : Encoding.HMAC_SHA256)
            .jobId(jobId)
            .round(firstRound)
            .chunkWordOffset(0)
            .chunkWords(0)
            .workerId(donor)
            .slice(slice)
            .joiningWorker(joiningWorker);
        final MutableDirectBuffer buffer = header.buffer();
        final int offset = header.offset();
        buffer.putLong(offset + RUN_ID_OFFSET, runId, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(offset + PAYLOAD_LENGTH_OFFSET, payloadLength, ByteOrder.LITTLE_ENDIAN);
        buffer.putBytes(offset + DIGEST_OFFSET, digest);
        if (mac == null) {
            return LENGTH;
        }
        mac.sign(null, buffer, offset, MAC_OFFSET, DIGEST_LENGTH);
        return SIGNED_LENGTH;
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

    /** @return the run id of the donor's job start. */
    public long runId() {
        return header.buffer().getLong(header.offset() + RUN_ID_OFFSET, ByteOrder.LITTLE_ENDIAN);
    }

    /** @return the payload length in bytes. */
    public long payloadLength() {
        return header.buffer().getLong(header.offset() + PAYLOAD_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN);
    }

    /** @param into receives the payload's SHA-256, 32 bytes. */
    public void digest(final byte[] into) {
        header.buffer().getBytes(header.offset() + DIGEST_OFFSET, into, 0, DIGEST_LENGTH);
    }

    /**
     * @param length length of the received frame.
     * @return true when the length fits the encoding ({@link #LENGTH} or {@link #SIGNED_LENGTH}).
     */
    public boolean hasValidLength(final int length) {
        final int encoding = header.encoding();
        return (encoding == Encoding.NONE && length == LENGTH) || (encoding == Encoding.HMAC_SHA256 && length == SIGNED_LENGTH);
    }

    /**
     * @param mac HMAC of the job's secret ({@link #mac(byte[])}).
     * @return true when the frame carries an HMAC and it is the one of that secret (compared in constant time).
     */
    public boolean verify(final Hmac mac) {
        return header.encoding() == Encoding.HMAC_SHA256 && mac.verify(null, header.buffer(), header.offset(), MAC_OFFSET, DIGEST_LENGTH);
    }
}
