package io.dlion.aeron;

import io.dlion.vote.VoteAggregator;
import org.agrona.DirectBuffer;

/**
 * Votes one chunk and packs or unpacks its result body. The one place the transport touches the vote and the
 * down-link encodings; everything here works on chunk-local word arrays (word 0 = first word of the chunk).
 * <p>
 * The vote itself is core's {@link VoteAggregator}.
 * {@link io.dlion.aeron.wire.Encoding#TERNARY} maps Delta -1, 0, +1 to the digits 0, 1, 2 and packs five
 * parameters per byte, parameter {@code 5g + i} of the chunk as digit {@code i} (weight {@code 3^i}) of byte
 * {@code g}.
 */
final class ChunkVoter {
    private static final int[] POW3 = {1, 3, 9, 27, 81};

    private ChunkVoter() {
    }

    /**
     * Count the +1 votes of each parameter as bit planes ({@link VoteAggregator#count}).
     *
     * @param votes     one word array per voter.
     * @param voters    how many of {@code votes} to count.
     * @param words     words of the chunk.
     * @param planesOut at least {@code bitsFor(voters)} arrays of at least {@code words} words, overwritten.
     */
    static void count(final long[][] votes, final int voters, final int words, final long[][] planesOut) {
        VoteAggregator.count(votes, voters, 0, words, planesOut);
    }

    /**
     * Majority vote ({@link VoteAggregator#majority}): sign bit set where more than half voted +1, tie bit set
     * where exactly half did.
     *
     * @param votes   one word array per voter.
     * @param voters  how many of {@code votes} to count.
     * @param words   words of the chunk.
     * @param signOut overwritten with the sign words.
     * @param tieOut  overwritten with the tie words; may be null when {@code voters} is odd.
     * @return number of tied parameters.
     */
    static int majority(final long[][] votes, final int voters, final int words, final long[] signOut, final long[] tieOut) {
        return VoteAggregator.majority(votes, voters, 0, words, signOut, tieOut);
    }

    /**
     * Pack a majority result with ties, five parameters per byte.
     *
     * @param sign     chunk sign words.
     * @param tie      chunk tie words.
     * @param fromWord first word of the chunk to pack.
     * @param params   parameters to pack from there.
     * @param out      receives {@code ceil(params / 5)} bytes.
     * @return bytes written.
     */
    static int encodeTernary(final long[] sign, final long[] tie, final int fromWord, final long params, final byte[] out) {
        final int length = (int)((params + 4) / 5);
        final int base = fromWord << 6;
        for (int g = 0; g < length; g++) {
            int value = 0;
            final int first = g * 5;
            final int last = (int)Math.min(first + 5, params);
            for (int j = first; j < last; j++) {
                value += digit(sign, tie, base + j) * POW3[j - first];
            }
            out[g] = (byte)value;
        }
        return length;
    }

    /**
     * Unpack a ternary body into sign and tie words.
     *
     * @param buffer     holding the body.
     * @param offset     of the body.
     * @param params     parameters of the body.
     * @param signOut    receives sign bits, parameter 0 of the body at bit {@code wordOffset * 64}.
     * @param tieOut     receives tie bits, same layout.
     * @param wordOffset word of {@code signOut} where the body starts.
     */
    static void decodeTernary(final DirectBuffer buffer, final int offset, final long params, final long[] signOut, final long[] tieOut,
        final int wordOffset) {
        final long base = (long)wordOffset << 6;
        final int length = (int)((params + 4) / 5);
        for (int g = 0; g < length; g++) {
            int value = buffer.getByte(offset + g) & 0xFF;
            final int first = g * 5;
            final int last = (int)Math.min(first + 5, params);
            for (int j = first; j < last; j++) {
                final int d = value % 3;
                value /= 3;
                final long p = base + j;
                final int word = (int)(p >>> 6);
                final long bit = 1L << (((p >>> 3) & 7) * 8 + 7 - (p & 7));
                if (d == 2) {
                    signOut[word] |= bit;
                } else if (d == 1) {
                    tieOut[word] |= bit;
                }
            }
        }
    }

    private static int digit(final long[] sign, final long[] tie, final int j) {
        final long bit = 1L << (((j >>> 3) & 7) * 8 + 7 - (j & 7));
        final int word = j >>> 6;
        if ((tie[word] & bit) != 0) {
            return 1;
        }
        return (sign[word] & bit) != 0 ? 2 : 0;
    }
}
