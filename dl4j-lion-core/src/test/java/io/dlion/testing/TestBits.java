package io.dlion.testing;

import java.util.Random;

/** Naive per-parameter access to the packed layout, written from its specification (RoundResult javadoc). */
public final class TestBits {

    private TestBits() {
    }

    public static int words(final long n) {
        return (int) ((n + 63) >>> 6);
    }

    public static boolean get(final long[] words, final long j) {
        final int shift = (int) (8 * ((j >>> 3) & 7) + 7 - (j & 7));
        return ((words[(int) (j >>> 6)] >>> shift) & 1L) != 0;
    }

    public static void set(final long[] words, final long j, final boolean value) {
        final int shift = (int) (8 * ((j >>> 3) & 7) + 7 - (j & 7));
        if (value) {
            words[(int) (j >>> 6)] |= 1L << shift;
        } else {
            words[(int) (j >>> 6)] &= ~(1L << shift);
        }
    }

    /** Random votes for n parameters, padding bits zero. */
    public static long[] random(final Random random, final long n) {
        final long[] w = new long[words(n)];
        for (long j = 0; j < n; j++) {
            set(w, j, random.nextBoolean());
        }
        return w;
    }
}
