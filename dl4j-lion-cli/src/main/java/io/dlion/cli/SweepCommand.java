package io.dlion.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

import io.dlion.cli.train.EpochMetrics;
import io.dlion.cli.train.Sweep;
import io.dlion.cli.train.TrainConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./dlion sweep}: the worker-count experiment. D-Lion MaVo, D-Lion Avg, global Lion and global AdamW at each N
 * with a fixed per-worker batch (global batch = N x per-worker batch, the same for the global baselines), a small
 * learning-rate grid per method, in process. Writes DIR/sweep.md (best lr per method and N, and the whole grid) and
 * one plot per model, DIR/sweep-MODEL.png. Runs already in DIR (their metrics.csv) are not run again.
 */
@Command(name = "sweep", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Accuracy against the number of workers N, fixed per-worker batch: D-Lion MaVo/Avg vs global Lion/AdamW; "
        + "writes DIR/sweep.md and DIR/sweep-MODEL.png.")
public final class SweepCommand implements Callable<Integer> {

    @Option(names = "--models", split = ",", description = "mlp, cnn and/or vit-tiny (default: ${DEFAULT-VALUE})")
    List<String> models = new ArrayList<>(List.of("mlp", "vit-tiny"));

    @Option(names = "--methods", split = ",", description = "mavo, avg, lion, adamw (default: ${DEFAULT-VALUE})")
    List<String> methods = new ArrayList<>(Sweep.METHODS);

    @Option(names = "--workers", split = ",", description = "worker counts N (default: ${DEFAULT-VALUE})")
    List<Integer> workers = new ArrayList<>(List.of(2, 4, 8, 16, 32));

    @Option(names = "--worker-batch", description = "examples per worker per step; the global batch is N times this (default: ${DEFAULT-VALUE})")
    int workerBatch = 16;

    @Option(names = "--lr-lion", split = ",", description = "Lion learning-rate grid, D-Lion and global Lion (default: ${DEFAULT-VALUE})")
    List<Double> lrLion = new ArrayList<>(List.of(1e-4, 3e-4, 1e-3, 3e-3));

    @Option(names = "--lr-adamw", split = ",", description = "AdamW learning-rate grid (default: ${DEFAULT-VALUE})")
    List<Double> lrAdamW = new ArrayList<>(List.of(3e-4, 1e-3, 3e-3, 1e-2));

    @Option(names = "--seeds", split = ",", description = "seeds; accuracies are averaged over them (default: ${DEFAULT-VALUE})")
    List<Long> seeds = new ArrayList<>(List.of(42L));

    @Option(names = "--dataset", description = "fashion-mnist (default: ${DEFAULT-VALUE})")
    String dataset = "fashion-mnist";

    @Option(names = "--data-dir", description = "data directory (default: /usr/share/datasets/fashion-mnist)")
    Path dataDir;

    @Option(names = "--epochs", description = "epochs of every run (default: ${DEFAULT-VALUE})")
    int epochs = 1;

    @Option(names = "--train-limit", description = "use the first K training examples (0 = all)")
    int trainLimit;

    @Option(names = "--test-limit", description = "use the first K test examples (0 = all)")
    int testLimit;

    @Option(names = "--epoch-timeout", description = "seconds a D-Lion round may wait before the run fails (default: ${DEFAULT-VALUE})")
    long epochTimeout = 900;

    @Option(names = "--out", required = true, description = "output directory")
    Path out;

    @picocli.CommandLine.Mixin
    LocalStepsOptions local = new LocalStepsOptions();

