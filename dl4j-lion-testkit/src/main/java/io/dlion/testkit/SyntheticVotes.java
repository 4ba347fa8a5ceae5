package io.dlion.testkit;

import java.util.SplittableRandom;

import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.vote.RoundResult;

/**
 * Seeded random sign votes and fp32 gradients for system runs and benchmarks (no model needed), and a digest of a
 * result so separate processes can compare what they applied. Worker {@code w} of round {@code r} always votes the
 * same words (and sends the same gradient) for the same seed, so any process can recompute every worker's vote.
 */
public final class SyntheticVotes {
    /** Odd multiplier of the digest's lanes. */
    private static final long LANE = 0x9FB21C651E98DF25L;

    private SyntheticVotes() {
    }

    /**
     * @param seed   of the run.
     * @param round  round number.
     * @param worker worker id.
     * @param params parameter count.
     * @return packed votes with zero padding bits.
     */
    public static long[] vote(final long seed, final long round, final int worker, final long params) {
        final SplittableRandom random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + round * 257 + worker);
        final int words = (int)((params + 63) >>> 6);
        final long[] vote = new long[words];
        for (int w = 0; w < words; w++) {
            vote[w] = random.nextLong();
        }
        vote[words - 1] &= ChunkLayout.lastWordMask(params);
        return vote;
    }

    /**
     * @param result of a round.
     * @return a 64-bit digest over the voter set's words, every result word (sign, tie or count planes) and, when an
     *     AVERAGE result has several segments, their start words and voter counts (see {@link #mix(long, long[])}).
     */
    public static long digest(final RoundResult result) {
        long hash = 0xcbf29ce484222325L;
        for (int i = 0; i < result.voterSet().wordCount(); i++) {
            hash = mix(hash, result.voterSet().word(i));
        }
        if (result.sign() != null) {
            hash = mix(hash, result.sign());
        }
        if (result.tie() != null) {
            hash = mix(hash, result.tie());
        }
        if (result.countPlanes() != null) {
            for (final long[] plane : result.countPlanes()) {
                hash = mix(hash, plane);
            }
        }
        if (result.segmentCount() > 1) {
            for (int s = 0; s < result.segmentCount(); s++) {
                hash = mix(hash, ((long) result.segmentStartWord(s) << 32) | result.segmentVoters(s));
            }
        }
        return hash;
    }

    /**
     * Worker {@code worker}'s fp32 gradient of round {@code round}, uniform in [-1, 1), written into {@code into}.
     *
     * @param seed   of the run.
     * @param round  round number.
     * @param worker worker id.
     * @param into   the gradient, every element overwritten.
     */
    public static void gradient(final long seed, final long round, final int worker, final float[] into) {
        final SplittableRandom random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + round * 257 + worker + 0x5DEECE66DL);
        for (int i = 0; i < into.length; i++) {
            into[i] = (float)(random.nextDouble() * 2 - 1);
        }
    }

    /**
     * @param mean a dense round's mean.
     * @return a 64-bit digest over the mean's float bits, two to a word (see {@link #mix(long, long[])}).
     */
    public static long digest(final float[] mean) {
        final long[] words = new long[(mean.length + 1) / 2];
        for (int i = 0; i < mean.length; i += 2) {
            final long low = Float.floatToRawIntBits(mean[i]) & 0xFFFFFFFFL;
            final long high = i + 1 < mean.length ? Float.floatToRawIntBits(mean[i + 1]) : 0;
            words[i / 2] = low | high << 32;
        }
        return mix(0xcbf29ce484222325L, words);
    }

    /**
     * Words in four interleaved lanes, each {@code lane = rotl((lane ^ word) * K, 31)} (a bijection of the word for a given
     * lane, so one changed word changes its lane), folded by {@link #mix(long, long)}: the lanes do not wait on each
     * other, so a 19M-parameter result is digested in about a millisecond.
     */
    private static long mix(final long start, final long[] words) {
        long a = start;
        long b = start + 0x9E3779B97F4A7C15L;
        long c = start - 0x61C8864680B583EBL;
        long d = ~start;
        final int whole = words.length & ~3;
        for (int i = 0; i < whole; i += 4) {
            a = Long.rotateLeft((a ^ words[i]) * LANE, 31);
            b = Long.rotateLeft((b ^ words[i + 1]) * LANE, 31);
            c = Long.rotateLeft((c ^ words[i + 2]) * LANE, 31);
            d = Long.rotateLeft((d ^ words[i + 3]) * LANE, 31);
        }
        long hash = mix(mix(mix(mix(start, a), b), c), d);
        for (int i = whole; i < words.length; i++) {
            hash = mix(hash, words[i]);
        }
        return mix(hash, words.length);
    }

    /** One word into the hash: MurmurHash3's 64-bit finalizer of {@code (hash ^ word) * K}. */
    private static long mix(final long hash, final long word) {
        long h = (hash ^ word) * LANE;
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        h *= 0xC4CEB9FE1A85EC53L;
        return h ^ (h >>> 33);
    }
}
