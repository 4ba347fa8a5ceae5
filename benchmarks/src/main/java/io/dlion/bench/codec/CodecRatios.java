package io.dlion.bench.codec;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.SplittableRandom;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

import io.dlion.codec.CountEncoding;
import io.dlion.codec.DeltaApplier;
import io.dlion.codec.DownlinkEncoding;
import io.dlion.codec.KernelThreads;
import io.dlion.codec.SignEncoding;
import io.dlion.codec.SignPacker;
import io.dlion.codec.TernaryEncoding;
import io.dlion.codec.WordViews;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoterSet;
import io.dlion.vote.VoteAggregator;

/**
 * Paired timing of the worker-side codec against a plain copy of the same FLOAT vector: every iteration runs
 * copy ({@code assign} into a preallocated array), pack, apply MaVo (odd N, 1 plane), apply Avg (N = 8,
 * 4 planes), and the server's and worker's result codecs (encode into and decode from a direct little-endian buffer in
 * chunks of {@value #CHUNK_WORDS} words through {@link WordViews} made once per buffer, as the exchange sends them: signs
 * of MaVo N = 7, ternary MaVo N = 8, counts Avg N = 8) back to back, and the ratios are taken per iteration, so that a
 * machine shared with other work slows the copy and the codec alike. Prints medians over the measured iterations.
 * On the CPU backend pack and apply run the host kernels ({@link KernelThreads}); their whole-word loops use the Vector
 * API only when the JVM runs with {@code --add-modules jdk.incubator.vector} ({@code ./dlion bench-codec} passes it), and
 * the first line says which.
 * Usage: {@code CodecRatios [params] [warm-up iterations] [measured iterations]}.
 */
public final class CodecRatios {
    /** Words per chunk of the result codecs, the exchange's default chunk. */
    static final int CHUNK_WORDS = 1000;

    private CodecRatios() {
    }

    public static void main(final String[] args) {
        final long n = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
        final int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        final int measured = args.length > 2 ? Integer.parseInt(args[2]) : 21;
        final INDArray c = Nd4j.randn(DataType.FLOAT, n);
        final INDArray copy = Nd4j.create(DataType.FLOAT, n);
        final INDArray update = Nd4j.create(DataType.FLOAT, n);
        final int words = (int) ((n + 63) >>> 6);
        final SplittableRandom random = new SplittableRandom(1);
        final long[][] votes = new long[8][words];
        for (final long[] v : votes) {
            for (int w = 0; w < words; w++) {
                v[w] = random.nextLong();
            }
        }
        final long[] sign = new long[words];
        VoteAggregator.majority(votes, 7, 0, words, sign, null);
        final RoundResult majority = RoundResult.majority(0, words * 64L, 7, VoterSet.all(7), sign, null);
        final long[][] planes = new long[VoteAggregator.planes(8)][words];
        VoteAggregator.count(votes, 8, 0, words, planes);
        final RoundResult average = RoundResult.average(0, words * 64L, 8, VoterSet.all(8), planes);
        final long[] dst = new long[words];
        final long[] tie = new long[words];
        final long[] evenSign = new long[words];
        VoteAggregator.majority(votes, 8, 0, words, evenSign, tie);
        final DownlinkEncoding[] codecs = {SignEncoding.INSTANCE, TernaryEncoding.INSTANCE, new CountEncoding(8)};
        final long[][][] codecIn = {{sign}, {evenSign, tie}, planes};
        final long[][][] codecOut = new long[codecs.length][][];
        final WordViews[] wire = new WordViews[codecs.length];
        for (int e = 0; e < codecs.length; e++) {
            codecOut[e] = new long[codecs[e].planes()][words];
            int length = 0;
            for (int from = 0; from < words; from += CHUNK_WORDS) {
                length += codecs[e].encodedLength(words * 64L, from, Math.min(words, from + CHUNK_WORDS));
            }
            wire[e] = new WordViews().of(ByteBuffer.allocateDirect(length).order(ByteOrder.LITTLE_ENDIAN));
        }
        final double[][] ms = new double[4 + 2 * codecs.length][measured];
        try (SignPacker packer = new SignPacker(n, DataType.FLOAT); DeltaApplier applier = new DeltaApplier()) {
            for (int i = 0; i < warmup + measured; i++) {
                final long t0 = System.nanoTime();
                copy.assign(c);
                final long t1 = System.nanoTime();
                packer.pack(c, i, dst);
                final long t2 = System.nanoTime();
                applier.addScaled(majority, update, 0, n, 1e-4);
                final long t3 = System.nanoTime();
                applier.addScaled(average, update, 0, n, 1e-4);
                final long t4 = System.nanoTime();
                if (i >= warmup) {
                    ms[0][i - warmup] = (t1 - t0) / 1e6;
                    ms[1][i - warmup] = (t2 - t1) / 1e6;
                    ms[2][i - warmup] = (t3 - t2) / 1e6;
                    ms[3][i - warmup] = (t4 - t3) / 1e6;
                }
                for (int e = 0; e < codecs.length; e++) {
                    final long e0 = System.nanoTime();
                    chunks(codecs[e], codecIn[e], words, wire[e], true);
                    final long e1 = System.nanoTime();
                    chunks(codecs[e], codecOut[e], words, wire[e], false);
                    final long e2 = System.nanoTime();
                    if (i >= warmup) {
                        ms[4 + 2 * e][i - warmup] = (e1 - e0) / 1e6;
                        ms[5 + 2 * e][i - warmup] = (e2 - e1) / 1e6;
                    }
                }
            }
        }
        for (int e = 0; e < codecs.length; e++) {
            for (int p = 0; p < codecs[e].planes(); p++) {
                if (!Arrays.equals(codecIn[e][p], codecOut[e][p])) {
                    throw new IllegalStateException(codecs[e] + ": plane " + p + " did not decode to what was encoded");
                }
            }
        }
        final String[] names = {"copy (assign)", "pack", "apply MaVo N=7", "apply Avg N=8", "encode sign N=7", "decode sign N=7",
            "encode ternary N=8", "decode ternary N=8", "encode count N=8", "decode count N=8"};
        System.out.printf("params=%d threads(OMP_NUM_THREADS)=%s kernel threads=%d vector API=%s%n", n,
            System.getenv().getOrDefault("OMP_NUM_THREADS", "default"), KernelThreads.shared().threads(),
            KernelThreads.vectorApi() ? "on" : "off (run with --add-modules jdk.incubator.vector)");
        System.out.printf("%-16s %12s %16s%n", "op", "median ms", "median x copy");
        for (int k = 0; k < names.length; k++) {
            final double[] ratio = new double[measured];
            for (int i = 0; i < measured; i++) {
                ratio[i] = ms[k][i] / ms[0][i];
            }
            System.out.printf("%-16s %12.2f %16.2f%n", names[k], median(ms[k]), median(ratio));
        }
    }

    /** Encode (or decode) the whole vector chunk by chunk, each chunk's bytes right after the previous one's. */
    private static void chunks(final DownlinkEncoding codec, final long[][] planes, final int words, final WordViews wire,
        final boolean encode) {
        final long params = words * 64L;
        int offset = 0;
        for (int from = 0; from < words; from += CHUNK_WORDS) {
            final int to = Math.min(words, from + CHUNK_WORDS);
            offset += encode ? codec.encode(planes, params, from, to, wire, offset) : codec.decode(wire, offset, params, from, to, planes);
        }
    }

    private static double median(final double[] values) {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
