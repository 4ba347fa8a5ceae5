package io.dlion.bench;

import java.util.Arrays;

import io.dlion.Lion;
import org.deeplearning4j.nn.workspace.ArrayType;
import org.deeplearning4j.nn.workspace.LayerWorkspaceMgr;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.memory.MemoryWorkspace;
import org.nd4j.linalg.api.memory.conf.WorkspaceConfiguration;
import org.nd4j.linalg.api.memory.enums.AllocationPolicy;
import org.nd4j.linalg.api.memory.enums.LearningPolicy;
import org.nd4j.linalg.api.memory.enums.ResetPolicy;
import org.nd4j.linalg.api.memory.enums.SpillPolicy;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.GradientUpdater;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.learning.config.IUpdater;

/**
 * Lion step vs DL4J's fused native Adam step, side by side: the two alternate step by step on arrays of
 * the same size, so load on this shared machine hits both alike; medians and their ratio are printed as
 * a Markdown table, with the updater state each one allocates. Each step runs as {@code MultiLayerNetwork.fit()}
 * runs it: inside the scope of {@code ArrayType.UPDATER_WORKING_MEM}, which fit() maps to the workspace
 * {@code WS_ALL_LAYERS_ACT} with the configuration below (DL4J 1.0.0-M2.1). The ratio is taken per step (Lion's time
 * over the next Adam step's), and its median is printed with the medians of the times.
 * Args: sizes (default 1000000 10000000).
 */
public final class LionVsAdam {
    private static final int WARMUP = 15;
    private static final int ROUNDS = 41;
    private static final String WS_ALL_LAYERS_ACT = "WS_ALL_LAYERS_ACT";
    private static final WorkspaceConfiguration WS_ALL_LAYERS_ACT_CONFIG = WorkspaceConfiguration.builder()
        .initialSize(0)
        .overallocationLimit(0.05)
        .policyLearning(LearningPolicy.FIRST_LOOP)
        .policyReset(ResetPolicy.BLOCK_LEFT)
        .policySpill(SpillPolicy.REALLOCATE)
        .policyAllocation(AllocationPolicy.OVERALLOCATE)
        .build();

    private LionVsAdam() {
    }

    public static void main(final String[] args) {
        final long[] sizes = args.length == 0 ? new long[] {1_000_000, 10_000_000} : Arrays.stream(args).mapToLong(Long::parseLong).toArray();
        final LayerWorkspaceMgr workspaces = LayerWorkspaceMgr.builder()
            .defaultNoWorkspace()
            .with(ArrayType.UPDATER_WORKING_MEM, WS_ALL_LAYERS_ACT, WS_ALL_LAYERS_ACT_CONFIG)
            .build();
        System.out.println("| params | Lion step (median ms) | Adam step (median ms) | Lion / Adam (median of per-step ratios)"
            + " | copy (median ms) | Lion state | Adam state |");
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
            final double[] ratio = new double[ROUNDS];
            for (int i = -WARMUP; i < ROUNDS; i++) {
                final int it = i + WARMUP;
                final double c = time(() -> g.assign(source));
                g.assign(source);
                final double l = timeInWorkspace(workspaces, () -> lion.applyUpdater(g, it, 0));
                g.assign(source);
                final double a = timeInWorkspace(workspaces, () -> adam.applyUpdater(g, it, 0));
                if (i >= 0) {
                    tl[i] = l;
                    ta[i] = a;
                    tc[i] = c;
                    ratio[i] = l / a;
                }
            }
            System.out.printf("| %,d | %.2f | %.2f | %.2f | %.2f | %d x n | %d x n |%n", n, median(tl), median(ta), median(ratio), median(tc),
                lionConf.stateSize(n) / n, adamConf.stateSize(n) / n);
        }
    }

    /** One updater step in the updater's workspace scope, as {@code BaseMultiLayerUpdater.update} opens it in fit(). */
    @SuppressWarnings("try")
    private static double timeInWorkspace(final LayerWorkspaceMgr workspaces, final Runnable step) {
        final long start = System.nanoTime();
        try (MemoryWorkspace ws = workspaces.notifyScopeEntered(ArrayType.UPDATER_WORKING_MEM)) {
            step.run();
        }
        Nd4j.getExecutioner().commit();
        return (System.nanoTime() - start) / 1e6;
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
