package io.dlion.cli.train;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import io.dlion.vote.VoteAggregator;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * The worker-count sweep of {@code ./dlion sweep}: D-Lion MaVo, D-Lion Avg, global Lion and global AdamW at several
 * worker counts N with a <b>fixed per-worker batch</b> B, so the global batch is N·B; the global baselines train one
 * model at that same global batch. Every (model, method, N) is tried at each learning rate of its grid and each seed;
 * the table reports, per method and N, the learning rate with the best mean test accuracy over the seeds.
 *
 * <p>Each run writes {@code metrics.csv} in its own directory; a run whose file exists is not run again, so a sweep
 * that was stopped resumes where it stopped.
 */
public final class Sweep {
    /** Methods in the order of the table. */
    public static final List<String> METHODS = List.of("mavo", "avg", "lion", "adamw");

    private Sweep() {
    }

    /** One training run of the sweep. */
    public record Run(String model, String method, int workers, int workerBatch, double lr, long seed) {
        /** @return the global batch: every one of the N workers trains on the fixed per-worker batch. */
        public int globalBatch() {
            return Sweep.globalBatch(workerBatch, workers);
        }

        /** @return workers of the training run: N for D-Lion, 1 for a global baseline (one model at the global batch). */
        public int trainWorkers() {
            return isDLion() ? workers : 1;
        }

        boolean isDLion() {
            return method.equals("mavo") || method.equals("avg");
        }

        /** @return the optimizer: AdamW for the AdamW baseline, Lion for the others. */
        public String optimizer() {
            return method.equals("adamw") ? "adamw" : "lion";
        }

        /** @return the sharing of the training run. */
        public Sharing sharing() {
            switch (method) {
                case "mavo":
                    return Sharing.DLION_MAVO;
                case "avg":
                    return Sharing.DLION_AVG;
                default:
                    return Sharing.NONE;
            }
        }

        /** @return the run's directory under the sweep's output directory. */
        public Path dir(final Path out) {
            return out.resolve(model).resolve(String.format(Locale.ROOT, "%s-n%d-lr%s-s%d", method, workers, lrName(lr), seed));
        }
    }

    /** @return the global batch of N workers with a fixed per-worker batch. */
    public static int globalBatch(final int workerBatch, final int workers) {
        return Math.multiplyExact(workerBatch, workers);
    }

    /** @return the method's name in tables and plots. */
    public static String label(final String method) {
        switch (method) {
            case "mavo":
                return "D-Lion MaVo";
            case "avg":
                return "D-Lion Avg";
            case "lion":
                return "global Lion";
            case "adamw":
                return "global AdamW";
            default:
                throw new IllegalArgumentException("--methods must be among " + String.join(",", METHODS) + ", got '" + method + "'");
        }
    }

    /**
     * Every run of the sweep, validated before the first starts; errors name the option.
     *
     * @return the runs, model by model, then N, then method, learning rate and seed.
     */
    public static List<Run> plan(final List<String> models, final List<String> methods, final List<Integer> workers, final int workerBatch,
        final List<Double> lrLion, final List<Double> lrAdamW, final List<Long> seeds) {
        require(!models.isEmpty(), "--models must name at least one model");
        for (final String m : models) {
            require(m.equals("mlp") || m.equals("vit-tiny") || m.equals("cnn"), "--models must be among mlp,cnn,vit-tiny, got '" + m + "'");
        }
        require(!methods.isEmpty(), "--methods must name at least one method");
        for (final String m : methods) {
            label(m);
        }
        require(!workers.isEmpty(), "--workers must name at least one worker count");
        for (final int n : workers) {
            require(n >= 1 && n <= VoteAggregator.MAX_VOTERS, "--workers must be in [1, " + VoteAggregator.MAX_VOTERS + "], got " + n);
        }
        require(workerBatch >= 1, "--worker-batch must be >= 1, got " + workerBatch);
        requireRates(lrLion, "--lr-lion");
        requireRates(lrAdamW, "--lr-adamw");
        require(!seeds.isEmpty(), "--seeds must name at least one seed");
        final List<Run> runs = new ArrayList<>();
        for (final String model : models) {
            for (final int n : workers) {
                for (final String method : METHODS) {
                    if (!methods.contains(method)) {
                        continue;
                    }
                    for (final double lr : method.equals("adamw") ? lrAdamW : lrLion) {
                        for (final long seed : seeds) {
                            runs.add(new Run(model, method, n, workerBatch, lr, seed));
                        }
                    }
                }
            }
        }
        return runs;
    }

    private static void requireRates(final List<Double> rates, final String option) {
        require(!rates.isEmpty(), option + " must name at least one learning rate");
        for (final double lr : rates) {
            require(lr > 0 && Double.isFinite(lr), option + " must be > 0, got " + lr);
        }
    }

    private static void require(final boolean condition, final String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }

