package io.dlion.cli;

import java.nio.file.Path;

import picocli.CommandLine.Option;

/** The options every training command shares (train, compare, worker): data, model, schedule, output. */
final class RunOptions {

    @Option(names = "--dataset", description = "fashion-mnist or cifar10 (default: ${DEFAULT-VALUE})")
    String dataset = "fashion-mnist";

    @Option(names = "--data-dir", description = "data directory (default: /usr/share/datasets/fashion-mnist for fashion-mnist)")
    Path dataDir;

    @Option(names = "--model", description = "mlp, cnn, vit-tiny or vit (default: ${DEFAULT-VALUE})")
    String model = "mlp";

    @Option(names = "--epochs", description = "epochs (default: ${DEFAULT-VALUE})")
    int epochs = 2;

    @Option(names = "--batch", description = "global batch, split over the workers (default: ${DEFAULT-VALUE})")
    int batch = 128;

    @Option(names = "--seed", description = "seed, the same on every worker (default: ${DEFAULT-VALUE})")
    long seed = 42;

    @Option(names = "--train-limit", description = "use the first K training examples (0 = all)")
    int trainLimit;

    @Option(names = "--test-limit", description = "use the first K test examples (0 = all)")
    int testLimit;

    @Option(names = "--out", required = true, description = "output directory")
    Path out;
}
