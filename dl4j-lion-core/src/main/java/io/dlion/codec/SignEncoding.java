package io.dlion.codec;

import java.nio.ByteBuffer;

/**
 * Majority vote with an odd number of voters (no tie is possible): the sign words themselves,
 * exactly 1 bit per parameter.
 * <pre>
 *   bytes(chunk) = ceil(params_in_chunk / 8)      the packed bytes, in order
 * </pre>
 * Any word range is a valid chunk ({@link #wordAlignment()} is 1), and the chunks' bytes concatenated in
 * word order are the whole vector's encoding.
 */
public final class SignEncoding implements DownlinkEncoding {

    /** The only instance. */
    public static final SignEncoding INSTANCE = new SignEncoding();

    private SignEncoding() {
    }

    @Override
    public double bitsPerParameter() {
        return 1.0;
    }

    @Override
    public int planes() {
        return 1;
    }

    @Override
    public int wordAlignment() {
        return 1;
    }

    @Override
    public int encodedLength(final long paramCount, final int fromWord, final int toWord) {
        return (int) ((BitPlanes.chunkParams(paramCount, fromWord, toWord, 1) + 7) >>> 3);
    }

    @Override
    public long encodedLength(final long paramCount) {
        return (paramCount + 7) >>> 3;
    }

    @Override
    public int encode(final long[][] planes, final long paramCount, final int fromWord, final int toWord, final ByteBuffer dst,
        final int offset) {
        // through views made for this call: the exchange keeps one WordViews per buffer instead
        return encode(planes, paramCount, fromWord, toWord, new WordViews().of(dst), offset);
    }

    @Override
    public int decode(final ByteBuffer src, final int offset, final long paramCount, final int fromWord, final int toWord,
        final long[][] planesOut) {
        return decode(new WordViews().of(src), offset, paramCount, fromWord, toWord, planesOut);
    }

    /** Like {@link #encode(long[][], long, int, int, ByteBuffer, int)}, the whole words in one bulk copy. */
    @Override
    public int encode(final long[][] planes, final long paramCount, final int fromWord, final int toWord, final WordViews dst,
        final int offset) {
        return BitPlanes.putPlanes(planes, 1, paramCount, fromWord, toWord, dst, offset);
    }

    /** Like {@link #decode(ByteBuffer, int, long, int, int, long[][])}, the whole words in one bulk copy. */
    @Override
    public int decode(final WordViews src, final int offset, final long paramCount, final int fromWord, final int toWord,
        final long[][] planesOut) {
        return BitPlanes.getPlanes(src, offset, paramCount, fromWord, toWord, planesOut, 1);
    }

    @Override
    public String toString() {
        return "SignEncoding[1 bit/param]";
    }
}
