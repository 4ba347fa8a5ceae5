package io.dlion.codec;

import java.nio.ByteBuffer;

/** Chunk arithmetic and plane copies shared by the down-link encodings. */
final class BitPlanes {

    private BitPlanes() {
    }

    /** @return number of words holding {@code paramCount} parameters. */
    static int words(final long paramCount) {
        return (int) ((paramCount + 63) >>> 6);
    }

    /** @return the number of parameters in the chunk, after checking it lies in the vector. */
    static long chunkParams(final long paramCount, final int fromWord, final int toWord, final int alignment) {
        if (paramCount < 0) {
            throw new IllegalArgumentException("paramCount must be >= 0, got " + paramCount);
        }
        final int words = words(paramCount);
        if (fromWord < 0 || toWord < fromWord || toWord > words) {
            throw new IllegalArgumentException("bad word range [" + fromWord + ", " + toWord + ") for " + paramCount + " parameters");
        }
        if (fromWord % alignment != 0 || (toWord % alignment != 0 && toWord != words)) {
            throw new IllegalArgumentException("chunk [" + fromWord + ", " + toWord + ") must start and end at a multiple of "
                + alignment + " words (or at the end, word " + words + ")");
        }
        // an empty chunk holds nothing, also at the end of a vector whose last word is partly used
        return fromWord == toWord ? 0 : Math.min((long) toWord << 6, paramCount) - ((long) fromWord << 6);
    }

    /** @return the word's mask of valid parameters, for the word {@code word} of a vector of {@code paramCount}. */
    static long validMask(final long paramCount, final int word) {
        final long valid = paramCount - ((long) word << 6);
        if (valid >= 64) {
            return -1L;
        }
        if (valid <= 0) {
            return 0L;
        }
        final int full = (int) (valid >>> 3);
        final int rest = (int) (valid & 7);
        final long fullMask = full == 0 ? 0L : -1L >>> (64 - 8 * full);
        final long partial = ((0xFF00L >>> rest) & 0xFFL) << (8 * full);
        return fullMask | partial;
    }

    static void checkPlanes(final long[][] planes, final int count, final int toWord) {
        if (planes == null || planes.length < count) {
            throw new IllegalArgumentException("need " + count + " planes, got " + (planes == null ? null : planes.length));
        }
        for (int p = 0; p < count; p++) {
            if (planes[p] == null || planes[p].length < toWord) {
                throw new IllegalArgumentException("plane " + p + " must hold at least " + toWord + " words");
            }
        }
    }

    /**
     * Write a chunk of {@code count} planes, one after the other, each as {@link #putPlane} writes it.
     *
     * @return the bytes written: {@code count * ceil(params / 8)}.
     */
    static int putPlanes(final long[][] planes, final int count, final long paramCount, final int fromWord, final int toWord,
        final WordViews dst, final int offset) {
        final long params = chunkParams(paramCount, fromWord, toWord, 1);
        checkPlanes(planes, count, toWord);
        final int planeBytes = (int) ((params + 7) >>> 3);
        for (int p = 0; p < count; p++) {
            putPlane(planes[p], fromWord, params, dst, offset + p * planeBytes);
        }
        return count * planeBytes;
    }

    /**
     * Read a chunk of {@code count} planes written by {@link #putPlanes}, each as {@link #getPlane} reads it.
     *
     * @return the bytes read.
     */
    static int getPlanes(final WordViews src, final int offset, final long paramCount, final int fromWord, final int toWord,
        final long[][] planes, final int count) {
        final long params = chunkParams(paramCount, fromWord, toWord, 1);
        checkPlanes(planes, count, toWord);
        final int planeBytes = (int) ((params + 7) >>> 3);
        for (int p = 0; p < count; p++) {
            getPlane(src, offset + p * planeBytes, paramCount, fromWord, params, planes[p]);
        }
        return count * planeBytes;
    }

    /**
     * Write the chunk of one plane as {@code ceil(params / 8)} bytes, little-endian words: the whole words in one bulk copy
     * through {@code dst}'s views, the last bytes one by one.
     */
    private static void putPlane(final long[] plane, final int fromWord, final long params, final WordViews dst, final int offset) {
        final int bytes = (int) ((params + 7) >>> 3);
        final int fullWords = bytes >>> 3;
        if (fullWords > 0) {
            dst.words(offset).put(offset >>> 3, plane, fromWord, fullWords);
        }
        putTail(plane, fromWord + fullWords, bytes & 7, dst.bytes(), offset + 8 * fullWords);
    }

    /** Write the first {@code rest} (0 to 7) bytes of the little-endian word {@code plane[word]} at {@code offset}. */
    private static void putTail(final long[] plane, final int word, final int rest, final ByteBuffer le, final int offset) {
        if (rest != 0) {
            final long w = plane[word];
            for (int k = 0; k < rest; k++) {
                le.put(offset + k, (byte) (w >>> (8 * k)));
            }
        }
    }

    /** Read a chunk of one plane written by {@link #putPlane}, clearing padding bits: the whole words in one bulk copy. */
    private static void getPlane(final WordViews src, final int offset, final long paramCount, final int fromWord, final long params,
        final long[] plane) {
        final int bytes = (int) ((params + 7) >>> 3);
        final int fullWords = bytes >>> 3;
        if (fullWords > 0) {
            src.words(offset).get(offset >>> 3, plane, fromWord, fullWords);
        }
        getTail(src.bytes(), offset + 8 * fullWords, bytes & 7, plane, fromWord + fullWords);
        clearPadding(plane, paramCount, fromWord, params);
    }

    /** Read {@code rest} (0 to 7) bytes at {@code offset} into the low bytes of {@code plane[word]}, little-endian. */
    private static void getTail(final ByteBuffer le, final int offset, final int rest, final long[] plane, final int word) {
        if (rest != 0) {
            long w = 0;
            for (int k = 0; k < rest; k++) {
                w |= (le.get(offset + k) & 0xFFL) << (8 * k);
            }
            plane[word] = w;
        }
    }

    /** Clear the padding bits of the chunk's last word. */
    private static void clearPadding(final long[] plane, final long paramCount, final int fromWord, final long params) {
        final int words = (int) ((params + 63) >>> 6);
        if (words > 0) {
            final int last = fromWord + words - 1;
            plane[last] &= validMask(paramCount, last);
        }
    }
}