    @Override
    public Integer call() throws Exception {
        if (epochs < 1) {
            throw new IllegalArgumentException("--epochs must be >= 1, got " + epochs);
        }
        final List<Sweep.Run> runs = Sweep.plan(models, methods, workers, workerBatch, lrLion, lrAdamW, seeds);
        final List<TrainConfig> configs = new ArrayList<>();
        for (final Sweep.Run run : runs) {
            final TrainConfig c = Sweep.config(run, dataset, dataDir, epochs, trainLimit, testLimit, epochTimeout, out);
            final boolean dlion = run.method().equals("mavo") || run.method().equals("avg");
            configs.add(Sweep.variant(c, dlion ? local.settings() : io.dlion.dist.LocalSteps.none(), dlion ? local.partition : "iid",
                local.validation));
        }
        Files.createDirectories(out);
        final long start = System.nanoTime();
        final List<Sweep.Outcome> outcomes = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            final Sweep.Run run = runs.get(i);
            System.out.printf(Locale.ROOT, "[%d/%d] %s %s N=%d global batch %d lr %s seed %d%n", i + 1, runs.size(), run.model(),
                Sweep.label(run.method()), run.workers(), run.globalBatch(), Sweep.lrName(run.lr()), run.seed());
            final List<EpochMetrics> metrics = Sweep.runOrLoad(configs.get(i), System.out);
            final Sweep.Outcome o = Sweep.Outcome.of(run, metrics);
            outcomes.add(o);
            System.out.printf(Locale.ROOT, "  test accuracy %.4f  %.1f s%n", o.accuracy(), o.wallSeconds());
            write(outcomes, (System.nanoTime() - start) / 1e9, i + 1 == runs.size());
        }
        System.out.println("wrote " + out.resolve("sweep.md"));
        return 0;
    }

    private void write(final List<Sweep.Outcome> outcomes, final double seconds, final boolean done) throws Exception {
        final StringBuilder md = new StringBuilder();
        md.append("Produced by `").append(commandLine()).append("`")
            .append(String.format(Locale.ROOT, " (%s, %.0f s of this invocation on this machine; runs already present were read, not re-run).%n%n",
                done ? "complete" : "partial", seconds));
        for (final String model : models) {
            md.append("### ").append(model).append("\n\n").append(Sweep.table(outcomes, model, workers, workerBatch)).append('\n');
            final Path png = Sweep.plot(out, outcomes, model, workerBatch, epochs);
            md.append("![").append(model).append("](").append(png.getFileName()).append(")\n\n");
            md.append("Every run:\n\n").append(Sweep.gridTable(outcomes, model)).append('\n');
        }
        Files.writeString(out.resolve("sweep.md"), md.toString());
    }

    private String commandLine() {
        final List<String> a = new ArrayList<>(List.of("./dlion sweep", "--models", String.join(",", models), "--methods", String.join(",", methods),
            "--workers", join(workers), "--worker-batch", String.valueOf(workerBatch),
            "--lr-lion", lrLion.stream().map(Sweep::lrName).collect(Collectors.joining(",")),
            "--lr-adamw", lrAdamW.stream().map(Sweep::lrName).collect(Collectors.joining(",")), "--seeds", join(seeds), "--epochs",
            String.valueOf(epochs)));
        if (trainLimit > 0) {
            a.addAll(List.of("--train-limit", String.valueOf(trainLimit)));
        }
        if (testLimit > 0) {
            a.addAll(List.of("--test-limit", String.valueOf(testLimit)));
        }
        if (local.localSteps != 1) {
            a.addAll(List.of("--local-steps", String.valueOf(local.localSteps), "--outer-lr-scale", String.valueOf(local.outerLrScale),
                "--outer-beta1", String.valueOf(local.outerBeta1), "--outer-beta2", String.valueOf(local.outerBeta2)));
        }
        if (!"iid".equals(local.partition)) {
            a.addAll(List.of("--partition", local.partition));
        }
        if (local.validation > 0) {
            a.addAll(List.of("--validation", String.valueOf(local.validation)));
        }
        a.addAll(List.of("--out", out.toString()));
        return String.join(" ", a);
    }

    private static String join(final List<?> values) {
        return values.stream().map(String::valueOf).collect(Collectors.joining(","));
    }
}
