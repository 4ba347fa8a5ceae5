package io.dlion.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.dlion.testing.TestBits;

/**
 * The ternary layout against a per-parameter reference written from the class comment's table: every combination of
 * three trits in every bit of a group, both byte orders, every invalid code, and chunks of random results.
 */
class TernaryEncodingTest {

    @Test
    void shouldEncodeEveryTripleOfTritsInEveryBitAsTheReference() {
        // 27 groups of 3 words: bit b of group g holds the trits of (g + b) mod 27, so every triple sits in every bit
        final int groups = 27;
        final long n = groups * 192L;
        final int words = TestBits.words(n);
        final long[] sign = new long[words];
        final long[] tie = new long[words];
        for (int g = 0; g < groups; g++) {
            for (int b = 0; b < 64; b++) {
                int triple = (g + b) % 27;
                for (int i = 0; i < 3; i++) {
                    final int trit = triple % 3;   // 0: -1, 1: +1, 2: tie
                    triple /= 3;
                    if (trit == 1) {
                        sign[3 * g + i] |= 1L << b;
                    } else if (trit == 2) {
                        tie[3 * g + i] |= 1L << b;
                    }
                }
            }
        }
        final byte[] expected = reference(sign, tie, 0, words);
        for (final ByteOrder order : new ByteOrder[] {ByteOrder.LITTLE_ENDIAN, ByteOrder.BIG_ENDIAN}) {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(expected.length + 3).order(order);
            assertEquals(expected.length, TernaryEncoding.INSTANCE.encode(new long[][] {sign, tie}, n, 0, words, buffer, 3));
            final byte[] written = new byte[expected.length];
            buffer.get(3, written);
            assertArrayEquals(expected, written, order.toString());
            final long[][] out = {filled(words), filled(words)};
            assertEquals(expected.length, TernaryEncoding.INSTANCE.decode(buffer, 3, n, 0, words, out));
            assertArrayEquals(sign, out[0], "sign, " + order);
            assertArrayEquals(tie, out[1], "tie, " + order);
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 64, 65, 128, 191, 192, 193, 1000 * 64 + 3, 1001 * 64, 1002 * 64 - 5})
    void shouldRoundTripRandomResultsInChunksAsTheReference(final long n) {
        final Random random = new Random(n);
        final int words = TestBits.words(n);
        final long[] tie = TestBits.random(random, n);
        final long[] sign = TestBits.random(random, n);
        final long[] signOnly = sign.clone();
        for (int w = 0; w < words; w++) {
            signOnly[w] &= ~tie[w];
        }
        for (final int chunk : new int[] {1, 2, 3, 20, 1000}) {
            for (int from = 0; from < words; from += chunk) {
                final int to = Math.min(words, from + chunk);
                final byte[] expected = reference(sign, tie, from, to);
                assertEquals(expected.length, TernaryEncoding.INSTANCE.encodedLength(n, from, to));
                final ByteBuffer buffer = ByteBuffer.allocate(expected.length);
                assertEquals(expected.length, TernaryEncoding.INSTANCE.encode(new long[][] {sign, tie}, n, from, to, buffer, 0));
                assertArrayEquals(expected, buffer.array(), "chunk [" + from + ", " + to + ") of " + n);
                final long[][] out = {filled(words), filled(words)};
                assertEquals(expected.length, TernaryEncoding.INSTANCE.decode(buffer, 0, n, from, to, out));
                assertArrayEquals(Arrays.copyOfRange(signOnly, from, to), Arrays.copyOfRange(out[0], from, to), "sign [" + from + ", " + to + ")");
                assertArrayEquals(Arrays.copyOfRange(tie, from, to), Arrays.copyOfRange(out[1], from, to), "tie [" + from + ", " + to + ")");
                assertEquals(-1L, from > 0 ? out[0][from - 1] : -1L, "words before the chunk are not touched");
                assertEquals(-1L, to < words ? out[1][to] : -1L, "words after the chunk are not touched");
            }
        }
        assertEquals(reference(sign, tie, 0, words).length, TernaryEncoding.INSTANCE.encodedLength(n));
    }

