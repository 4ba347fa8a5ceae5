package io.dlion.aeron.wire;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Objects;

import javax.crypto.Mac;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.SecretKeySpec;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The job's shared secret as a message authentication code: an HMAC-SHA256 over the first bytes of a message (its
 * header and the fields of its body before the MAC), written right after them. Both handshake frames use it: a worker's
 * {@link HelloFlyweight HELLO} proves the worker holds the secret, the server's {@link HelloAckFlyweight HELLO_ACK}
 * proves the server does, over the worker's nonce and the server's Aeron session. Not thread-safe: one instance per
 * server or worker thread.
 */
public final class HelloCredentials {
    /** Length of the MAC. */
    public static final int MAC_LENGTH = 32;
    /** Shortest secret accepted, in bytes. */
    public static final int MIN_SECRET_LENGTH = 16;
    /** Longest signed prefix of a message. */
    private static final int MAX_SIGNED_LENGTH = 256;

    private static final String ALGORITHM = "HmacSHA256";
    private final Mac mac;
    private final byte[] signed = new byte[MAX_SIGNED_LENGTH];
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
     * Write the MAC of bytes {@code [offset, offset + signedLength)} at {@code offset + signedLength}.
     *
     * @param buffer       holding the message.
     * @param offset       of the message.
     * @param signedLength bytes covered by the MAC.
     */
    public void sign(final MutableDirectBuffer buffer, final int offset, final int signedLength) {
        compute(buffer, offset, signedLength, expected);
        buffer.putBytes(offset + signedLength, expected);
    }

    /**
     * @param buffer       holding a message with a MAC at {@code offset + signedLength}.
     * @param offset       of the message.
     * @param signedLength bytes covered by the MAC.
     * @return true when the MAC matches (compared in constant time).
     */
    public boolean verify(final DirectBuffer buffer, final int offset, final int signedLength) {
        compute(buffer, offset, signedLength, expected);
        buffer.getBytes(offset + signedLength, received);
        return MessageDigest.isEqual(expected, received);
    }

    private void compute(final DirectBuffer buffer, final int offset, final int signedLength, final byte[] out) {
        buffer.getBytes(offset, signed, 0, signedLength);
        mac.update(signed, 0, signedLength);
        try {
            mac.doFinal(out, 0);
        } catch (final ShortBufferException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
