package io.dlion.cli.train;

import java.nio.file.Path;
import java.util.Locale;

import io.dlion.aeron.Topology;
import io.dlion.dist.LocalSteps;
import io.dlion.job.Partition;
import io.dlion.testkit.HostileExchange;

/** Builds a {@link TrainConfig} from command-line values; errors name the option. */
public final class TrainConfigs {
    private TrainConfigs() {
    }

    /** @return the validated configuration. */
    public static TrainConfig of(final String dataset, final Path dataDir, final String model, final String optimizer, final Sharing sharing,
        final int workers, final String transport, final int epochs, final int batch, final double lr, final double weightDecay, final long seed,
        final int trainLimit, final int testLimit, final long epochTimeoutSeconds, final Path out) {
        final TrainConfig c = new TrainConfig();
        switch (dataset) {
            case "fashion-mnist":
                c.dataset = TrainConfig.Dataset.FASHION_MNIST;
                break;
            case "cifar10":
                c.dataset = TrainConfig.Dataset.CIFAR10;
                break;
            default:
                throw new IllegalArgumentException("--dataset must be fashion-mnist or cifar10, got '" + dataset + "'");
        }
        c.transport = TrainConfig.Transport.parse(transport);
        if (epochTimeoutSeconds < 1) {
            throw new IllegalArgumentException("--epoch-timeout must be >= 1, got " + epochTimeoutSeconds);
        }
        c.dataDir = dataDir;
        c.model = model.toLowerCase(Locale.ROOT);
        c.optimizer = optimizer.toLowerCase(Locale.ROOT);
        c.sharing = sharing;
        c.workers = workers;
        c.epochs = epochs;
        c.batch = batch;
        c.lr = lr;
        c.weightDecay = weightDecay;
        c.seed = seed;
        c.trainLimit = trainLimit;
        c.testLimit = testLimit;
        c.epochTimeoutSeconds = epochTimeoutSeconds;
        c.out = out;
        return c.validate();
    }

    /**
     * Aggregate a D-Lion or dense run over Aeron in the given topology (the star by default).
     *
     * @param config a validated configuration.
     * @param kind   star or sharded (a slice server per worker).
     * @return the configuration, validated again.
     * @throws IllegalArgumentException naming {@code --topology} when the run has no Aeron transport.
     */
    public static TrainConfig topology(final TrainConfig config, final Topology.Kind kind) {
        config.topology = Topology.checkJobKind("--topology", kind);
        if (config.topology == Topology.Kind.SHARDED && (!(config.sharing.isDLion() || config.sharing.isDense())
            || config.transport == TrainConfig.Transport.INPROC)) {
            throw new IllegalArgumentException("--topology sharded needs D-Lion or dense sharing (dlion-mavo, dlion-avg, dense-lion or"
                + " dense-adamw) over --transport aeron-ipc or aeron-udp, got --sharing " + config.sharing.cliName() + " --transport "
                + config.transport.name().toLowerCase(Locale.ROOT).replace('_', '-'));
        }
        return config.validate();
    }

    /**
     * Make the first {@code workers} workers of a D-Lion run hostile (robustness experiments).
     *
     * @param config  a configuration from {@link #of}.
     * @param workers how many workers forge their votes, in [0, --workers).
     * @param mode    {@code invert} or {@code random}.
     * @return the same configuration, validated again.
     */
    public static TrainConfig hostile(final TrainConfig config, final int workers, final String mode) {
        config.hostile = workers;
        config.hostileMode = HostileExchange.Mode.parse(mode);
        return config.validate();
    }

    /**
     * Local steps, the data split and a validation split.
     *
     * @param config     a configuration from {@link #of}.
     * @param local      H and the outer step's settings; the outer weight decay is taken from {@code --weight-decay}.
     * @param partition  {@code iid}, {@code dirichlet:ALPHA} or {@code classes:K}.
     * @param validation hold out the last K training examples and evaluate on them (0: the test set).
     * @return the same configuration, validated again.
     * @throws IllegalArgumentException naming the option that is wrong.
     */
    public static TrainConfig localSteps(final TrainConfig config, final LocalSteps local, final String partition, final int validation) {
        config.localSteps = local.outerWeightDecay(config.weightDecay);
        config.partition = Partition.parse(partition, "--partition");
        config.validation = validation;
        return config.validate();
    }

    /**
     * @param config    a configuration with its local steps set.
     * @param evalEvery {@code --eval-every}: also evaluate worker 0's model every this many steps (0: after each epoch only).
     * @return the same configuration, validated again.
     */
    public static TrainConfig evalEvery(final TrainConfig config, final int evalEvery) {
        config.evalEvery = evalEvery;
        return config.validate();
    }

    /**
     * @param config a configuration from {@link #of}.
     * @param shape  {@code --model vit}'s hidden, depth, heads and MLP ratio, or null for the paper's preset.
     * @return the same configuration, validated again.
     */
    public static TrainConfig vitShape(final TrainConfig config, final int[] shape) {
        config.vitShape = shape == null ? null : shape.clone();
        return config.validate();
    }
}
