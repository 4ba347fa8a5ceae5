package io.dlion.codec;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Majority vote with an even number of voters: Delta in {-1, 0, +1} per parameter, 3 parameters in 5 bits
 * (27 of 32 codes), 5/3 = 1.67 bits per parameter.
 * <p>
 * A parameter's trit is a pair of bits (t, s): (0, 0) for Delta = -1, (0, 1) for +1, (1, 0) for a tie (0); (1, 1) is
 * never a trit, and the code uses it as an escape. Three parameters (trits 0, 1, 2) take 5 bits E, H1, L1, H0, L0:
 * <pre>
 *   trit 2 not a tie              E = s2   (H1, L1) = (t1, s1)   (H0, L0) = (t0, s0)
 *   trit 2 a tie, trit 1 not      E = s1   (H1, L1) = (1, 1)     (H0, L0) = (t0, s0)
 *   trits 2 and 1 ties            E = 0    (H1, L1) = (t0, s0)   (H0, L0) = (1, 1)
 * </pre>
 * The other 5 codes ((H1, L1) and (H0, L0) both (1, 1), or (H0, L0) = (1, 1) with E = 1) are invalid. The code is
 * bit-sliced, 64 parameters per word, so a chunk is cut into groups of 3 words (192 parameters), each encoded in
 * 5 words and decoded from them by about 20 word operations, with nothing per parameter:
 * <pre>
 *   group g of a chunk  = words 3g, 3g + 1, 3g + 2 of the chunk = trits 0, 1, 2 (bit b of each: one parameter)
 *   its 40 bytes        = H0, L0, H1, L1, E: 5 little-endian words, bit b of each the code of bit b's 3 parameters
 *   the chunk's last 1 or 2 words (when its word count is not a multiple of 3): their sign words, then their tie words
 *   bytes(chunk of w words) = 8 (5 floor(w / 3) + 2 (w mod 3))
 * </pre>
 * Any word range is a valid chunk ({@link #wordAlignment()} is 1). A 1,000-word chunk takes 1.6672 bits per
 * parameter. Decoding writes sign 0 where tie is 1 (the aggregator's convention; Delta does not depend on it), clears
 * the padding bits of the vector's last word, and rejects a chunk holding an invalid code ((H0, L0) = (1, 1) with E = 1
 * or (H1, L1) = (1, 1), or sign and tie both 1 in a last word), leaving zeros in its words.
 * <p>
 * Why not base 3 (5 trits in a byte, 1.6 bits): its digits take two comparisons and a subtraction each, bit-sliced
 * about 150 word operations per 320 parameters, 3 to 4 times this code's cost per parameter, for 4% fewer bytes on
 * the down-link (2.6 instead of 2.67 bits per parameter up and down). Measured in {@code CodecRatios}.
 */
public final class TernaryEncoding implements DownlinkEncoding {

    /** The only instance. */
    public static final TernaryEncoding INSTANCE = new TernaryEncoding();

    /** Words of a group: 3 parameters per code. */
    public static final int GROUP_WORDS = 3;
    /** Encoded words of a group: 5 bits per code. */
    public static final int GROUP_CODE_WORDS = 5;

    private TernaryEncoding() {
    }

    /**
     * @param words words of a chunk.
     * @return the bytes of the chunk's encoding.
     */
    public static int chunkLength(final int words) {
        return (int) length(words);
    }

    /** @return {@code 8 (5 floor(words / 3) + 2 (words mod 3))}: the bytes of the encoding of {@code words} words. */
    private static long length(final long words) {
        return Long.BYTES * (GROUP_CODE_WORDS * (words / GROUP_WORDS) + 2 * (words % GROUP_WORDS));
    }

    @Override
    public double bitsPerParameter() {
        return (double) GROUP_CODE_WORDS / GROUP_WORDS;
    }

    @Override
    public int planes() {
        return 2;
    }

    @Override
    public int wordAlignment() {
        return 1;
    }

    @Override
    public int encodedLength(final long paramCount, final int fromWord, final int toWord) {
        BitPlanes.chunkParams(paramCount, fromWord, toWord, 1);
        return chunkLength(toWord - fromWord);
    }

    @Override
    public long encodedLength(final long paramCount) {
        return length((paramCount + 63) >>> 6);
    }

    @Override
    public int encode(final long[][] planes, final long paramCount, final int fromWord, final int toWord, final ByteBuffer dst,
        final int offset) {
        BitPlanes.chunkParams(paramCount, fromWord, toWord, 1);
        BitPlanes.checkPlanes(planes, 2, toWord);
        final ByteBuffer le = dst.order() == ByteOrder.LITTLE_ENDIAN ? dst : dst.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        final long[] sign = planes[0];
        final long[] tie = planes[1];
        final int groupsEnd = toWord - (toWord - fromWord) % GROUP_WORDS;
        int out = offset;
        for (int w = fromWord; w < groupsEnd; w += GROUP_WORDS) {
            final long t0 = tie[w];
            final long t1 = tie[w + 1];
            final long t2 = tie[w + 2];
            final long s0 = sign[w] & ~t0;
            final long s1 = sign[w + 1] & ~t1;
            final long s2 = sign[w + 2] & ~t2;
            final long tieTwo = t2 & t1;            // trits 2 and 1 ties
            final long tieOne = t2 & ~t1;           // trit 2 a tie, trit 1 not
            le.putLong(out, tieTwo | t0);                                   // H0
            le.putLong(out + 8, tieTwo | s0);                               // L0
            le.putLong(out + 16, (t1 & ~t2) | tieOne | (tieTwo & t0));      // H1
            le.putLong(out + 24, (s1 & ~t2) | tieOne | (tieTwo & s0));      // L1
            le.putLong(out + 32, s2 | (tieOne & s1));                       // E
            out += GROUP_CODE_WORDS * Long.BYTES;
        }
        final int rest = toWord - groupsEnd;
        for (int i = 0; i < rest; i++) {
            final long t = tie[groupsEnd + i];
            le.putLong(out + 8 * i, sign[groupsEnd + i] & ~t);
            le.putLong(out + 8 * (rest + i), t);
        }
        return out + 16 * rest - offset;
    }

    @Override
    public int decode(final ByteBuffer src, final int offset, final long paramCount, final int fromWord, final int toWord,
        final long[][] planesOut) {
        BitPlanes.chunkParams(paramCount, fromWord, toWord, 1);
        BitPlanes.checkPlanes(planesOut, 2, toWord);
        final ByteBuffer le = src.order() == ByteOrder.LITTLE_ENDIAN ? src : src.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        final int groupsEnd = toWord - (toWord - fromWord) % GROUP_WORDS;
        final int rest = toWord - groupsEnd;
        final long[] sign = planesOut[0];
        final long[] tie = planesOut[1];
        long bad = 0;
        int in = offset;
        for (int w = fromWord; w < groupsEnd; w += GROUP_WORDS) {
            final long h0 = le.getLong(in);
            final long l0 = le.getLong(in + 8);
            final long h1 = le.getLong(in + 16);
            final long l1 = le.getLong(in + 24);
            final long e = le.getLong(in + 32);
            final long tieOne = h1 & l1;            // trit 2 a tie, trit 1 not
            final long tieTwo = h0 & l0;            // trits 2 and 1 ties
            bad |= tieTwo & (e | tieOne);           // the 5 invalid codes
            final long plain = ~(tieOne | tieTwo);
            tie[w] = h0 ^ ((h0 ^ h1) & tieTwo);
            sign[w] = l0 ^ ((l0 ^ l1) & tieTwo);
            tie[w + 1] = tieTwo | (h1 & plain);
            sign[w + 1] = (tieOne & e) | (l1 & plain);
            tie[w + 2] = ~plain;
            sign[w + 2] = e & plain;
            in += GROUP_CODE_WORDS * Long.BYTES;
        }
        for (int i = 0; i < rest; i++) {
            final long t = le.getLong(in + 8 * (rest + i));
            final long s = le.getLong(in + 8 * i);
            bad |= s & t;
            tie[groupsEnd + i] = t;
            sign[groupsEnd + i] = s & ~t;
        }
        if (bad != 0) {
            Arrays.fill(sign, fromWord, toWord, 0L);
            Arrays.fill(tie, fromWord, toWord, 0L);
            throw new IllegalArgumentException("invalid ternary code in the chunk at offset " + offset);
        }
        final int last = toWord - 1;
        if (last >= fromWord) {
            final long valid = BitPlanes.validMask(paramCount, last);
            sign[last] &= valid;
            tie[last] &= valid;
        }
        return in + 16 * rest - offset;
    }

    @Override
    public String toString() {
        return "TernaryEncoding[1.67 bits/param, 3 in 5 bits]";
    }
}
