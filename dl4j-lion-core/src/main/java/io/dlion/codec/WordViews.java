package io.dlion.codec;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.util.Arrays;

/**
 * A {@link ByteBuffer} as the down-link encodings read and write it, viewed once and reused: a little-endian view of
 * the whole buffer, and little-endian {@link LongBuffer} views of it that copy a plane's whole words in bulk (a memory
 * copy on a little-endian machine), one per byte alignment of the offsets used, made on first use. A view per chunk
 * would be garbage on every chunk of every round; these are made again only when the buffer changes. The views share
 * the buffer's memory and its indices; the buffer's position, limit and byte order are not used or changed.
 * Not thread-safe: one per sending or receiving path.
 */
public final class WordViews {
    private ByteBuffer source;
    private ByteBuffer bytes;
    private final LongBuffer[] words = new LongBuffer[Long.BYTES];

    /**
     * @param buffer the buffer to read or write next.
     * @return this, viewing {@code buffer} (the same views while it is the same buffer).
     */
    public WordViews of(final ByteBuffer buffer) {
        if (buffer != source) {
            bytes = buffer.duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
            Arrays.fill(words, null);
            source = buffer;
        }
        return this;
    }

    /** @return a little-endian view of the whole buffer, indexed like it. */
    public ByteBuffer bytes() {
        return bytes;
    }

    /**
     * @param offset a byte index in the buffer.
     * @return a little-endian view of longs whose index {@code offset >>> 3} is the 8 bytes at {@code offset}.
     */
    LongBuffer words(final int offset) {
        final int alignment = offset & (Long.BYTES - 1);
        LongBuffer view = words[alignment];
        if (view == null) {
            view = bytes.duplicate().position(alignment).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer();
            words[alignment] = view;
        }
        return view;
    }
}
