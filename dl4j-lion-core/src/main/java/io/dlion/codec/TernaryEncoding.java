package io.dlion.codec;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Majority vote with an even number of voters: Delta in {-1, 0, +1} per parameter, 5 parameters per byte
 * in base 3, exactly 1.6 bits per parameter (8 bits for 3^5 = 243 values).
 * <pre>
 *   trit(j) = 1            if tie(j)            (Delta = 0)
 *           = 2            else if sign(j)      (Delta = +1)
 *           = 0            otherwise            (Delta = -1)
 *   byte(g) = trit(5g) + 3 trit(5g+1) + 9 trit(5g+2) + 27 trit(5g+3) + 81 trit(5g+4)     (0..242)
 *   bytes(chunk) = ceil(params_in_chunk / 5)
 * </pre>
 * Groups of 5 parameters must not straddle chunks, so a chunk starts at a multiple of 5 words
 * (320 parameters = 64 groups) and ends at one or at the end of the vector ({@link #wordAlignment()} is 5).
 * Decoding writes sign 0 where tie is 1 (the aggregator's convention; Delta does not depend on it), and
 * rejects bytes above 242.
 */
public final class TernaryEncoding implements DownlinkEncoding {

    /** The only instance. */
    public static final TernaryEncoding INSTANCE = new TernaryEncoding();

    /** Words per chunk alignment: 5 words = 320 parameters = 64 groups of 5. */
    public static final int WORD_ALIGNMENT = 5;

    private static final int MAX_BYTE = 242;
    private static final byte[] ENCODE = new byte[1024];
    private static final byte[] DECODE_SIGN = new byte[MAX_BYTE + 1];
    private static final byte[] DECODE_TIE = new byte[MAX_BYTE + 1];
    /** Per thread, the sign and tie words of one block for {@link #encode} (so that a chunk allocates nothing). */
    private static final ThreadLocal<long[][]> ENCODE_BLOCK = ThreadLocal.withInitial(() -> new long[2][WORD_ALIGNMENT + 1]);
    /** Per thread, the sign and tie words of one block for {@link #decode}. */
    private static final ThreadLocal<long[][]> DECODE_BLOCK = ThreadLocal.withInitial(() -> new long[2][WORD_ALIGNMENT + 1]);

    static {
        for (int s = 0; s < 32; s++) {
            for (int t = 0; t < 32; t++) {
                int value = 0;
                int weight = 1;
                for (int i = 0; i < 5; i++) {
                    final int trit = ((t >>> i) & 1) != 0 ? 1 : ((s >>> i) & 1) != 0 ? 2 : 0;
                    value += trit * weight;
                    weight *= 3;
                }
                ENCODE[(s << 5) | t] = (byte) value;
                if ((s & t) == 0) {
                    DECODE_SIGN[value] = (byte) s;
                    DECODE_TIE[value] = (byte) t;
                }
            }
        }
    }

    private TernaryEncoding() {
    }

    @Override
    public double bitsPerParameter() {
        return 1.6;
    }

    @Override
    public int planes() {
        return 2;
    }

    @Override
    public int wordAlignment() {
        return WORD_ALIGNMENT;
    }

    @Override
    public int encodedLength(final long paramCount, final int fromWord, final int toWord) {
        return (int) ((BitPlanes.chunkParams(paramCount, fromWord, toWord, WORD_ALIGNMENT) + 4) / 5);
    }

    @Override
    public long encodedLength(final long paramCount) {
        return (paramCount + 4) / 5;
    }

    @Override
    public int encode(final long[][] planes, final long paramCount, final int fromWord, final int toWord, final ByteBuffer dst,
        final int offset) {
        final long params = BitPlanes.chunkParams(paramCount, fromWord, toWord, WORD_ALIGNMENT);
        BitPlanes.checkPlanes(planes, 2, toWord);
        final long[] sign = planes[0];
        final long[] tie = planes[1];
        final long[][] block = ENCODE_BLOCK.get();
        final long[] s = block[0];
        final long[] t = block[1];
        final int totalBytes = (int) ((params + 4) / 5);
        int out = 0;
        for (int w0 = fromWord; out < totalBytes; w0 += WORD_ALIGNMENT) {
            for (int i = 0; i < WORD_ALIGNMENT; i++) {
                final int w = w0 + i;
                if (w < toWord) {
                    final long tw = tie[w];
                    t[i] = paramOrder(tw);
                    s[i] = paramOrder(sign[w] & ~tw);
                } else {
                    t[i] = 0L;
                    s[i] = 0L;
                }
            }
            final int groups = Math.min(64, totalBytes - out);
            for (int g = 0; g < groups; g++) {
                final int bit = 5 * g;
                final int word = bit >>> 6;
                final int shift = bit & 63;
                final int s5 = (int) (window(s, word, shift) & 31);
                final int t5 = (int) (window(t, word, shift) & 31);
                dst.put(offset + out + g, ENCODE[(s5 << 5) | t5]);
            }
            out += groups;
        }
        return totalBytes;
    }

    @Override
    public int decode(final ByteBuffer src, final int offset, final long paramCount, final int fromWord, final int toWord,
        final long[][] planesOut) {
        final long params = BitPlanes.chunkParams(paramCount, fromWord, toWord, WORD_ALIGNMENT);
        BitPlanes.checkPlanes(planesOut, 2, toWord);
        final long[] sign = planesOut[0];
        final long[] tie = planesOut[1];
        final long[][] block = DECODE_BLOCK.get();
        final long[] s = block[0];
        final long[] t = block[1];
        final int totalBytes = (int) ((params + 4) / 5);
        int in = 0;
        for (int w0 = fromWord; w0 < toWord; w0 += WORD_ALIGNMENT) {
            Arrays.fill(s, 0L);
            Arrays.fill(t, 0L);
            final int groups = Math.min(64, totalBytes - in);
            for (int g = 0; g < groups; g++) {
                final int value = src.get(offset + in + g) & 0xFF;
                if (value > MAX_BYTE) {
                    throw new IllegalArgumentException("invalid ternary byte " + value + " at offset " + (offset + in + g));
                }
                final int bit = 5 * g;
                final int word = bit >>> 6;
                final int shift = bit & 63;
                deposit(s, word, shift, DECODE_SIGN[value]);
                deposit(t, word, shift, DECODE_TIE[value]);
            }
            in += groups;
            for (int i = 0; i < WORD_ALIGNMENT && w0 + i < toWord; i++) {
                final int w = w0 + i;
                final long mask = BitPlanes.validMask(paramCount, w);
                sign[w] = paramOrder(s[i]) & mask;
                tie[w] = paramOrder(t[i]) & mask;
            }
        }
        return totalBytes;
    }

    /** Reverse the bits inside each byte: packed layout to "parameter j at bit j" and back. */
    private static long paramOrder(final long word) {
        return Long.reverse(Long.reverseBytes(word));
    }

    private static long window(final long[] words, final int word, final int shift) {
        final long low = words[word] >>> shift;
        return shift > 59 ? low | (words[word + 1] << (64 - shift)) : low;
    }

    private static void deposit(final long[] words, final int word, final int shift, final int bits5) {
        words[word] |= (long) bits5 << shift;
        if (shift > 59) {
            words[word + 1] |= (long) bits5 >>> (64 - shift);
        }
    }

    @Override
    public String toString() {
        return "TernaryEncoding[1.6 bits/param, base 3]";
    }
}
