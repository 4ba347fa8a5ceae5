package io.dlion.aeron.wire;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.agrona.DirectBuffer;

/**
 * A little-endian {@link ByteBuffer} view of the buffer behind Aeron's term buffers, made once per underlying buffer and
 * then reused: the codecs read and write little-endian words, and a fresh view per chunk would be garbage on every
 * chunk of every round. The view shares the underlying memory, so {@link WireBuffers#index} indexes it. Not
 * thread-safe: one per sending or receiving path.
 */
public final class LittleEndianView {
    private ByteBuffer source;
    private ByteBuffer view;

    /**
     * @param buffer an Agrona buffer over a {@code ByteBuffer} (Aeron's log buffers) or a {@code byte[]}.
     * @return a little-endian view of the whole underlying buffer, the same one while the underlying buffer is.
     */
    public ByteBuffer of(final DirectBuffer buffer) {
        final ByteBuffer underlying = WireBuffers.byteBuffer(buffer);
        if (underlying != source) {
            source = underlying;
            view = underlying.order() == ByteOrder.LITTLE_ENDIAN ? underlying : underlying.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        }
        return view;
    }
}
