package io.dlion.cli.train;

import java.nio.file.Path;

import io.dlion.aeron.Topology;
import io.dlion.dist.LocalSteps;
import io.dlion.job.Partition;
import io.dlion.testkit.HostileExchange;
import io.dlion.vote.VoteAggregator;

/** The options of one training run, validated once; every error names its command-line option. */
public final class TrainConfig {
    /** Data sets the examples read. */
    public enum Dataset { FASHION_MNIST, CIFAR10 }

    /** Transports of the D-Lion votes. */
    public enum Transport {
        INPROC, AERON_IPC, AERON_UDP;

        /** @return the command line's name: {@code inproc}, {@code aeron-ipc} or {@code aeron-udp}. */
        public String cliName() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }

        /**
         * @param name a command-line name.
         * @return its transport.
         * @throws IllegalArgumentException naming {@code --transport} and the valid names.
         */
        public static Transport parse(final String name) {
            for (final Transport t : values()) {
                if (t.cliName().equals(name)) {
                    return t;
                }
            }
            throw new IllegalArgumentException("--transport must be inproc, aeron-ipc or aeron-udp, got '" + name + "'");
        }
    }

    Dataset dataset = Dataset.FASHION_MNIST;
    Path dataDir;
    String model = "mlp";
    String optimizer = "lion";
    Sharing sharing = Sharing.NONE;
    int workers = 1;
    Transport transport = Transport.INPROC;
    int epochs = 2;
    int batch = 128;
    /** The ND4J device the training threads use (one process per GPU: the local rank), or -1 for ND4J's choice. */
    public int device = -1;
    double lr = Double.NaN;
    double weightDecay = 0;
    long seed = 42;
    int trainLimit;
    int testLimit;
    Path out;
    long epochTimeoutSeconds = 1800;
    boolean quiet;
    /** Who aggregates which slice over Aeron: {@link Topology.Kind#STAR} or {@link Topology.Kind#SHARDED}. */
    Topology.Kind topology = Topology.Kind.STAR;
    /** Workers 0..hostile-1 send forged votes ({@link HostileExchange}); 0 = none. */
    int hostile;
    HostileExchange.Mode hostileMode = HostileExchange.Mode.INVERT;
    /** Workers that train in this process (null: all of them). */
    int[] localWorkers;
    /** Transport to a remote aggregation server (null: the one of {@link #transport}, in this JVM). */
    java.util.function.Supplier<VoteTransport> remote;
    /** Transport to a remote dense server (null: the one of {@link #transport}, in this JVM). */
    java.util.function.Supplier<DenseTransport> denseRemote;
    /** Rejoin, hand-over and checkpoint settings of a worker process (null: none). */
    Recovery recovery;
    /** File every local worker appends its round history to ({@link io.dlion.job.RoundHistory}), or null for none. */
    public Path history;
    /** D-Lion: H local steps per vote and the outer step's settings (H = 1: per-step D-Lion). */
    LocalSteps localSteps = LocalSteps.none();
    /** How the training examples are split over the workers. */
    Partition partition = Partition.iid();
    /** {@code --model vit}: hidden, depth, heads and MLP ratio (null: the paper's preset). */
    int[] vitShape;
    /** Hold out the last K training examples and evaluate on them instead of the test set (0: the test set). */
    int validation;
    /** Also evaluate worker 0's model every K steps, into {@code evals.csv} (0: after each epoch only). */
    int evalEvery;
    /** What this process shows while it trains: metrics endpoint, DL4J's UI. */
    public Monitor monitor = Monitor.NONE;

    /** @return the learning rate, or the default of the optimizer when none was given. */
    double learningRate() {
        if (!Double.isNaN(lr)) {
            return lr;
        }
        return "lion".equals(optimizer) ? 3e-4 : 1e-3;
    }

    /** @return the weight decay in the layers: none with local steps, where the outer step applies {@code --weight-decay}. */
    double layerWeightDecay() {
        return localSteps.enabled() ? 0 : weightDecay;
    }

    /** @return the batch each worker trains on: the global batch divided by the workers. */
    int workerBatch() {
        return sharing == Sharing.NONE ? batch : batch / workers;
    }

    TrainConfig validate() {
        require(workers >= 1 && workers <= VoteAggregator.MAX_VOTERS, "--workers must be in [1, " + VoteAggregator.MAX_VOTERS + "], got "
            + workers);
        require(epochs >= 1, "--epochs must be >= 1, got " + epochs);
        require(batch >= 1, "--batch must be >= 1, got " + batch);
        require(Double.isNaN(lr) || (lr > 0 && Double.isFinite(lr)), "--lr must be > 0, got " + lr);
        require(weightDecay >= 0 && Double.isFinite(weightDecay), "--weight-decay must be >= 0, got " + weightDecay);
        require(trainLimit >= 0, "--train-limit must be >= 0, got " + trainLimit);
        require(testLimit >= 0, "--test-limit must be >= 0, got " + testLimit);
        require(out != null, "--out is required");
        require("lion".equals(optimizer) || "adamw".equals(optimizer), "--optimizer must be adamw or lion, got '" + optimizer + "'");
        require(java.util.List.of("mlp", "cnn", "vit-tiny", "vit").contains(model), "--model must be mlp, cnn, vit-tiny or vit, got '" + model + "'");
        if (sharing.impliedOptimizer() != null) {
            require(sharing.impliedOptimizer().equals(optimizer), "--sharing " + sharing.cliName() + " needs --optimizer "
                + sharing.impliedOptimizer() + ", got '" + optimizer + "'");
        }
        if (sharing.isDense()) {
            require(transport != Transport.INPROC, "--sharing " + sharing.cliName() + " runs over Aeron: use --transport aeron-ipc or aeron-udp");
        }
        if (sharing == Sharing.NONE) {
            require(workers == 1, "--sharing none trains one model: use --workers 1 (got " + workers + ")");
        } else {
            require(batch % workers == 0, "--batch must be a multiple of --workers (" + workers + "), got " + batch);
        }
        if (!sharing.isDLion() && !sharing.isDense()) {
            require(transport == Transport.INPROC, "--transport applies to D-Lion and dense sharing only");
        }
        require(hostile >= 0 && hostile < workers, "--hostile must be in [0, --workers), got " + hostile);
        if (hostile > 0) {
            require(sharing == Sharing.DLION_MAVO || sharing == Sharing.DLION_AVG, "--hostile needs --sharing dlion-mavo or dlion-avg");
            require(localWorkers == null, "--hostile applies to jobs whose workers all train in this JVM");
        }
        localSteps.conclude();
        if (localSteps.enabled()) {
            require(sharing.isDLion(), "--local-steps " + localSteps.steps() + " needs --sharing dlion-mavo or dlion-avg, got "
                + sharing.cliName());
        }
        if (partition.kind() != Partition.Kind.IID) {
            require(sharing != Sharing.NONE, "--partition " + partition + " splits the data over several workers: not with --sharing none");
        }
        require(validation >= 0, "--validation must be >= 0, got " + validation);
        require(evalEvery >= 0, "--eval-every must be >= 0, got " + evalEvery);
        if (evalEvery > 0) {
            require(sharing.isDLion() || sharing.isDense(), "--eval-every needs D-Lion or dense sharing, got --sharing " + sharing.cliName());
            require(evalEvery % localSteps.steps() == 0, "--eval-every must be a multiple of --local-steps (" + localSteps.steps()
                + ": parameters are shared only between outer steps), got " + evalEvery);
        }
        if (vitShape != null) {
            require(model.equals("vit") && vitShape.length == 4 && java.util.Arrays.stream(vitShape).allMatch(v -> v >= 1)
                && vitShape[0] % vitShape[2] == 0, "--vit-shape is HIDDEN,DEPTH,HEADS,MLP_RATIO (positive, HEADS dividing HIDDEN) for"
                + " --model vit, got " + java.util.Arrays.toString(vitShape));
        }
        if (model.equals("vit") || dataset == Dataset.CIFAR10) {
            require(dataset == Dataset.CIFAR10 && model.equals("vit"), "--model vit goes with --dataset cifar10 (and cifar10 with vit)");
            require(dataDir != null, "--data-dir is required for cifar10");
        }
        return this;
    }

    private static void require(final boolean condition, final String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }

    /** @return a short name of the run for tables and plots. */
    public String label() {
        String base = baseLabel();
        if (localSteps.enabled()) {
            base += ", H=" + localSteps.steps();
        }
        if (partition.kind() != Partition.Kind.IID) {
            base += ", " + partition;
        }
        return hostile == 0 ? base : base + ", " + hostile + " hostile (" + hostileMode.cliName() + ")";
    }

    private String baseLabel() {
        switch (sharing) {
            case NONE:
                return "global " + ("lion".equals(optimizer) ? "Lion" : "AdamW");
            case DLION_MAVO:
                return "D-Lion MaVo x" + workers;
            case DLION_AVG:
                return "D-Lion Avg x" + workers;
            case DENSE_LION:
                return "dense G-Lion x" + workers;
            case DENSE_ADAMW:
                return "dense G-AdamW x" + workers;
            default:
                return "DL4J threshold x" + workers + " (" + ("lion".equals(optimizer) ? "Lion" : "AdamW") + ")";
        }
    }
}
