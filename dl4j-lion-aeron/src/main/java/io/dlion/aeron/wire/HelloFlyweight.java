package io.dlion.aeron.wire;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encoder and decoder of a {@link MessageType#HELLO}: a worker announces itself to a slice's server, and a worker that
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
 *  |                  First word of the slice                      | 16
 *  +-------------------------------+-------------------------------+
 *  |               0               |           Worker Id           | 20
 *  +-------------------------------+-------------------------------+
 *  |          Slice Index          |                               | 24
 *  +-------------------------------+   Parameter count (48 bits)   |
 *  |                                                               | 28
 *  +---------------------------------------------------------------+
 *  |                        Nonce (random)                         | 32
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |              Timestamp, ms since the epoch                    | 40
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |        Vote session: the Aeron session of the worker's        | 48
 *  |        vote publication this HELLO is sent on                 |
 *  +-------------------------------+---------------+---------------+
 *  |       Result port (UDP)       | Address length|     Flags     | 52
 *  +-------------------------------+---------------+---------------+
 *  |   Result address: IPv4 (4 bytes) or IPv6 (16), zero-padded    | 56
 *  |                            ...                                |
 *  +---------------------------------------------------------------+
 *  |   HMAC-SHA256(secret, bytes 0 to 71), HMAC_SHA256 only        | 72
 *  |                          (32 bytes)                          ...
 *  +---------------------------------------------------------------+
 * </pre>
 * The result endpoint is the UDP address and port the worker's result subscription listens on: a server that
 * publishes its results by manual multi-destination-cast adds it as a destination once it accepted the HELLO. Its
 * address length is 0 when results come by IPC. Flags: {@link #FLAG_FRAME_MAC} when the worker tags its frames
 * ({@link FrameMac}); a server whose setting differs refuses the HELLO. The vote session binds the HELLO to the
 * publication it came on, so a HELLO replayed from another session is refused; with the job's secret
 * ({@link Encoding#HMAC_SHA256}) the MAC ({@link HelloCredentials}) covers every field before it, the flags included.
 * Fields are little-endian; the header's offsets are
 * {@link MessageHeaderFlyweight}'s.
 */
public final class HelloFlyweight {
    /** Round field of a join HELLO: the worker has no parameters and waits to be told its first round. */
    public static final long JOIN_ROUND = MessageHeaderFlyweight.JOIN_ROUND;
    /** Offset of the parameter count. */
    public static final int PARAM_COUNT_OFFSET = MessageHeaderFlyweight.PARAM_COUNT_OFFSET;
    /** Offset of the nonce. */
    public static final int NONCE_OFFSET = MessageHeaderFlyweight.HEADER_LENGTH;
    /** Offset of the timestamp. */
    public static final int TIMESTAMP_OFFSET = NONCE_OFFSET + Long.BYTES;
    /** Offset of the worker's vote session id. */
    public static final int VOTE_SESSION_OFFSET = TIMESTAMP_OFFSET + Long.BYTES;
    /** Offset of the result port. */
    public static final int RESULT_PORT_OFFSET = VOTE_SESSION_OFFSET + Integer.BYTES;
    /** Offset of the result address length (0, 4 or 16). */
    public static final int RESULT_ADDRESS_LENGTH_OFFSET = RESULT_PORT_OFFSET + Short.BYTES;
    /** Offset of the result address. */
    public static final int RESULT_ADDRESS_OFFSET = RESULT_ADDRESS_LENGTH_OFFSET + 2;
    /** Offset of the flags byte. */
    public static final int FLAGS_OFFSET = RESULT_ADDRESS_LENGTH_OFFSET + 1;
    /** Flag: the worker's vote frames carry, and its result frames must carry, a {@link FrameMac} tag. */
    public static final int FLAG_FRAME_MAC = 1;
    /** Room for the result address: an IPv6 address. */
    public static final int RESULT_ADDRESS_CAPACITY = 16;
    /** Offset of the MAC ({@link Encoding#HMAC_SHA256} only); the MAC covers every byte before it. */
    public static final int MAC_OFFSET = RESULT_ADDRESS_OFFSET + RESULT_ADDRESS_CAPACITY;
    /** Length of a HELLO without credentials ({@link Encoding#NONE}). */
    public static final int LENGTH = MAC_OFFSET;
    /** Length of a HELLO with credentials ({@link Encoding#HMAC_SHA256}). */
    public static final int SIGNED_LENGTH = MAC_OFFSET + HelloCredentials.MAC_LENGTH;

    private static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;
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
     * @param jobId         of the job.
     * @param round         the round the worker votes in next, or {@link #JOIN_ROUND}.
     * @param wordOffset    first 64-parameter word of the slice (0 in the fault tools' frames).
     * @param workerId      the worker.
     * @param slice         index of the server's slice.
     * @param paramCount    of the worker's whole vector.
     * @param voteSessionId Aeron session of the publication the HELLO goes out on.
     * @param resultAddress the address the worker's results arrive on (4 or 16 bytes), or null for IPC.
     * @param resultPort    the UDP port the worker's results arrive on (0 for IPC).
     * @param credentials   to sign with, or null for a HELLO without credentials.
     * @param nonce         random per HELLO; the server's HELLO_ACK echoes it.
     * @param timestampMs   now, ms since the epoch.
     * @return the length written.
     */
    public int encode(final int jobId, final long round, final int wordOffset, final int workerId, final int slice, final long paramCount,
        final int voteSessionId, final byte[] resultAddress, final int resultPort, final HelloCredentials credentials, final long nonce,
        final long timestampMs) {
        return encode(jobId, round, wordOffset, workerId, slice, paramCount, voteSessionId, resultAddress, resultPort, credentials, nonce,
            timestampMs, 0);
    }

    /**
     * Write a whole HELLO at the wrapped offset, with flags.
     *
     * @param jobId         of the job.
     * @param round         the round the worker votes in next, or {@link #JOIN_ROUND}.
     * @param wordOffset    first 64-parameter word of the slice (0 in the fault tools' frames).
     * @param workerId      the worker.
     * @param slice         index of the server's slice.
     * @param paramCount    of the worker's whole vector.
     * @param voteSessionId Aeron session of the publication the HELLO goes out on.
     * @param resultAddress the address the worker's results arrive on (4 or 16 bytes), or null for IPC.
     * @param resultPort    the UDP port the worker's results arrive on (0 for IPC).
     * @param credentials   to sign with, or null for a HELLO without credentials.
     * @param nonce         random per HELLO; the server's HELLO_ACK echoes it.
     * @param timestampMs   now, ms since the epoch.
     * @param flags         {@link #FLAG_FRAME_MAC} or 0.
     * @return the length written.
     */
    public int encode(final int jobId, final long round, final int wordOffset, final int workerId, final int slice, final long paramCount,
        final int voteSessionId, final byte[] resultAddress, final int resultPort, final HelloCredentials credentials, final long nonce,
        final long timestampMs, final int flags) {
        header.writeHeader(MessageType.HELLO, credentials == null ? Encoding.NONE : Encoding.HMAC_SHA256)
            .jobId(jobId)
            .round(round)
            .chunkWordOffset(wordOffset)
            .chunkWords(0)
            .workerId(workerId)
            .slice(slice)
            .paramCount(paramCount);
        final MutableDirectBuffer buffer = header.buffer();
        final int offset = header.offset();
        final int addressLength = resultAddress == null ? 0 : resultAddress.length;
        if (addressLength != 0 && addressLength != 4 && addressLength != RESULT_ADDRESS_CAPACITY) {
            throw new IllegalArgumentException("resultAddress must have 4 or 16 bytes, got " + addressLength);
        }
        buffer.putLong(offset + NONCE_OFFSET, nonce, ORDER);
        buffer.putLong(offset + TIMESTAMP_OFFSET, timestampMs, ORDER);
        buffer.putInt(offset + VOTE_SESSION_OFFSET, voteSessionId, ORDER);
        buffer.putShort(offset + RESULT_PORT_OFFSET, (short)resultPort, ORDER);
        buffer.putByte(offset + RESULT_ADDRESS_LENGTH_OFFSET, (byte)addressLength);
        buffer.putByte(offset + FLAGS_OFFSET, (byte)flags);
        buffer.setMemory(offset + RESULT_ADDRESS_OFFSET, RESULT_ADDRESS_CAPACITY, (byte)0);
        if (addressLength > 0) {
            buffer.putBytes(offset + RESULT_ADDRESS_OFFSET, resultAddress);
        }
        if (credentials == null) {
            return LENGTH;
        }
        credentials.sign(buffer, offset, MAC_OFFSET);
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

    /** @return the nonce. */
    public long nonce() {
        return header.buffer().getLong(header.offset() + NONCE_OFFSET, ORDER);
    }

    /** @return the timestamp, ms since the epoch. */
    public long timestampMs() {
        return header.buffer().getLong(header.offset() + TIMESTAMP_OFFSET, ORDER);
    }

    /** @return the Aeron session of the worker's vote publication, as the worker wrote it. */
    public int voteSessionId() {
        return header.buffer().getInt(header.offset() + VOTE_SESSION_OFFSET, ORDER);
    }

    /** @return the UDP port the worker's results arrive on. */
    public int resultPort() {
        return header.buffer().getShort(header.offset() + RESULT_PORT_OFFSET, ORDER) & 0xFFFF;
    }

    /** @return the flags: {@link #FLAG_FRAME_MAC} or 0. */
    public int flags() {
        return header.buffer().getByte(header.offset() + FLAGS_OFFSET) & 0xFF;
    }

    /** @return length of the result address: 0 (IPC), 4 (IPv4) or 16 (IPv6); anything else is malformed. */
    public int resultAddressLength() {
        return header.buffer().getByte(header.offset() + RESULT_ADDRESS_LENGTH_OFFSET) & 0xFF;
    }

    /**
     * @param dst receives the {@link #resultAddressLength()} bytes of the result address.
     */
    public void resultAddress(final byte[] dst) {
        header.buffer().getBytes(header.offset() + RESULT_ADDRESS_OFFSET, dst, 0, resultAddressLength());
    }

    /**
     * @param credentials of the job's secret.
     * @return true when the HELLO's MAC is the one of that secret.
     */
    public boolean verify(final HelloCredentials credentials) {
        return credentials.verify(header.buffer(), header.offset(), MAC_OFFSET);
    }
}
