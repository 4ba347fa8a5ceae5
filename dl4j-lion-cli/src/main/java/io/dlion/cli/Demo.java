package io.dlion.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

import io.dlion.cli.data.FashionMnist;
import io.dlion.cli.train.EpochMetrics;
import io.dlion.cli.train.Sharing;
import io.dlion.cli.train.TrainConfig;
import io.dlion.cli.train.TrainConfigs;
import io.dlion.cli.train.Trainer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./dlion demo}: Distributed Lion on this machine with everything embedded: an Aeron media driver
 * and the aggregation server in this JVM, 4 workers each training its own shard of Fashion-MNIST, 1-bit
 * votes up, majority vote down. Ends with the accuracy reached and the bytes saved against dense exchange.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, sortOptions = false,
    description = "D-Lion majority vote, 4 workers over an embedded Aeron driver (IPC), Fashion-MNIST MLP, 2 epochs.")
final class Demo implements Callable<Integer> {

    @Option(names = "--data-dir", description = "Fashion-MNIST IDX files (default: ${DEFAULT-VALUE})")
    Path dataDir = FashionMnist.DEFAULT_DIR;

    @Option(names = "--workers", description = "workers (default: ${DEFAULT-VALUE})")
    int workers = 4;

    @Option(names = "--transport", converter = OptionTypes.TransportName.class, description = "aeron-ipc, aeron-udp or inproc (default:"
        + " aeron-ipc)")
    TrainConfig.Transport transport = TrainConfig.Transport.AERON_IPC;

    @Option(names = "--epochs", description = "epochs (default: ${DEFAULT-VALUE})")
    int epochs = 2;

    @Option(names = "--out", description = "output directory (default: ${DEFAULT-VALUE})")
    Path out = Path.of("runs", "demo");

    @Override
    public Integer call() throws Exception {
        final TrainConfig config = TrainConfigs.of("fashion-mnist", dataDir, "mlp", "lion", Sharing.DLION_MAVO, workers, transport.cliName(), epochs, 128,
            1e-3, 0, 42, 0, 0, 1800, out);
        System.out.printf("D-Lion demo: %d workers, 1-bit sign votes over %s, majority vote, Fashion-MNIST MLP, %d epochs%n", workers, transport.cliName(),
            epochs);
        final List<EpochMetrics> metrics = new Trainer(config, System.out).run();
        final EpochMetrics last = metrics.get(metrics.size() - 1);
        final double wire = last.bytesUp() + last.bytesDown();
        final double dense = 8.0 * last.params() * last.rounds() * last.workers();
        System.out.printf("%nTest accuracy after %d epochs: %.2f%%%n", last.epoch(), 100 * last.testAccuracy());
        System.out.printf("Bytes on the wire (all workers, up + down, headers included): %,.0f; a dense fp32 exchange of the same %d rounds: %,.0f"
            + " -> %.1fx less%n", wire, last.rounds(), dense, dense / wire);
        System.out.printf("Metrics and plots in %s%n", out.toAbsolutePath());
        return 0;
    }
}
