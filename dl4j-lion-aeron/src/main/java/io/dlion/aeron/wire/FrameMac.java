package io.dlion.aeron.wire;

import java.nio.charset.StandardCharsets;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Per-frame authentication, the job's {@code frameMac} option: a tag of {@value #TAG_LENGTH} bytes after every vote
 * chunk, result chunk, ROUND_ABORT and JOIN_NOTICE, so that an attacker on the path, who can read the traffic and
 * inject packets into a session, can neither forge nor alter a frame.
 * <p>
 * The tag is HMAC-SHA256 truncated to 128 bits (as IPsec's HMAC-SHA-256-128) over the sender's Aeron session id
 * (4 bytes, little-endian) followed by the frame, under a key derived from the job's secret
 * ({@code HMAC-SHA256(secret, "dlion frame-mac v1")}), so a frame tag never doubles as a HELLO MAC. Binding the session:
 * a frame copied into another session fails, and the sessions of a job are the ones its HELLOs and HELLO_ACKs proved.
 * Replays inside a session are stopped by what the frame says: its round, chunk offset and worker (an old round is
 * stale, a second copy of a chunk a duplicate). HMAC needs no nonce, so a worker or server restarted with the same
 * secret cannot reuse one, as it could with GMAC; the JDK computes SHA-256 with the CPU's SHA extensions where it has
 * them.
 * <p>
 * Not thread-safe: one instance per thread that signs or verifies. Nothing is allocated per frame.
 */
public final class FrameMac {
    /** Bytes of the tag appended to a frame. */
    public static final int TAG_LENGTH = 16;

    private static final byte[] LABEL = "dlion frame-mac v1".getBytes(StandardCharsets.US_ASCII);

    private final Hmac hmac;
    private final byte[] session = new byte[Integer.BYTES];

    /**
     * @param secret the job's shared secret, at least {@value Hmac#MIN_SECRET_LENGTH} bytes.
     */
    public FrameMac(final byte[] secret) {
        this.hmac = Hmac.derived(secret, LABEL);
    }

    /**
     * Write the tag of frame bytes {@code [offset, offset + length)} at {@code offset + length}; the buffer must have
     * room for {@link #TAG_LENGTH} more bytes there.
     *
     * @param buffer    holding the frame.
     * @param offset    of the frame.
     * @param length    of the frame without its tag.
     * @param sessionId Aeron session the frame is sent on.
     */
    public void sign(final MutableDirectBuffer buffer, final int offset, final int length, final int sessionId) {
        hmac.sign(session(sessionId), buffer, offset, length, TAG_LENGTH);
    }

    /**
     * @param buffer    holding a received frame that ends with its tag.
     * @param offset    of the frame.
     * @param length    of the frame with its tag.
     * @param sessionId Aeron session the frame came on.
     * @return true when the frame is at least a tag long and its tag is the one of this key and session (compared in
     *     constant time).
     */
    public boolean verify(final DirectBuffer buffer, final int offset, final int length, final int sessionId) {
        final int body = length - TAG_LENGTH;
        return body >= 0 && hmac.verify(session(sessionId), buffer, offset, body, TAG_LENGTH);
    }

    /** @return the session id's 4 bytes, little-endian: covered before the frame. */
    private byte[] session(final int sessionId) {
        session[0] = (byte)sessionId;
        session[1] = (byte)(sessionId >>> 8);
        session[2] = (byte)(sessionId >>> 16);
        session[3] = (byte)(sessionId >>> 24);
        return session;
    }
}
