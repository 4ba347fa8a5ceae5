package io.dlion.aeron.wire;

import java.nio.ByteOrder;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Objects;

import javax.crypto.Mac;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.SecretKeySpec;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The body of an authenticated HELLO ({@link Encoding#HMAC_SHA256}): a worker proves it holds the job's shared
 * secret. The HMAC-SHA256 covers the whole 32-byte header (protocol version, type, job id, round, worker id, shard,
 * parameter count) and the nonce and timestamp, so none of them can be changed without the secret.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                  Message header (32 bytes) ...               ...  0
 *  +---------------------------------------------------------------+
 *  |                        Nonce (random)                         | 32
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |              Timestamp, ms since the epoch (LE)               | 40
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |        HMAC-SHA256(secret, bytes 0 to 47 of the message)      | 48
 *  |                          (32 bytes)                          ...
 *  +---------------------------------------------------------------+
 * </pre>
 * The server accepts a HELLO whose timestamp is within its allowed clock skew and not older than the last HELLO it
 * accepted from the same worker (a replayed HELLO has the same nonce and timestamp and is refused). Not thread-safe:
 * one instance per server or worker.
 */
public final class HelloCredentials {
    /** Offset of the nonce in the body. */
    public static final int NONCE_OFFSET = 0;
    /** Offset of the timestamp in the body. */
    public static final int TIMESTAMP_OFFSET = 8;
    /** Offset of the MAC in the body. */
    public static final int MAC_OFFSET = 16;
    /** Length of the MAC. */
    public static final int MAC_LENGTH = 32;
    /** Length of the body. */
    public static final int BODY_LENGTH = MAC_OFFSET + MAC_LENGTH;
    /** Shortest secret accepted, in bytes. */
    public static final int MIN_SECRET_LENGTH = 16;

    private static final String ALGORITHM = "HmacSHA256";
    private final Mac mac;
    private final byte[] signed = new byte[MessageHeaderFlyweight.HEADER_LENGTH + MAC_OFFSET];
    private final byte[] expected = new byte[MAC_LENGTH];
    private final byte[] received = new byte[MAC_LENGTH];

    /**
     * @param secret the job's shared secret, at least {@value #MIN_SECRET_LENGTH} bytes.
     */
    public HelloCredentials(final byte[] secret) {
        Objects.requireNonNull(secret, "secret");
        if (secret.length < MIN_SECRET_LENGTH) {
            throw new IllegalArgumentException("secret must be at least " + MIN_SECRET_LENGTH + " bytes, got " + secret.length);
        }
        try {
            mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(secret, ALGORITHM));
        } catch (final GeneralSecurityException ex) {
            throw new IllegalStateException("HmacSHA256 unavailable", ex);
        }
    }

    /**
     * Write nonce, timestamp and MAC after a HELLO header already written at {@code offset}.
     *
     * @param buffer      holding the message.
     * @param offset      of the message header.
     * @param nonce       random per HELLO.
     * @param timestampMs now, in ms since the epoch.
     */
    public void sign(final MutableDirectBuffer buffer, final int offset, final long nonce, final long timestampMs) {
        final int body = offset + MessageHeaderFlyweight.HEADER_LENGTH;
        buffer.putLong(body + NONCE_OFFSET, nonce, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(body + TIMESTAMP_OFFSET, timestampMs, ByteOrder.LITTLE_ENDIAN);
        compute(buffer, offset, expected);
        buffer.putBytes(body + MAC_OFFSET, expected);
    }

    /**
     * @param buffer holding a HELLO with a {@link #BODY_LENGTH}-byte body.
     * @param offset of the message header.
     * @return true when the MAC matches (compared in constant time).
     */
    public boolean verify(final DirectBuffer buffer, final int offset) {
        compute(buffer, offset, expected);
        buffer.getBytes(offset + MessageHeaderFlyweight.HEADER_LENGTH + MAC_OFFSET, received);
        return MessageDigest.isEqual(expected, received);
    }

    /**
     * @param buffer holding a HELLO.
     * @param offset of the message header.
     * @return the nonce.
     */
    public static long nonce(final DirectBuffer buffer, final int offset) {
        return buffer.getLong(offset + MessageHeaderFlyweight.HEADER_LENGTH + NONCE_OFFSET, ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * @param buffer holding a HELLO.
     * @param offset of the message header.
     * @return the timestamp, ms since the epoch.
     */
    public static long timestampMs(final DirectBuffer buffer, final int offset) {
        return buffer.getLong(offset + MessageHeaderFlyweight.HEADER_LENGTH + TIMESTAMP_OFFSET, ByteOrder.LITTLE_ENDIAN);
    }

    private void compute(final DirectBuffer buffer, final int offset, final byte[] out) {
        buffer.getBytes(offset, signed);
        mac.update(signed);
        try {
            mac.doFinal(out, 0);
        } catch (final ShortBufferException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
