package io.dlion.bench;

import java.util.Arrays;

import io.dlion.Lion;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.GradientUpdater;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.learning.config.IUpdater;

/**
 * Lion step vs DL4J's fused native Adam step, side by side: the two alternate step by step on arrays of
 * the same size, so load on this shared machine hits both alike; medians and their ratio are printed as
 * a Markdown table, with the updater state each one allocates. Args: sizes (default 1000000 10000000).
 */
public final class LionVsAdam {
    private static final int WARMUP = 15;
    private static final int ROUNDS = 41;

    private LionVsAdam() {
    }

    public static void main(final String[] args) {
        final long[] sizes = args.length == 0 ? new long[] {1_000_000, 10_000_000} : Arrays.stream(args).mapToLong(Long::parseLong).toArray();
        System.out.println("| params | Lion step (median ms) | Adam step (median ms) | Lion / Adam | copy (median ms) | Lion state | Adam state |");
        System.out.println("|---|---|---|---|---|---|---|");
        for (final long n : sizes) {
            Nd4j.getRandom().setSeed(1);
            final INDArray source = Nd4j.randn(DataType.FLOAT, n);
            final INDArray g = Nd4j.create(DataType.FLOAT, n);
            final IUpdater lionConf = new Lion(1e-4);
            final IUpdater adamConf = new Adam(1e-3);
            final GradientUpdater<?> lion = lionConf.instantiate(Nd4j.create(DataType.FLOAT, 1, lionConf.stateSize(n)), true);
            final GradientUpdater<?> adam = adamConf.instantiate(Nd4j.create(DataType.FLOAT, 1, adamConf.stateSize(n)), true);
            final double[] tl = new double[ROUNDS];
            final double[] ta = new double[ROUNDS];
            final double[] tc = new double[ROUNDS];
            for (int i = -WARMUP; i < ROUNDS; i++) {
                final int it = i + WARMUP;
                final double c = time(() -> g.assign(source));
                final double l = time(() -> lion.applyUpdater(g.assign(source), it, 0)) - c;
                final double a = time(() -> adam.applyUpdater(g.assign(source), it, 0)) - c;
                if (i >= 0) {
                    tl[i] = l;
                    ta[i] = a;
                    tc[i] = c;
                }
            }
            final double ml = median(tl);
            final double ma = median(ta);
            System.out.printf("| %,d | %.2f | %.2f | %.2f | %.2f | %d x n | %d x n |%n", n, ml, ma, ml / ma, median(tc),
                lionConf.stateSize(n) / n, adamConf.stateSize(n) / n);
        }
    }

    private static double time(final Runnable r) {
        final long start = System.nanoTime();
        r.run();
        Nd4j.getExecutioner().commit();
        return (System.nanoTime() - start) / 1e6;
    }

    private static double median(final double[] values) {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
