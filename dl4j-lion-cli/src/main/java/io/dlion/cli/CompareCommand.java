package io.dlion.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.dlion.cli.train.Comparison;
import io.dlion.cli.train.EpochMetrics;
import io.dlion.cli.train.Sharing;
import io.dlion.cli.train.TrainConfig;
import io.dlion.cli.train.TrainConfigs;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ./dlion compare}: the same model and data with global AdamW, global Lion, D-Lion MaVo, D-Lion Avg
 * and DL4J's threshold sharing (with AdamW and with Lion), one after the other, each in its own JVM (a hung
 * DL4J run is killed with its threads); one table and the plots of accuracy against epochs and against bytes (linear
 * and log scale), where the global runs stand at the bytes dense data-parallel training on the same workers would send
 * and a hung run is marked.
 */
@Command(name = "compare", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Run every sharing scheme on the same model and data; write DIR/results.md and comparison plots.")
public final class CompareCommand implements Callable<Integer> {

    @Mixin
    RunOptions opts = new RunOptions();

    @Option(names = "--workers", description = "workers of the distributed runs (default: ${DEFAULT-VALUE})")
    int workers = 4;

    @Option(names = "--transport", description = "D-Lion transport: inproc, aeron-ipc or aeron-udp (default: ${DEFAULT-VALUE})")
    String transport = "inproc";

    @Option(names = "--lr-lion", description = "Lion learning rate (default: ${DEFAULT-VALUE})")
    double lrLion = 3e-4;

    @Option(names = "--lr-adamw", description = "AdamW learning rate (default: ${DEFAULT-VALUE})")
    double lrAdamW = 1e-3;

    @Option(names = "--weight-decay-lion", description = "Lion weight decay (default: ${DEFAULT-VALUE})")
    double wdLion;

    @Option(names = "--weight-decay-adamw", description = "AdamW weight decay (default: ${DEFAULT-VALUE})")
    double wdAdamW;

    @Option(names = "--epoch-timeout", description = "seconds before an epoch is reported as hung (default: ${DEFAULT-VALUE})")
    long epochTimeout = 900;

    @Option(names = "--only", split = ",", description = "run only these: adamw,lion,mavo,avg,threshold-adamw,threshold-lion")
    List<String> only;

    @Override
    public Integer call() throws Exception {
        final Map<String, Object[]> plan = new LinkedHashMap<>();
        plan.put("adamw", new Object[] {"adamw", Sharing.NONE, 1, lrAdamW, wdAdamW});
        plan.put("lion", new Object[] {"lion", Sharing.NONE, 1, lrLion, wdLion});
        plan.put("mavo", new Object[] {"lion", Sharing.DLION_MAVO, workers, lrLion, wdLion});
        plan.put("avg", new Object[] {"lion", Sharing.DLION_AVG, workers, lrLion, wdLion});
        plan.put("threshold-adamw", new Object[] {"adamw", Sharing.DL4J_THRESHOLD, workers, lrAdamW, wdAdamW});
        plan.put("threshold-lion", new Object[] {"lion", Sharing.DL4J_THRESHOLD, workers, lrLion, wdLion});
        final Map<String, List<String>> runs = new LinkedHashMap<>();
        for (final Map.Entry<String, Object[]> e : plan.entrySet()) {
            if (only != null && !only.contains(e.getKey())) {
                continue;
            }
            final Object[] p = e.getValue();
            final Sharing sharing = (Sharing) p[1];
            final String runTransport = sharing == Sharing.DLION_MAVO || sharing == Sharing.DLION_AVG ? transport : "inproc";
            final Path runOut = opts.out.resolve(e.getKey());
            // validates every run's options before the first one starts
            final TrainConfig c = TrainConfigs.of(opts.dataset, opts.dataDir, opts.model, (String) p[0], sharing, (Integer) p[2], runTransport, opts.epochs, opts.batch,
                (Double) p[3], (Double) p[4], opts.seed, opts.trainLimit, opts.testLimit, epochTimeout, runOut);
            final List<String> args = new ArrayList<>(List.of("--dataset", opts.dataset, "--model", opts.model, "--optimizer", (String) p[0],
                "--sharing", sharing.cliName(), "--workers", String.valueOf(p[2]), "--transport", runTransport, "--epochs", String.valueOf(opts.epochs),
                "--batch", String.valueOf(opts.batch), "--lr", String.valueOf(p[3]), "--weight-decay", String.valueOf(p[4]), "--seed",
                String.valueOf(opts.seed), "--train-limit", String.valueOf(opts.trainLimit), "--test-limit", String.valueOf(opts.testLimit),
                "--epoch-timeout", String.valueOf(epochTimeout), "--out", runOut.toString()));
            if (opts.dataDir != null) {
                args.addAll(List.of("--data-dir", opts.dataDir.toString()));
            }
            runs.put(c.label(), args);
        }
        if (runs.isEmpty()) {
            throw new IllegalArgumentException("--only selects no run; choose from " + String.join(",", plan.keySet()));
        }
        final Map<String, List<EpochMetrics>> results = new LinkedHashMap<>();
        for (final Map.Entry<String, List<String>> entry : runs.entrySet()) {
            System.out.println("=== " + entry.getKey());
            final List<String> args = entry.getValue();
            final Path runOut = Path.of(args.get(args.indexOf("--out") + 1));
            results.put(entry.getKey(), Comparison.runChild(args, runOut, (epochTimeout + 120) * (long) opts.epochs));
        }
        Files.createDirectories(opts.out);
        final String table = Comparison.table(results, opts.epochs, workers);
        Files.writeString(opts.out.resolve("results.md"), Comparison.header(String.join(" ", commandLine())) + table);
        Comparison.plot(opts.out, results, opts.epochs, workers);
        System.out.println();
        System.out.print(table);
        System.out.println("wrote " + opts.out.resolve("results.md") + ", " + opts.out.resolve("accuracy_vs_epoch.png") + ", "
            + opts.out.resolve("accuracy_vs_bytes.png") + ", "
            + opts.out.resolve("accuracy_vs_bytes_log.png"));
        return 0;
    }

    private List<String> commandLine() {
        final List<String> args = new ArrayList<>(List.of("./dlion compare", "--dataset", opts.dataset, "--model", opts.model, "--workers",
            String.valueOf(workers), "--transport", transport, "--epochs", String.valueOf(opts.epochs), "--batch", String.valueOf(opts.batch),
            "--lr-lion", fmt(lrLion), "--lr-adamw", fmt(lrAdamW)));
        if (opts.trainLimit > 0) {
            args.add("--train-limit " + opts.trainLimit);
        }
        if (opts.testLimit > 0) {
            args.add("--test-limit " + opts.testLimit);
        }
        args.add("--out " + opts.out);
        return args;
    }

    private static String fmt(final double v) {
        return String.format(Locale.ROOT, "%g", v);
    }
}
