package io.dlion.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;

import io.dlion.testing.TestBits;
import io.dlion.vote.VoteAggregator;

/**
 * The count planes (and the sign plane, the same copy) against a per-parameter reference written from the class
 * comment's layout: random vectors and chunks (partial last bytes and words), every byte alignment, heap and direct
 * buffers of both byte orders, through a {@code ByteBuffer} and through {@link WordViews} reused from chunk to chunk;
 * and nothing allocated per chunk through the views.
 */
class CountEncodingTest {

    private static final DownlinkEncoding[] ENCODINGS = {SignEncoding.INSTANCE, new CountEncoding(1), new CountEncoding(3),
        new CountEncoding(8), new CountEncoding(64), new CountEncoding(VoteAggregator.MAX_VOTERS)};

    private static final byte SENTINEL = (byte) 0xA5;

    @Test
    void shouldWriteAndReadTheReferenceBytesForRandomChunks() {
        final Random random = new Random(17);
        final WordViews views = new WordViews();
        for (final DownlinkEncoding encoding : ENCODINGS) {
            for (int trial = 0; trial < 60; trial++) {
                final long n = trial < 8 ? trial : 1 + random.nextInt(5000);
                final int words = TestBits.words(n);
                final long[][] planes = new long[encoding.planes()][];
                for (int p = 0; p < planes.length; p++) {
                    planes[p] = TestBits.random(random, n);
                }
                final int from = words == 0 ? 0 : random.nextInt(words);
                final int to = trial % 3 == 0 ? words : from + random.nextInt(words - from + 1);
                final byte[] expected = reference(planes, n, from, to);
                final int length = encoding.encodedLength(n, from, to);
                assertEquals(expected.length, length, encoding + " n=" + n + " [" + from + ", " + to + ")");
                final int offset = random.nextInt(24);
                final ByteBuffer buffer = (trial & 1) == 0 ? ByteBuffer.allocate(offset + length + 9)
                    : ByteBuffer.allocateDirect(offset + length + 9);
                buffer.order((trial & 2) == 0 ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN);
                final String what = encoding + " n=" + n + " [" + from + ", " + to + ") offset " + offset + " " + buffer;

                fill(buffer);
                assertEquals(length, encoding.encode(planes, n, from, to, buffer, offset), what);
                assertBytes(expected, buffer, offset, what + " (ByteBuffer)");
                fill(buffer);
                assertEquals(length, encoding.encode(planes, n, from, to, views.of(buffer), offset), what);
                assertBytes(expected, buffer, offset, what + " (views)");

                setPadding(buffer, offset, encoding.planes(), Math.min(64L * to, n) - 64L * from);
                final long[][] viaBuffer = filled(planes.length, words);
                assertEquals(length, encoding.decode(buffer, offset, n, from, to, viaBuffer), what);
                assertChunk(planes, viaBuffer, from, to, what + " (ByteBuffer)");
                final long[][] viaViews = filled(planes.length, words);
                assertEquals(length, encoding.decode(views.of(buffer), offset, n, from, to, viaViews), what);
                assertChunk(planes, viaViews, from, to, what + " (views)");
            }
        }
    }

    @Test
    void shouldAllocateNothingPerChunkThroughTheViews() {
        final long n = 1_000_000 - 3;
        final int words = TestBits.words(n);
        final int chunk = 1000;
        final DownlinkEncoding encoding = new CountEncoding(8);
        final Random random = new Random(5);
        final long[][] planes = new long[encoding.planes()][];
        for (int p = 0; p < planes.length; p++) {
            planes[p] = TestBits.random(random, n);
        }
        final long[][] out = new long[encoding.planes()][words];
        final ByteBuffer wire = ByteBuffer.allocateDirect((int) encoding.encodedLength(n) + 64);
        final WordViews views = new WordViews();
        final com.sun.management.ThreadMXBean bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = 0;
        final int passes = 20;
        for (int pass = 0; pass < 2 * passes; pass++) {
            if (pass == passes) {
                before = bean.getCurrentThreadAllocatedBytes();
            }
            // offset 3: the words of every plane after the first chunk's lie off an 8-byte boundary
            int offset = 3;
            for (int from = 0; from < words; from += chunk) {
                offset += encoding.encode(planes, n, from, Math.min(words, from + chunk), views.of(wire), offset);
            }
            offset = 3;
            for (int from = 0; from < words; from += chunk) {
                offset += encoding.decode(views.of(wire), offset, n, from, Math.min(words, from + chunk), out);
            }
        }
        final long perPass = (bean.getCurrentThreadAllocatedBytes() - before) / passes;
        for (int p = 0; p < planes.length; p++) {
            assertArrayEquals(planes[p], out[p], "plane " + p);
        }
        assertTrue(perPass < 64, "bytes allocated per pass of " + (words + chunk - 1) / chunk + " chunks: " + perPass);
    }

    /** The chunk's bytes from the layout: plane after plane, parameter i of the chunk in byte i / 8, bit 7 - i % 8. */
    private static byte[] reference(final long[][] planes, final long n, final int from, final int to) {
        final long first = 64L * from;
        final long params = Math.min(64L * to, n) - first;
        final int planeBytes = (int) ((params + 7) / 8);
        final byte[] bytes = new byte[planes.length * planeBytes];
        for (int p = 0; p < planes.length; p++) {
            for (long i = 0; i < params; i++) {
                if (TestBits.get(planes[p], first + i)) {
                    bytes[p * planeBytes + (int) (i / 8)] |= (byte) (0x80 >>> (i % 8));
                }
            }
        }
        return bytes;
    }

    private static void fill(final ByteBuffer buffer) {
        for (int i = 0; i < buffer.capacity(); i++) {
            buffer.put(i, SENTINEL);
        }
    }

    /** The chunk's bytes at {@code offset}, and every other byte of the buffer untouched. */
    private static void assertBytes(final byte[] expected, final ByteBuffer buffer, final int offset, final String what) {
        final byte[] all = new byte[buffer.capacity()];
        buffer.get(0, all);
        assertArrayEquals(expected, Arrays.copyOfRange(all, offset, offset + expected.length), what);
        for (int i = 0; i < all.length; i++) {
            if (i < offset || i >= offset + expected.length) {
                assertEquals(SENTINEL, all[i], what + ": byte " + i + " outside the chunk");
            }
        }
    }

    /** Set the padding bits of each plane's last byte (the chunk's {@code params} end inside it), which a decode must clear. */
    private static void setPadding(final ByteBuffer buffer, final int offset, final int planes, final long params) {
        final int used = (int) (params % 8);
        if (used == 0) {
            return;
        }
        final int planeBytes = (int) ((params + 7) / 8);
        for (int p = 0; p < planes; p++) {
            final int last = offset + (p + 1) * planeBytes - 1;
            buffer.put(last, (byte) (buffer.get(last) | 0xFF >>> used));
        }
    }

    /** The chunk's words decoded (padding bits zero, as the input's), the words outside it untouched. */
    private static void assertChunk(final long[][] planes, final long[][] out, final int from, final int to, final String what) {
        for (int p = 0; p < planes.length; p++) {
            for (int w = 0; w < planes[p].length; w++) {
                assertEquals(w >= from && w < to ? planes[p][w] : -1L, out[p][w], what + ": plane " + p + " word " + w);
            }
        }
    }

    private static long[][] filled(final int planes, final int words) {
        final long[][] out = new long[planes][words];
        for (final long[] plane : out) {
            Arrays.fill(plane, -1L);
        }
        return out;
    }
}
