package io.dlion.bench.codec;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;

import io.dlion.codec.DownlinkEncoding;
import io.dlion.codec.WordViews;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoteRule;

/**
 * Measures the down-link encodings' real sizes: encodes random aggregation results of n parameters and
 * prints bytes written and bits per parameter (8 * bytes / n) for MaVo and Avg, N = 4, 7, 8, 16, 32, 64,
 * with the median of 15 encode and decode times (after 15 warm-up runs; whole vector as one chunk through
 * {@link WordViews} of a heap buffer, one thread).
 * Usage: {@code EncodingSizes [n]} (default 10,000,000).
 */
public final class EncodingSizes {

    private EncodingSizes() {
    }

    public static void main(final String[] args) {
        final long n = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
        final int words = (int) ((n + 63) >>> 6);
        System.out.printf("%-9s %4s %-16s %12s %11s %10s %10s%n", "rule", "N", "encoding", "bytes", "bits/param",
            "encode ms", "decode ms");
        for (final int voters : new int[] {4, 7, 8, 16, 32, 64}) {
            final SplittableRandom random = new SplittableRandom(voters);
            final long[][] votes = new long[voters][words];
            final int valid = (int) (n - ((long) (words - 1) << 6));
            final long lastMask = valid == 64 ? -1L : Long.reverseBytes(-1L << (64 - valid));
            for (final long[] v : votes) {
                for (int w = 0; w < words; w++) {
                    v[w] = random.nextLong();
                }
                v[words - 1] &= lastMask;
            }
            final long[] sign = new long[words];
            final long[] tie = new long[words];
            VoteAggregator.majority(votes, voters, 0, words, sign, tie);
            final long[][] planes = new long[VoteAggregator.planes(voters)][words];
            VoteAggregator.count(votes, voters, 0, words, planes);
            final long[][] majorityPlanes = (voters & 1) == 1 ? new long[][] {sign} : new long[][] {sign, tie};
            print(VoteRule.MAJORITY, voters, majorityPlanes, n, words);
            print(VoteRule.AVERAGE, voters, planes, n, words);
        }
    }

    private static void print(final VoteRule rule, final int voters, final long[][] planes, final long n, final int words) {
        final DownlinkEncoding encoding = DownlinkEncoding.of(rule, voters);
        final WordViews buffer = new WordViews().of(ByteBuffer.allocate((int) encoding.encodedLength(n)));
        final int bytes = encoding.encode(planes, n, 0, words, buffer, 0);
        final long[][] out = new long[encoding.planes()][words];
        final long[] encodeNanos = new long[15];
        final long[] decodeNanos = new long[15];
        for (int run = 0; run < 30; run++) {
            final long t0 = System.nanoTime();
            encoding.encode(planes, n, 0, words, buffer, 0);
            final long t1 = System.nanoTime();
            encoding.decode(buffer, 0, n, 0, words, out);
            final long t2 = System.nanoTime();
            if (run >= 15) {
                encodeNanos[run - 15] = t1 - t0;
                decodeNanos[run - 15] = t2 - t1;
            }
        }
        for (int p = 0; p < planes.length; p++) {
            if (!Arrays.equals(planes[p], out[p])) {
                throw new IllegalStateException(encoding + " did not round-trip plane " + p);
            }
        }
        Arrays.sort(encodeNanos);
        Arrays.sort(decodeNanos);
        System.out.printf("%-9s %4d %-16s %12d %11.6f %10.2f %10.2f%n", rule, voters, encoding.getClass().getSimpleName(), bytes,
            8.0 * bytes / n, encodeNanos[7] / 1e6, decodeNanos[7] / 1e6);
    }
}
