package io.dlion.codec;

import java.nio.ByteBuffer;

import io.dlion.vote.VoteAggregator;

/**
 * Averaging result: the count k of +1 votes per parameter as {@code P = ceil(log2(N + 1))} bit planes,
 * exactly P bits per parameter. A chunk holds its planes one after the other:
 * <pre>
 *   +----------------------+----------------------+-- ... --+--------------------------+
 *   | plane 0 (bit 0 of k) | plane 1 (bit 1 of k) |         | plane P-1                |
 *   | ceil(params / 8) B   | ceil(params / 8) B   |         | ceil(params / 8) B       |
 *   +----------------------+----------------------+-- ... --+--------------------------+
 * </pre>
 * Any word range is a valid chunk ({@link #wordAlignment()} is 1).
 */
public final class CountEncoding implements DownlinkEncoding {

    private final int voters;
    private final int planes;

    /** @param voters number of voters of the round, 1 to {@link VoteAggregator#MAX_VOTERS}. */
    public CountEncoding(final int voters) {
        this.planes = VoteAggregator.planes(voters);
        this.voters = voters;
    }

    /** @return the number of voters this encoding is for. */
    public int voters() {
        return voters;
    }

    @Override
    public double bitsPerParameter() {
        return planes;
    }

    @Override
    public int planes() {
        return planes;
    }

    @Override
    public int wordAlignment() {
        return 1;
    }

    @Override
    public int encodedLength(final long paramCount, final int fromWord, final int toWord) {
        return planes * (int) ((BitPlanes.chunkParams(paramCount, fromWord, toWord, 1) + 7) >>> 3);
    }

    @Override
    public long encodedLength(final long paramCount) {
        return planes * ((paramCount + 7) >>> 3);
    }

    @Override
    public int encode(final long[][] planesIn, final long paramCount, final int fromWord, final int toWord, final ByteBuffer dst,
        final int offset) {
        // through views made for this call: the exchange keeps one WordViews per buffer instead
        return encode(planesIn, paramCount, fromWord, toWord, new WordViews().of(dst), offset);
    }

    @Override
    public int decode(final ByteBuffer src, final int offset, final long paramCount, final int fromWord, final int toWord,
        final long[][] planesOut) {
        return decode(new WordViews().of(src), offset, paramCount, fromWord, toWord, planesOut);
    }

    /** Like {@link #encode(long[][], long, int, int, ByteBuffer, int)}, each plane's whole words in one bulk copy. */
    @Override
    public int encode(final long[][] planesIn, final long paramCount, final int fromWord, final int toWord, final WordViews dst,
        final int offset) {
        return BitPlanes.putPlanes(planesIn, planes, paramCount, fromWord, toWord, dst, offset);
    }

    /** Like {@link #decode(ByteBuffer, int, long, int, int, long[][])}, each plane's whole words in one bulk copy. */
    @Override
    public int decode(final WordViews src, final int offset, final long paramCount, final int fromWord, final int toWord,
        final long[][] planesOut) {
        return BitPlanes.getPlanes(src, offset, paramCount, fromWord, toWord, planesOut, planes);
    }

    @Override
    public String toString() {
        return "CountEncoding[" + voters + " voters, " + planes + " bits/param]";
    }
}