    @Test
    void shouldRejectEveryInvalidCodeAndLeaveZeros() {
        final long n = 7 * 64 - 3;   // 2 groups and a last word
        final int words = TestBits.words(n);
        // invalid codes as (H0, L0, H1, L1, E): (H0, L0) = (1, 1) with E = 1 or with (H1, L1) = (1, 1)
        final int[][] invalid = {{1, 1, 0, 0, 1}, {1, 1, 0, 1, 1}, {1, 1, 1, 0, 1}, {1, 1, 1, 1, 0}, {1, 1, 1, 1, 1}};
        for (final int[] code : invalid) {
            for (final int group : new int[] {0, 1}) {
                for (final int bit : new int[] {0, 17, 63}) {
                    final byte[] bytes = reference(new long[words], new long[words], 0, words);
                    for (int k = 0; k < 5; k++) {
                        final int at = 40 * group + 8 * k + bit / 8;   // little-endian word k of the group
                        bytes[at] = (byte) (bytes[at] | (code[k] << (bit % 8)));
                    }
                    assertRejected(bytes, n, words, Arrays.toString(code) + " group " + group + " bit " + bit);
                }
            }
        }
        final byte[] bytes = reference(new long[words], new long[words], 0, words);
        bytes[80 + 2] = 1;        // the last word's sign ...
        bytes[80 + 8 + 2] = 1;    // ... and tie, both set
        assertRejected(bytes, n, words, "sign and tie of the last word");
    }

    private static void assertRejected(final byte[] bytes, final long n, final int words, final String what) {
        final long[][] out = {filled(words), filled(words)};
        assertThrows(IllegalArgumentException.class, () -> TernaryEncoding.INSTANCE.decode(ByteBuffer.wrap(bytes), 0, n, 0, words, out), what);
        assertArrayEquals(new long[words], out[0], "the chunk's words are zero: " + what);
        assertArrayEquals(new long[words], out[1], "the chunk's words are zero: " + what);
    }

    /**
     * The class comment's layout, parameter by parameter: each group of 3 words as 5 little-endian words H0, L0, H1,
     * L1, E, the code of each bit taken from the table by cases; then the last 1 or 2 words' sign words and tie words.
     */
    private static byte[] reference(final long[] sign, final long[] tie, final int fromWord, final int toWord) {
        final int groups = (toWord - fromWord) / 3;
        final int rest = (toWord - fromWord) % 3;
        final long[] out = new long[5 * groups + 2 * rest];
        for (int g = 0; g < groups; g++) {
            final int w = fromWord + 3 * g;
            for (int b = 0; b < 64; b++) {
                final int[] t = new int[3];
                final int[] s = new int[3];
                for (int i = 0; i < 3; i++) {
                    t[i] = (int) ((tie[w + i] >>> b) & 1);
                    s[i] = t[i] == 1 ? 0 : (int) ((sign[w + i] >>> b) & 1);
                }
                final int[] code;   // H0, L0, H1, L1, E
                if (t[2] == 0) {
                    code = new int[] {t[0], s[0], t[1], s[1], s[2]};
                } else if (t[1] == 0) {
                    code = new int[] {t[0], s[0], 1, 1, s[1]};
                } else {
                    code = new int[] {1, 1, t[0], s[0], 0};
                }
                for (int k = 0; k < 5; k++) {
                    out[5 * g + k] |= (long) code[k] << b;
                }
            }
        }
        for (int i = 0; i < rest; i++) {
            final int w = fromWord + 3 * groups + i;
            out[5 * groups + i] = sign[w] & ~tie[w];
            out[5 * groups + rest + i] = tie[w];
        }
        final ByteBuffer bytes = ByteBuffer.allocate(8 * out.length).order(ByteOrder.LITTLE_ENDIAN);
        for (final long word : out) {
            bytes.putLong(word);
        }
        return bytes.array();
    }

    private static long[] filled(final int words) {
        final long[] w = new long[words];
        Arrays.fill(w, -1L);
        return w;
    }
}
