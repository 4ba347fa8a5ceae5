package io.dlion.cli;

import java.util.concurrent.Callable;

import io.dlion.aeron.Topology;
import io.dlion.cli.train.Sharing;
import io.dlion.cli.train.TrainConfig;
import io.dlion.cli.train.TrainConfigs;
import io.dlion.cli.train.Monitor;
import io.dlion.cli.train.Trainer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code ./dlion train}: one training run, any sharing, any transport. The option names are a contract. */
@Command(name = "train", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Train one configuration and write DIR/metrics.csv, DIR/accuracy_vs_epoch.png, DIR/accuracy_vs_bytes.png.",
        "The last lines are 'params-sha256 worker=I HEX', one per worker."})
public final class TrainCommand implements Callable<Integer> {

    @Mixin
    RunOptions opts = new RunOptions();

    @Mixin
    MonitorOptions monitor = new MonitorOptions();

    @Mixin
    LocalStepsOptions local = new LocalStepsOptions();

    @Mixin
    EvalOptions eval = new EvalOptions();

    @Option(names = "--optimizer", description = "adamw or lion (default: the one --sharing implies, else lion)")
    String optimizer;

    @Option(names = "--sharing", converter = OptionTypes.SharingName.class, description = "none, dlion-mavo, dlion-avg, dl4j-threshold,"
        + " dense-lion or dense-adamw (the dense data-parallel baselines G-Lion and G-AdamW: fp32 gradients averaged through the server)"
        + " (default: none)")
    Sharing sharing = Sharing.NONE;

    @Option(names = "--workers", description = "workers (threads in this JVM) (default: ${DEFAULT-VALUE})")
    int workers = 1;

    @Option(names = "--transport", converter = OptionTypes.TransportName.class, description = "inproc, aeron-ipc or aeron-udp, for D-Lion"
        + " and dense sharing (default: inproc for D-Lion, aeron-ipc for dense)")
    TrainConfig.Transport transport;

    @Option(names = "--topology", converter = OptionTypes.TopologyKind.class, description = "D-Lion or dense sharing over Aeron: star (one"
        + " aggregation server) or sharded (a slice server per worker, in this JVM) (default: ${DEFAULT-VALUE})")
    Topology.Kind topology = Topology.Kind.STAR;

    @Option(names = "--lr", description = "learning rate (default: 3e-4 for lion, 1e-3 for adamw)")
    double lr = Double.NaN;

    @Option(names = "--weight-decay", description = "decoupled weight decay per layer (default: ${DEFAULT-VALUE})")
    double weightDecay;

    @Option(names = "--epoch-timeout", description = "seconds an epoch may take before the run is reported as hung (default: ${DEFAULT-VALUE})")
    long epochTimeout = 1800;

    @Option(names = "--hostile", description = "D-Lion: workers 0..K-1 send forged votes (robustness experiment) (default: ${DEFAULT-VALUE})")
    int hostile;

    @Option(names = "--hostile-mode", description = "invert (vote against the own sign) or random (default: ${DEFAULT-VALUE})")
    String hostileMode = "invert";

    @Option(names = "--vit-shape", split = ",", description = "--model vit: HIDDEN,DEPTH,HEADS,MLP_RATIO (default: the paper's 512,6,8,4)")
    int[] vitShape;

    @Override
    public Integer call() throws Exception {
        final Sharing s = sharing;
        final String opt = optimizer != null ? optimizer : s.impliedOptimizer() != null ? s.impliedOptimizer() : "lion";
        final String via = transport != null ? transport.cliName() : s.isDense() ? "aeron-ipc" : "inproc";
        final TrainConfig config = TrainConfigs.of(opts.dataset, opts.dataDir, opts.model, opt, s, workers, via, opts.epochs, opts.batch,
            lr, weightDecay, opts.seed, opts.trainLimit, opts.testLimit, epochTimeout, opts.out);
        TrainConfigs.hostile(config, hostile, hostileMode);
        TrainConfigs.topology(config, topology);
        local.apply(config);
        eval.apply(config);
        TrainConfigs.vitShape(config, vitShape);
        try (Monitor m = monitor.open("dlion-train")) {
            config.monitor = m;
            new Trainer(config, System.out).run();
        }
        return 0;
    }
}
