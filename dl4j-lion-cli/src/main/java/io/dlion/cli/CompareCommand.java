package io.dlion.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import io.dlion.aeron.Topology;
import io.dlion.cli.train.Comparison;
import io.dlion.cli.train.EpochMetrics;
import io.dlion.cli.train.NetlabComparison;
import io.dlion.cli.train.Sharing;
import io.dlion.cli.train.TrainConfig;
import io.dlion.cli.train.TrainConfigs;
import io.dlion.cli.train.Trainer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ./dlion compare}: the same model and data with global AdamW, global Lion, D-Lion MaVo, D-Lion Avg,
 * DL4J's threshold sharing (with AdamW and with Lion) and the dense data-parallel baselines G-Lion and G-AdamW, one after
 * the other, each in its own JVM (a hung DL4J run is killed with its threads); one table and the plots of accuracy
 * against epochs, against bytes (linear and log scale; the global runs stand at the bytes dense data-parallel training
 * on the same workers would send, and a hung run is marked) and against seconds.
 * <p>
 * With {@code --netlab RATE}: D-Lion MaVo, D-Lion Avg, dense G-Lion and dense G-AdamW, each on a cluster of network
 * namespaces whose every link is shaped to RATE ({@code scripts/netlab.sh}, needs root), as {@code ./dlion server} and
 * {@code ./dlion worker} processes; see {@link NetlabComparison}.
 */