    /**
     * @return the training configuration of a run (validated; errors name the option).
     */
    public static TrainConfig config(final Run run, final String dataset, final Path dataDir, final int epochs, final int trainLimit,
        final int testLimit, final long epochTimeoutSeconds, final Path out) {
        final TrainConfig c = TrainConfigs.of(dataset, dataDir, run.model(), run.optimizer(), run.sharing(), run.trainWorkers(), "inproc", epochs,
            run.globalBatch(), run.lr(), 0, run.seed(), trainLimit, testLimit, epochTimeoutSeconds, run.dir(out));
        c.quiet = true;
        return c;
    }

    /**
     * A run of the sweep with local steps, a data split or a validation split other than the defaults: its directory gets a suffix,
     * so that runs of other settings in the same output directory are not read back as its own.
     *
     * @param config     a D-Lion run's configuration from {@link #config}.
     * @param local      H and the outer step's settings.
     * @param partition  {@code iid}, {@code dirichlet:ALPHA} or {@code classes:K}.
     * @param validation training examples held out to evaluate on instead of the test set (0: the test set).
     * @return the configuration, validated again.
     */
    public static TrainConfig variant(final TrainConfig config, final io.dlion.dist.LocalSteps local, final String partition,
        final int validation) {
        TrainConfigs.localSteps(config, local, partition, validation);
        String suffix = "";
        if (config.localSteps.enabled()) {
            suffix += "-h" + config.localSteps.steps() + "-s" + lrName(config.localSteps.outerLrScale()) + "-b"
                + config.localSteps.outerBeta1() + "_" + config.localSteps.outerBeta2();
        }
        if (config.partition.kind() != io.dlion.job.Partition.Kind.IID) {
            suffix += "-" + config.partition.toString().replace(':', '_');
        }
        if (validation > 0) {
            suffix += "-val" + validation;
        }
        config.out = config.out.resolveSibling(config.out.getFileName() + suffix);
        return config;
    }

    /**
     * Run one training run in this JVM (in-process exchange; D-Lion rounds are bounded by the epoch timeout, so a
     * run cannot hang the sweep), unless its {@code metrics.csv} exists already.
     *
     * @return the run's metrics, or an empty list when it failed (the reason is printed).
     */
    public static List<EpochMetrics> runOrLoad(final TrainConfig config, final PrintStream log) throws IOException {
        final Path csv = config.out.resolve("metrics.csv");
        if (Files.exists(csv)) {
            return Reports.readCsv(csv);
        }
        try {
            return new Trainer(config, new PrintStream(OutputStream.nullOutputStream())).run();
        } catch (final Exception | OutOfMemoryError e) {
            log.println("  failed: " + e);
            return new ArrayList<>();
        } finally {
            // the run's N networks are garbage now, but their ND4J buffers are off the heap and freed only after a GC
            // finds them: without one, 120 MLP runs grew the JVM to 18.5 GB and the kernel's OOM killer ended it
            System.gc();
        }
    }

    /** The outcome of one run: its last epoch's test accuracy and wall time (NaN when it failed). */
    public record Outcome(Run run, double accuracy, double wallSeconds, long steps) {
        /** @return the outcome of a run from its metrics (empty: failed). */
        public static Outcome of(final Run run, final List<EpochMetrics> metrics) {
            if (metrics.isEmpty()) {
                return new Outcome(run, Double.NaN, Double.NaN, 0);
            }
            final EpochMetrics last = metrics.get(metrics.size() - 1);
            return new Outcome(run, last.testAccuracy(), last.wallSeconds(), last.rounds());
        }
    }

    /** The best learning rate of one (model, method, N): mean accuracy over seeds. */
    public record Best(double lr, double meanAccuracy, int seeds) {
    }

    /** @return per method (table order) and N: the learning rate with the best mean accuracy over the seeds. */
    public static Map<String, Map<Integer, Best>> best(final List<Outcome> outcomes, final String model) {
        final Map<String, Map<Integer, Map<Double, List<Double>>>> grouped = new LinkedHashMap<>();
        for (final Outcome o : outcomes) {
            if (!o.run().model().equals(model) || Double.isNaN(o.accuracy())) {
                continue;
            }
            grouped.computeIfAbsent(o.run().method(), k -> new TreeMap<>()).computeIfAbsent(o.run().workers(), k -> new TreeMap<>())
                .computeIfAbsent(o.run().lr(), k -> new ArrayList<>()).add(o.accuracy());
        }
        final Map<String, Map<Integer, Best>> best = new LinkedHashMap<>();
        for (final String method : METHODS) {
            if (!grouped.containsKey(method)) {
                continue;
            }
            final Map<Integer, Best> perN = new TreeMap<>();
            for (final Map.Entry<Integer, Map<Double, List<Double>>> n : grouped.get(method).entrySet()) {
                Best b = null;
                for (final Map.Entry<Double, List<Double>> lr : n.getValue().entrySet()) {
                    final double mean = lr.getValue().stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
                    if (b == null || mean > b.meanAccuracy()) {
                        b = new Best(lr.getKey(), mean, lr.getValue().size());
                    }
                }
                perN.put(n.getKey(), b);
            }
            best.put(method, perN);
        }
        return best;
    }

