package io.dlion.aeron.wire;

import java.security.GeneralSecurityException;
import java.util.Objects;

import javax.crypto.Mac;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.SecretKeySpec;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * HMAC-SHA256 of the job's secret over a message's bytes, written after them or checked there: the one construction
 * behind the HELLO and HELLO_ACK credentials ({@link HelloCredentials}: the whole 32-byte MAC over the bytes before
 * it), the frame tags ({@link FrameMac}: a derived key, the sender's session first, 16 bytes kept) and the hand-over's
 * begin frame ({@link HandOverBeginFlyweight}). Each copies the covered bytes out of the (possibly off-heap) buffer,
 * computes the HMAC, and compares a received one in constant time (every byte, whatever differs first).
 * <pre>
 *   mac = HMAC-SHA256(key, prefix || buffer[offset, offset + length))[0, tagLength)     written at offset + length
 * </pre>
 * Not thread-safe: one instance per thread that signs or verifies. Nothing is allocated per message once the scratch
 * buffer holds the longest message.
 */
public final class Hmac {
    /** Bytes of an HMAC-SHA256. */
    public static final int LENGTH = 32;
    /** Shortest secret accepted, in bytes. */
    public static final int MIN_SECRET_LENGTH = 16;

    private static final String ALGORITHM = "HmacSHA256";

    private final Mac mac;
    private final byte[] full = new byte[LENGTH];
    private final byte[] received = new byte[LENGTH];
    private byte[] scratch = new byte[256];

    private Hmac(final byte[] key) {
        try {
            mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(key, ALGORITHM));
        } catch (final GeneralSecurityException ex) {
            throw new IllegalStateException("HmacSHA256 unavailable", ex);
        }
    }

    /**
     * @param secret the job's shared secret, at least {@value #MIN_SECRET_LENGTH} bytes: the key.
     * @return an HMAC keyed with the secret.
     */
    public static Hmac of(final byte[] secret) {
        return new Hmac(check(secret));
    }

    /**
     * @param secret the job's shared secret, at least {@value #MIN_SECRET_LENGTH} bytes.
     * @param label  what the key is for.
     * @return an HMAC keyed with {@code HMAC-SHA256(secret, label)}, so that its MACs never double as another use's.
     */
    public static Hmac derived(final byte[] secret, final byte[] label) {
        return new Hmac(new Hmac(check(secret)).mac.doFinal(label));
    }

    private static byte[] check(final byte[] secret) {
        Objects.requireNonNull(secret, "secret");
        if (secret.length < MIN_SECRET_LENGTH) {
            throw new IllegalArgumentException("secret must be at least " + MIN_SECRET_LENGTH + " bytes, got " + secret.length);
        }
        return secret;
    }

    /**
     * Write the first {@code tagLength} bytes of the HMAC of {@code prefix} and bytes {@code [offset, offset + length)}
     * at {@code offset + length}.
     *
     * @param prefix    bytes covered before the message's (e.g. a session id), or null.
     * @param buffer    holding the message, with room for the tag after it.
     * @param offset    of the message.
     * @param length    bytes covered.
     * @param tagLength bytes of the HMAC written, 1 to {@value #LENGTH}.
     */
    public void sign(final byte[] prefix, final MutableDirectBuffer buffer, final int offset, final int length, final int tagLength) {
        compute(prefix, buffer, offset, length);
        buffer.putBytes(offset + length, full, 0, tagLength);
    }

    /**
     * @param prefix    bytes covered before the message's, or null.
     * @param buffer    holding a message followed by its tag.
     * @param offset    of the message.
     * @param length    bytes covered (the tag starts right after them).
     * @param tagLength bytes of the tag, 1 to {@value #LENGTH}.
     * @return true when the tag is the first {@code tagLength} bytes of this key's HMAC (compared in constant time).
     */
    public boolean verify(final byte[] prefix, final DirectBuffer buffer, final int offset, final int length, final int tagLength) {
        compute(prefix, buffer, offset, length);
        buffer.getBytes(offset + length, received, 0, tagLength);
        int difference = 0;
        for (int i = 0; i < tagLength; i++) {
            difference |= full[i] ^ received[i];
        }
        return difference == 0;
    }

    private void compute(final byte[] prefix, final DirectBuffer buffer, final int offset, final int length) {
        if (scratch.length < length) {
            scratch = new byte[length];
        }
        buffer.getBytes(offset, scratch, 0, length);
        if (prefix != null) {
            mac.update(prefix);
        }
        mac.update(scratch, 0, length);
        try {
            mac.doFinal(full, 0);
        } catch (final ShortBufferException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
