package io.dlion.cli;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import io.dlion.cli.train.EpochMetrics;
import io.dlion.cli.train.Sharing;
import io.dlion.cli.train.TrainConfig;
import io.dlion.cli.train.TrainConfigs;
import io.dlion.cli.train.Trainer;
import io.dlion.testkit.FaultPlan;
import io.dlion.testkit.FaultRun;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ./dlion faults}: the same D-Lion job twice, undisturbed (in process) and as real processes over UDP loopback
 * with every fault at once (a worker killed and rejoining, the server killed and restarted, packet loss, garbage
 * frames); prints and writes {@code report.md}. Exit code 0 when the workers end bit-identical and every garbage frame
 * was counted.
 */
@Command(name = "faults", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Fault run: kill a worker and the server mid-training, inject UDP loss and garbage frames, compare with an undisturbed run.")
public final class FaultCommand implements Callable<Integer> {

    @Mixin
    RunOptions opts = new RunOptions();

    @Option(names = "--workers", description = "worker processes; --batch must be a multiple (default: ${DEFAULT-VALUE})")
    int workers = 4;

    @Option(names = "--lr", description = "Lion learning rate (default: ${DEFAULT-VALUE})")
    double lr = 3e-4;

    @Option(names = "--kill-worker", description = "worker killed and restarted (default: the last)")
    int killWorker = -1;

    @Option(names = "--kill-worker-at", description = "fraction of the run at which it is killed, 0 = never (default: ${DEFAULT-VALUE})")
    double killWorkerAt = 0.2;

    @Option(names = "--rejoin-at", description = "fraction at which it restarts with --rejoin, 0 = never (default: ${DEFAULT-VALUE})")
    double rejoinAt = 0.3;

    @Option(names = "--kill-server-at", description = "fraction at which the server is killed and restarted, 0 = never (default: ${DEFAULT-VALUE})")
    double killServerAt = 0.5;

    @Option(names = "--server-down-ms", description = "how long the server stays down (default: ${DEFAULT-VALUE})")
    long serverDownMs = 1000;

    @Option(names = "--loss-rate", description = "UDP data frames dropped on receive, every process (default: ${DEFAULT-VALUE})")
    double lossRate = 0.05;

    @Option(names = "--garbage-rate", description = "garbage frames per second to the restarted server, 0 = none (default: ${DEFAULT-VALUE})")
    int garbageRate = 200;

    @Option(names = "--round-timeout-ms", description = "the server's round deadline (default: ${DEFAULT-VALUE})")
    long roundTimeoutMs = 3000;

    @Option(names = "--timeout-s", description = "longest the disturbed run may take (default: ${DEFAULT-VALUE})")
    long timeoutSeconds = 1800;

    @Option(names = "--no-baseline", description = "skip the undisturbed run")
    boolean noBaseline;

    @Override
    public Integer call() throws Exception {
        final TrainConfig config = TrainConfigs.of(opts.dataset, opts.dataDir, opts.model, "lion", Sharing.DLION_MAVO, workers, "inproc",
            opts.epochs, opts.batch, lr, 0, opts.seed, opts.trainLimit, opts.testLimit, 1800, opts.out.resolve("undisturbed"));
        final Trainer baselineTrainer = new Trainer(config, System.out);
        final List<String> trainArgs = new ArrayList<>(List.of("--dataset", opts.dataset, "--model", opts.model, "--epochs",
            Integer.toString(opts.epochs), "--batch", Integer.toString(opts.batch), "--seed", Long.toString(opts.seed), "--train-limit",
            Integer.toString(opts.trainLimit), "--test-limit", Integer.toString(opts.testLimit), "--lr", Double.toString(lr)));
        if (opts.dataDir != null) {
            trainArgs.add("--data-dir");
            trainArgs.add(opts.dataDir.toString());
        }
        final FaultPlan plan = new FaultPlan(31, workers, baselineTrainer.parameterCount(), opts.epochs, trainArgs,
            killWorker < 0 ? workers - 1 : killWorker, killWorkerAt, rejoinAt, killServerAt, serverDownMs, lossRate, garbageRate,
            roundTimeoutMs, timeoutSeconds, opts.out.resolve("disturbed"));
        plan.validate();
        double baseline = Double.NaN;
        if (!noBaseline) {
            System.out.println("== undisturbed run (in process, same job) ==");
            final List<EpochMetrics> metrics = baselineTrainer.run();
            baseline = metrics.get(metrics.size() - 1).testAccuracy();
        }
        System.out.println("== disturbed run (processes over UDP loopback) ==");
        final FaultRun.Report report = new FaultRun(plan, System.out).run();
        final String markdown = report.markdown(baseline);
        System.out.println(markdown);
        Files.writeString(opts.out.resolve("report.md"), markdown);
        final boolean ok = report.identical() && (garbageRate == 0 || report.garbageSent() == report.garbageRejected());
        System.out.println(ok ? "fault run: OK" : "fault run: FAILED (see the report)");
        return ok ? 0 : 1;
    }
}