    /** @return the Markdown table of one model: a row per method, a column per N, the best mean accuracy and its lr. */
    public static String table(final List<Outcome> outcomes, final String model, final List<Integer> workers, final int workerBatch) {
        final Map<String, Map<Integer, Best>> best = best(outcomes, model);
        final StringBuilder sb = new StringBuilder("| method |");
        final StringBuilder rule = new StringBuilder("|---|");
        for (final int n : workers) {
            sb.append(String.format(Locale.ROOT, " N=%d (batch %d) |", n, globalBatch(workerBatch, n)));
            rule.append("---|");
        }
        sb.append('\n').append(rule).append('\n');
        for (final String method : METHODS) {
            final Map<Integer, Best> perN = best.get(method);
            final boolean planned = outcomes.stream().anyMatch(o -> o.run().model().equals(model) && o.run().method().equals(method));
            if (!planned) {
                continue;
            }
            sb.append("| ").append(label(method)).append(" |");
            for (final int n : workers) {
                final Best b = perN == null ? null : perN.get(n);
                sb.append(b == null ? " not run or failed |"
                    : String.format(Locale.ROOT, " %.4f (lr %s%s) |", b.meanAccuracy(), lrName(b.lr()), b.seeds() > 1 ? ", " + b.seeds() + " seeds" : ""));
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    /** @return the Markdown table of every run of one model (the whole learning-rate grid). */
    public static String gridTable(final List<Outcome> outcomes, final String model) {
        final StringBuilder sb = new StringBuilder("| method | N | global batch | lr | seed | steps | test accuracy | wall s |\n"
            + "|---|---|---|---|---|---|---|---|\n");
        for (final Outcome o : outcomes) {
            if (!o.run().model().equals(model)) {
                continue;
            }
            final Run r = o.run();
            sb.append(String.format(Locale.ROOT, "| %s | %d | %d | %s | %d | %d | %s | %s |%n", label(r.method()), r.workers(), r.globalBatch(), lrName(r.lr()),
                r.seed(), o.steps(), Double.isNaN(o.accuracy()) ? "failed" : String.format(Locale.ROOT, "%.4f", o.accuracy()),
                Double.isNaN(o.wallSeconds()) ? "" : String.format(Locale.ROOT, "%.1f", o.wallSeconds())));
        }
        return sb.toString();
    }

    /**
     * Writes {@code sweep-MODEL.png}: best test accuracy against N, one line per method. N is drawn on a log2 scale
     * (equal steps from 2 to 4 to 8 ...) and each tick is labelled with its N.
     */
    public static Path plot(final Path dir, final List<Outcome> outcomes, final String model, final int workerBatch, final int epochs)
        throws IOException {
        final XYChart chart = new XYChartBuilder().width(900).height(560)
            .title(String.format(Locale.ROOT, "%s, Fashion-MNIST: test accuracy after %d epoch(s), %d examples per worker per step", model, epochs,
                workerBatch))
            .xAxisTitle("workers N (global batch = N x " + workerBatch + ")").yAxisTitle("test accuracy (best lr of the grid)").build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideSW);
        chart.getStyler().setMarkerSize(8);
        chart.getStyler().setxAxisTickLabelsFormattingFunction(
            v -> Math.abs(v - Math.rint(v)) < 1e-9 && v >= 0 && v < 31 ? String.valueOf(1 << (int) Math.rint(v)) : "");
        for (final Map.Entry<String, Map<Integer, Best>> m : best(outcomes, model).entrySet()) {
            final double[] x = new double[m.getValue().size()];
            final double[] y = new double[x.length];
            int i = 0;
            for (final Map.Entry<Integer, Best> e : m.getValue().entrySet()) {
                x[i] = Math.log(e.getKey()) / Math.log(2);
                y[i++] = e.getValue().meanAccuracy();
            }
            if (x.length > 0) {
                chart.addSeries(label(m.getKey()), x, y);
            }
        }
        final Path file = dir.resolve("sweep-" + model + ".png");
        if (!chart.getSeriesMap().isEmpty()) {
            BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        }
        return file;
    }

    /** @return a learning rate as written on the command line, e.g. 3e-4. */
    public static String lrName(final double lr) {
        final String s = String.format(Locale.ROOT, "%.0e", lr).replace("e-0", "e-").replace("e+00", "");
        return Double.parseDouble(s) == lr ? s : String.valueOf(lr);
    }
}
