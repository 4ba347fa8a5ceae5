package io.dlion.aeron;

import java.nio.ByteBuffer;

import org.agrona.DirectBuffer;

/**
 * A {@link ByteBuffer} view of an Agrona buffer, so core's {@link io.dlion.codec.DownlinkEncoding}s read and write
 * Aeron's term buffers in place (no copy): Aeron's log buffers wrap a mapped {@code ByteBuffer}, test buffers a
 * {@code byte[]}.
 */
public final class WireBuffers {
    private WireBuffers() {
    }

    /**
     * @param buffer an Agrona buffer over a {@code ByteBuffer} or a {@code byte[]}.
     * @return the {@code ByteBuffer} to pass to the codec, indexed with {@link #index(DirectBuffer, int)}.
     * @throws IllegalArgumentException when the buffer wraps a raw address.
     */
    public static ByteBuffer byteBuffer(final DirectBuffer buffer) {
        final ByteBuffer byteBuffer = buffer.byteBuffer();
        if (byteBuffer != null) {
            return byteBuffer;
        }
        final byte[] array = buffer.byteArray();
        if (array != null) {
            return ByteBuffer.wrap(array);
        }
        throw new IllegalArgumentException("buffer wraps neither a ByteBuffer nor a byte[]: " + buffer);
    }

    /**
     * @param buffer the Agrona buffer.
     * @param offset an offset in it.
     * @return the absolute index of that offset in {@link #byteBuffer(DirectBuffer)}.
     */
    public static int index(final DirectBuffer buffer, final int offset) {
        return buffer.wrapAdjustment() + offset;
    }
}
