package io.dlion.aeron.wire;

import io.dlion.codec.WordViews;
import org.agrona.DirectBuffer;

/**
 * Little-endian views of the buffer behind Aeron's term buffers ({@link WordViews}: the bytes, and the words the
 * count and sign planes are copied through in bulk), made once per underlying buffer and then reused: a fresh view per
 * chunk would be garbage on every chunk of every round. The views share the underlying memory, so
 * {@link WireBuffers#index} indexes them. Not thread-safe: one per sending or receiving path.
 */
public final class LittleEndianView {
    private final WordViews views = new WordViews();

    /**
     * @param buffer an Agrona buffer over a {@code ByteBuffer} (Aeron's log buffers) or a {@code byte[]}.
     * @return views of the whole underlying buffer, the same ones while the underlying buffer is.
     */
    public WordViews of(final DirectBuffer buffer) {
        return views.of(WireBuffers.byteBuffer(buffer));
    }
}