@Command(name = "compare", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Run every sharing scheme on the same model and data; write DIR/results.md and comparison plots.")
public final class CompareCommand implements Callable<Integer> {

    @Mixin
    RunOptions opts = new RunOptions();

    @Option(names = "--workers", description = "workers of the distributed runs (default: ${DEFAULT-VALUE})")
    int workers = 4;

    @Option(names = "--transport", converter = OptionTypes.TransportName.class, description = "D-Lion transport: inproc, aeron-ipc or"
        + " aeron-udp (default: inproc)")
    TrainConfig.Transport transport = TrainConfig.Transport.INPROC;

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

    @Option(names = "--only", split = ",", description = "run only these: adamw,lion,mavo,avg,threshold-adamw,threshold-lion,dense-lion,"
        + "dense-adamw (with --netlab: mavo,avg,dense-lion,dense-adamw)")
    List<String> only;

    @Option(names = "--netlab", paramLabel = "RATE", description = "run D-Lion MaVo and Avg and dense G-Lion and G-AdamW as server and worker"
        + " processes in network namespaces, every link shaped to RATE (e.g. 100mbit, 1gbit) by scripts/netlab.sh (needs root)")
    String netlab;

    @Option(names = "--topology", defaultValue = "sharded", converter = OptionTypes.TopologyKind.class,
        description = "with --netlab: sharded (every worker serves a slice, for"
        + " D-Lion and the dense baselines alike: the bandwidth-optimal reduce-scatter and all-gather) or star (one server process)"
        + " (default: ${DEFAULT-VALUE})")
    Topology.Kind topology;

    @Option(names = "--target-accuracy", description = "test accuracy for the time-to-accuracy column and the plot (default: ${DEFAULT-VALUE})")
    double targetAccuracy = 0.80;

    @Override
    public Integer call() throws Exception {
        if (!(targetAccuracy > 0 && targetAccuracy < 1)) {
            throw new IllegalArgumentException("--target-accuracy must be in (0, 1), got " + targetAccuracy);
        }
        if (netlab != null) {
            return netlab();
        }
        final Map<String, Object[]> plan = new LinkedHashMap<>();
        plan.put("adamw", new Object[] {"adamw", Sharing.NONE, 1, lrAdamW, wdAdamW});
        plan.put("lion", new Object[] {"lion", Sharing.NONE, 1, lrLion, wdLion});
        plan.put("mavo", new Object[] {"lion", Sharing.DLION_MAVO, workers, lrLion, wdLion});
        plan.put("avg", new Object[] {"lion", Sharing.DLION_AVG, workers, lrLion, wdLion});
        plan.put("threshold-adamw", new Object[] {"adamw", Sharing.DL4J_THRESHOLD, workers, lrAdamW, wdAdamW});
        plan.put("threshold-lion", new Object[] {"lion", Sharing.DL4J_THRESHOLD, workers, lrLion, wdLion});
        plan.put("dense-lion", new Object[] {"lion", Sharing.DENSE_LION, workers, lrLion, wdLion});
        plan.put("dense-adamw", new Object[] {"adamw", Sharing.DENSE_ADAMW, workers, lrAdamW, wdAdamW});
        final Map<String, List<String>> runs = new LinkedHashMap<>();
        for (final Map.Entry<String, Object[]> e : plan.entrySet()) {
            if (only != null && !only.contains(e.getKey())) {
                continue;
            }
            final Object[] p = e.getValue();
            final Sharing sharing = (Sharing) p[1];
            // dense runs need Aeron: over in-process D-Lion they go over IPC
            final String runTransport = sharing.isDLion() ? transport.cliName() : sharing.isDense()
                ? (transport == TrainConfig.Transport.INPROC ? "aeron-ipc" : transport.cliName())
                : "inproc";
            final Path runOut = opts.out.resolve(e.getKey());
            // validates every run's options before the first one starts
            final TrainConfig c = TrainConfigs.of(opts.dataset, opts.dataDir, opts.model, (String) p[0], sharing, (Integer) p[2], runTransport,
                opts.epochs, opts.batch, (Double) p[3], (Double) p[4], opts.seed, opts.trainLimit, opts.testLimit, epochTimeout, runOut);
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
        Comparison.plotSeconds(opts.out, results, targetAccuracy);
        System.out.println();
        System.out.print(table);
        System.out.println("wrote " + opts.out.resolve("results.md") + ", " + opts.out.resolve("accuracy_vs_epoch.png") + ", "
            + opts.out.resolve("accuracy_vs_bytes.png") + ", "
            + opts.out.resolve("accuracy_vs_bytes_log.png") + ", " + opts.out.resolve("accuracy_vs_seconds.png"));
        return 0;
    }

    private Integer netlab() throws Exception {
        final Path script = Path.of("scripts", "netlab.sh").toAbsolutePath();
        if (!Files.isRegularFile(script)) {
            throw new IllegalArgumentException("--netlab needs scripts/netlab.sh: run ./dlion compare from the project's directory (" + script
                + " not found)");
        }
        if (!netlab.matches("[0-9]+(\\.[0-9]+)?[kmg]?(bit|bps)")) {
            throw new IllegalArgumentException("--netlab must be a tc rate such as 100mbit or 1gbit, got '" + netlab + "'");
        }
        final Map<String, NetlabComparison.Method> plan = new LinkedHashMap<>();
        plan.put("mavo", new NetlabComparison.Method("mavo", Sharing.DLION_MAVO, lrLion, wdLion));
        plan.put("avg", new NetlabComparison.Method("avg", Sharing.DLION_AVG, lrLion, wdLion));
        plan.put("dense-lion", new NetlabComparison.Method("dense-lion", Sharing.DENSE_LION, lrLion, wdLion));
        plan.put("dense-adamw", new NetlabComparison.Method("dense-adamw", Sharing.DENSE_ADAMW, lrAdamW, wdAdamW));
        final List<NetlabComparison.Method> methods = new ArrayList<>();
        for (final Map.Entry<String, NetlabComparison.Method> e : plan.entrySet()) {
            if (only == null || only.contains(e.getKey())) {
                methods.add(e.getValue());
            }
        }
        if (methods.isEmpty()) {
            throw new IllegalArgumentException("--only selects no run; with --netlab choose from " + String.join(",", plan.keySet()));
        }
        // validates the workers' options (every run shares them) and gives the server's --params
        final TrainConfig check = TrainConfigs.of(opts.dataset, opts.dataDir, opts.model, "lion", Sharing.DLION_MAVO, workers, "inproc",
            opts.epochs, opts.batch, lrLion, wdLion, opts.seed, opts.trainLimit, opts.testLimit, epochTimeout, opts.out);
        final long params = new Trainer(check, System.out).parameterCount();
        final List<String> workerArgs = new ArrayList<>(List.of("--dataset", opts.dataset, "--model", opts.model, "--epochs",
            String.valueOf(opts.epochs), "--batch", String.valueOf(opts.batch), "--seed", String.valueOf(opts.seed), "--train-limit",
            String.valueOf(opts.trainLimit), "--test-limit", String.valueOf(opts.testLimit)));
        if (opts.dataDir != null) {
            workerArgs.addAll(List.of("--data-dir", opts.dataDir.toAbsolutePath().toString()));
        }
        final Path out = opts.out.toAbsolutePath();
        final NetlabComparison.Settings settings = new NetlabComparison.Settings(script, netlab, workers, topology, params,
            workerArgs, targetAccuracy,
            (epochTimeout + 120) * (long) opts.epochs, out);
        final List<NetlabComparison.Result> results = NetlabComparison.run(settings, methods);
        final String table = NetlabComparison.report(settings, results, String.join(" ", commandLine()));
        System.out.println();
        System.out.print(table);
        System.out.println("wrote " + out.resolve("results.md") + ", " + out.resolve("accuracy_vs_seconds.png") + "; logs and metrics.csv of every"
            + " process under " + out + "/<run>/");
        return 0;
    }

    /**
     * @return the command as run, one option (and its value) per element: every option that decides the runs; the D-Lion
     *     transport without {@code --netlab} (the lab's processes use UDP), the rate and topology with it.
     */
    List<String> commandLine() {
        final List<String> args = new ArrayList<>(List.of("./dlion compare"));
        if (netlab != null) {
            args.addAll(List.of("--netlab " + netlab, "--topology " + topology));
        }
        args.addAll(List.of("--dataset " + opts.dataset, "--model " + opts.model, "--workers " + workers));
        if (netlab == null) {
            args.add("--transport " + transport.cliName());
        }
        args.addAll(List.of("--epochs " + opts.epochs, "--batch " + opts.batch, "--seed " + opts.seed, "--lr-lion " + fmt(lrLion),
            "--lr-adamw " + fmt(lrAdamW)));
        if (wdLion != 0) {
            args.add("--weight-decay-lion " + fmt(wdLion));
        }
        if (wdAdamW != 0) {
            args.add("--weight-decay-adamw " + fmt(wdAdamW));
        }
        if (opts.trainLimit > 0) {
            args.add("--train-limit " + opts.trainLimit);
        }
        if (opts.testLimit > 0) {
            args.add("--test-limit " + opts.testLimit);
        }
        if (opts.dataDir != null) {
            args.add("--data-dir " + opts.dataDir);
        }
        if (only != null) {
            args.add("--only " + String.join(",", only));
        }
        args.add("--target-accuracy " + targetAccuracy);
        args.add("--out " + opts.out);
        return args;
    }

    private static String fmt(final double v) {
        return String.format(Locale.ROOT, "%g", v);
    }
}
