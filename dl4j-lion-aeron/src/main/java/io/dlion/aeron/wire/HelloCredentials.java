package io.dlion.aeron.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The job's shared secret as a message authentication code: an HMAC-SHA256 ({@link Hmac}, keyed with the secret) over
 * the first bytes of a message (its header and the fields of its body before the MAC), written right after them. Both
 * handshake frames use it: a worker's {@link HelloFlyweight HELLO} proves the worker holds the secret, the server's
 * {@link HelloAckFlyweight HELLO_ACK} proves the server does, over the worker's nonce and the server's Aeron session.
 * Not thread-safe: one instance per server or worker thread.
 */
public final class HelloCredentials {
    /** Length of the MAC. */
    public static final int MAC_LENGTH = Hmac.LENGTH;
    /** Shortest secret accepted, in bytes. */
    public static final int MIN_SECRET_LENGTH = Hmac.MIN_SECRET_LENGTH;

    private final Hmac hmac;

    /**
     * @param secret the job's shared secret, at least {@value #MIN_SECRET_LENGTH} bytes.
     */
    public HelloCredentials(final byte[] secret) {
        this.hmac = Hmac.of(secret);
    }

    /**
     * Write the MAC of bytes {@code [offset, offset + signedLength)} at {@code offset + signedLength}.
     *
     * @param buffer       holding the message.
     * @param offset       of the message.
     * @param signedLength bytes covered by the MAC.
     */
    public void sign(final MutableDirectBuffer buffer, final int offset, final int signedLength) {
        hmac.sign(null, buffer, offset, signedLength, MAC_LENGTH);
    }

    /**
     * @param buffer       holding a message with a MAC at {@code offset + signedLength}.
     * @param offset       of the message.
     * @param signedLength bytes covered by the MAC.
     * @return true when the MAC matches (compared in constant time).
     */
    public boolean verify(final DirectBuffer buffer, final int offset, final int signedLength) {
        return hmac.verify(null, buffer, offset, signedLength, MAC_LENGTH);
    }
}
