package io.dlion.bench.codec;

import java.util.Arrays;
import java.util.SplittableRandom;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

import io.dlion.codec.DeltaApplier;
import io.dlion.codec.KernelThreads;
import io.dlion.codec.SignPacker;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoterSet;
import io.dlion.vote.VoteAggregator;

/**
 * Paired timing of the worker-side codec against a plain copy of the same FLOAT vector: every iteration runs
 * copy ({@code assign} into a preallocated array), pack, apply MaVo (odd N, 1 plane), apply Avg (N = 8,
 * 4 planes) back to back, and the ratios are taken per iteration, so that a machine shared with other work
 * slows the copy and the codec alike. Prints medians over the measured iterations.
 * On the CPU backend pack and apply run the host kernels ({@link KernelThreads}); their whole-word loops use the Vector
 * API only when the JVM runs with {@code --add-modules jdk.incubator.vector} ({@code ./dlion bench-codec} passes it), and
 * the first line says which.
 * Usage: {@code CodecRatios [params] [warm-up iterations] [measured iterations]}.
 */
public final class CodecRatios {

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
        final double[][] ms = new double[4][measured];
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
            }
        }
        final String[] names = {"copy (assign)", "pack", "apply MaVo N=7", "apply Avg N=8"};
        System.out.printf("params=%d threads(OMP_NUM_THREADS)=%s kernel threads=%d vector API=%s%n", n,
            System.getenv().getOrDefault("OMP_NUM_THREADS", "default"), KernelThreads.shared().threads(),
            KernelThreads.vectorApi() ? "on" : "off (run with --add-modules jdk.incubator.vector)");
        System.out.printf("%-16s %12s %16s%n", "op", "median ms", "median x copy");
        for (int k = 0; k < 4; k++) {
            final double[] ratio = new double[measured];
            for (int i = 0; i < measured; i++) {
                ratio[i] = ms[k][i] / ms[0][i];
            }
            System.out.printf("%-16s %12.2f %16.2f%n", names[k], median(ms[k]), median(ratio));
        }
    }

    private static double median(final double[] values) {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
