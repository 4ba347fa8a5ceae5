package io.dlion.aeron.wire;

import java.nio.charset.StandardCharsets;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The frame tag against values computed outside this code, with Python's standard library:
 * <pre>
 *   k = hmac.new(secret, b'dlion frame-mac v1', hashlib.sha256).digest()
 *   hmac.new(k, struct.pack('&lt;i', session) + bytes(range(100)), hashlib.sha256).digest()[:16].hex()
 * </pre>
 * and every way a frame can be forged, altered or moved to another session fails verification.
 */
class FrameMacTest {
    private static final byte[] SECRET = "dl4j-lion test secret, 32 bytes!".getBytes(StandardCharsets.US_ASCII);
    private static final int FRAME = 100;

    @Test
    void shouldWriteTheTagPythonsHmacComputes() {
        assertEquals("fb9ec7edb0aa460912295074f695a8b0", hex(tagOf(0x01020304)));
        assertEquals("6126b86d084aaa5d01a0e822068b8dcc", hex(tagOf(-7)));
    }

    @Test
    void shouldWriteOnlyTheTagAfterTheFrame() {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[FRAME + FrameMac.TAG_LENGTH + 8]);
        buffer.setMemory(0, buffer.capacity(), (byte)0x5A);
        fill(buffer);
        new FrameMac(SECRET).sign(buffer, 4, FRAME - 4, 9);
        for (int i = 0; i < FRAME; i++) {
            assertEquals((byte)i, buffer.getByte(i), "frame byte " + i);
        }
        for (int i = FRAME + FrameMac.TAG_LENGTH; i < buffer.capacity(); i++) {
            assertEquals((byte)0x5A, buffer.getByte(i), "byte " + i + " after the tag");
        }
    }

    @Test
    void shouldAcceptTheFrameItSignedAndNothingElse() {
        final FrameMac mac = new FrameMac(SECRET);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[FRAME + FrameMac.TAG_LENGTH]);
        fill(buffer);
        mac.sign(buffer, 0, FRAME, 42);
        final int length = FRAME + FrameMac.TAG_LENGTH;
        assertTrue(mac.verify(buffer, 0, length, 42));
        assertFalse(mac.verify(buffer, 0, length, 43), "another session");
        assertFalse(new FrameMac("another secret of 32 bytes, too!".getBytes(StandardCharsets.US_ASCII)).verify(buffer, 0, length, 42),
            "another job's secret");
        assertFalse(mac.verify(buffer, 0, length - 1, 42), "truncated");
        assertFalse(mac.verify(buffer, 0, FrameMac.TAG_LENGTH - 1, 42), "shorter than a tag");
        for (int i = 0; i < length; i++) {
            for (int bit = 0; bit < 8; bit += 7) {
                buffer.putByte(i, (byte)(buffer.getByte(i) ^ (1 << bit)));
                assertFalse(mac.verify(buffer, 0, length, 42), "byte " + i + " bit " + bit + " flipped");
                buffer.putByte(i, (byte)(buffer.getByte(i) ^ (1 << bit)));
            }
        }
        assertTrue(mac.verify(buffer, 0, length, 42), "restored");
        final UnsafeBuffer larger = new UnsafeBuffer(new byte[20_000 + FrameMac.TAG_LENGTH]);
        mac.sign(larger, 0, 20_000, 1);
        assertTrue(mac.verify(larger, 0, larger.capacity(), 1), "a frame larger than the first scratch");
    }

    @Test
    void shouldRefuseAShortSecret() {
        assertThrows(IllegalArgumentException.class, () -> new FrameMac(new byte[15]));
    }

    private static byte[] tagOf(final int session) {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[FRAME + FrameMac.TAG_LENGTH]);
        fill(buffer);
        new FrameMac(SECRET).sign(buffer, 0, FRAME, session);
        final byte[] tag = new byte[FrameMac.TAG_LENGTH];
        buffer.getBytes(FRAME, tag);
        final byte[] again = new byte[FrameMac.TAG_LENGTH];
        final FrameMac mac = new FrameMac(SECRET);
        mac.sign(buffer, 0, FRAME, session);
        buffer.getBytes(FRAME, again);
        assertArrayEquals(tag, again, "deterministic");
        return tag;
    }

    private static void fill(final UnsafeBuffer buffer) {
        for (int i = 0; i < FRAME; i++) {
            buffer.putByte(i, (byte)i);
        }
    }

    private static String hex(final byte[] bytes) {
        final StringBuilder sb = new StringBuilder();
        for (final byte b : bytes) {
            sb.append(String.format("%02x", b & 0xFF));
        }
        return sb.toString();
    }
}
