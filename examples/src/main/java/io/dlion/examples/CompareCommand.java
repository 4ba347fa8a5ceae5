package io.dlion.examples;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.dlion.examples.train.Comparison;
import io.dlion.examples.train.EpochMetrics;
import io.dlion.examples.train.Sharing;
import io.dlion.examples.train.TrainConfig;
import io.dlion.examples.train.TrainConfigs;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./dlion compare}: the same model and data with global AdamW, global Lion, D-Lion MaVo, D-Lion Avg
 * and DL4J's threshold sharing (with AdamW and with Lion), one after the other, each in its own JVM (a hung
 * DL4J run is killed with its threads); one table, one plot.
 */
@Command(name = "compare", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Run every sharing scheme on the same model and data; write DIR/results.md and comparison plots.")
public final class CompareCommand implements Callable<Integer> {

    @Option(names = "--dataset", description = "fashion-mnist or cifar10 (default: ${DEFAULT-VALUE})")
    String dataset = "fashion-mnist";

    @Option(names = "--data-dir", description = "data directory")
    Path dataDir;

    @Option(names = "--model", description = "mlp, cnn, vit-tiny or vit (default: ${DEFAULT-VALUE})")
    String model = "mlp";

    @Option(names = "--workers", description = "workers of the distributed runs (default: ${DEFAULT-VALUE})")
    int workers = 4;

    @Option(names = "--transport", description = "D-Lion transport: inproc, aeron-ipc or aeron-udp (default: ${DEFAULT-VALUE})")
    String transport = "inproc";

    @Option(names = "--epochs", description = "epochs (default: ${DEFAULT-VALUE})")
    int epochs = 2;

    @Option(names = "--batch", description = "global batch, the same for every run (default: ${DEFAULT-VALUE})")
    int batch = 128;

    @Option(names = "--lr-lion", description = "Lion learning rate (default: ${DEFAULT-VALUE})")
    double lrLion = 3e-4;

    @Option(names = "--lr-adamw", description = "AdamW learning rate (default: ${DEFAULT-VALUE})")
    double lrAdamW = 1e-3;

    @Option(names = "--weight-decay-lion", description = "Lion weight decay (default: ${DEFAULT-VALUE})")
    double wdLion;

    @Option(names = "--weight-decay-adamw", description = "AdamW weight decay (default: ${DEFAULT-VALUE})")
    double wdAdamW;

    @Option(names = "--seed", description = "seed (default: ${DEFAULT-VALUE})")
    long seed = 42;

    @Option(names = "--train-limit", description = "use the first K training examples (0 = all)")
    int trainLimit;

    @Option(names = "--test-limit", description = "use the first K test examples (0 = all)")
    int testLimit;

    @Option(names = "--epoch-timeout", description = "seconds before an epoch is reported as hung (default: ${DEFAULT-VALUE})")
    long epochTimeout = 900;

    @Option(names = "--only", split = ",", description = "run only these: adamw,lion,mavo,avg,threshold-adamw,threshold-lion")
    List<String> only;

    @Option(names = "--out", required = true, description = "output directory")
    Path out;

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
            final Path runOut = out.resolve(e.getKey());
            // validates every run's options before the first one starts
            final TrainConfig c = TrainConfigs.of(dataset, dataDir, model, (String) p[0], sharing, (Integer) p[2], runTransport, epochs, batch,
                (Double) p[3], (Double) p[4], seed, trainLimit, testLimit, epochTimeout, runOut);
            final List<String> args = new ArrayList<>(List.of("--dataset", dataset, "--model", model, "--optimizer", (String) p[0],
                "--sharing", sharing.cliName(), "--workers", String.valueOf(p[2]), "--transport", runTransport, "--epochs", String.valueOf(epochs),
                "--batch", String.valueOf(batch), "--lr", String.valueOf(p[3]), "--weight-decay", String.valueOf(p[4]), "--seed",
                String.valueOf(seed), "--train-limit", String.valueOf(trainLimit), "--test-limit", String.valueOf(testLimit),
                "--epoch-timeout", String.valueOf(epochTimeout), "--out", runOut.toString()));
            if (dataDir != null) {
                args.addAll(List.of("--data-dir", dataDir.toString()));
            }
            runs.put(c.label(), args);
        }
        if (runs.isEmpty()) {
            throw new IllegalArgumentException("--only selects no run; choose from " + String.join(",", plan.keySet()));
        }
        final Map<String, List<EpochMetrics>> results = new LinkedHashMap<>();
        for (final Map.Entry<String, List<String>> run : runs.entrySet()) {
            System.out.println("=== " + run.getKey());
            final List<String> args = run.getValue();
            final Path runOut = Path.of(args.get(args.indexOf("--out") + 1));
            results.put(run.getKey(), Comparison.runChild(args, runOut, (epochTimeout + 120) * (long) epochs));
        }
        Files.createDirectories(out);
        final String table = Comparison.table(results);
        Files.writeString(out.resolve("results.md"), Comparison.header(String.join(" ", commandLine())) + table);
        Comparison.plot(out, results);
        System.out.println();
        System.out.print(table);
        System.out.println("wrote " + out.resolve("results.md") + ", " + out.resolve("accuracy_vs_epoch.png") + ", "
            + out.resolve("accuracy_vs_bytes.png"));
        return 0;
    }

    private List<String> commandLine() {
        final List<String> args = new ArrayList<>(List.of("./dlion compare", "--dataset", dataset, "--model", model, "--workers",
            String.valueOf(workers), "--transport", transport, "--epochs", String.valueOf(epochs), "--batch", String.valueOf(batch),
            "--lr-lion", fmt(lrLion), "--lr-adamw", fmt(lrAdamW)));
        if (trainLimit > 0) {
            args.add("--train-limit " + trainLimit);
        }
        if (testLimit > 0) {
            args.add("--test-limit " + testLimit);
        }
        args.add("--out " + out);
        return args;
    }

    private static String fmt(final double v) {
        return String.format(Locale.ROOT, "%g", v);
    }
}
