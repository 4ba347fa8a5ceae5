package io.dlion.examples;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import io.dlion.Lion;
import io.dlion.examples.data.FashionMnist;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.evaluation.classification.Evaluation;
import org.nd4j.linalg.dataset.DataSet;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code ./dlion demo}: trains a Fashion-MNIST MLP with Lion on this machine and prints the accuracy. */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = "Train a Fashion-MNIST MLP with Lion (single process) and print the test accuracy per epoch.")
final class Demo implements Callable<Integer> {

    @Option(names = "--data-dir", description = "Fashion-MNIST IDX files (default: ${DEFAULT-VALUE})")
    Path dataDir = FashionMnist.DEFAULT_DIR;

    @Option(names = "--epochs", description = "epochs (default: ${DEFAULT-VALUE})")
    int epochs = 2;

    @Option(names = "--batch", description = "batch size (default: ${DEFAULT-VALUE})")
    int batch = 128;

    @Option(names = "--lr", description = "Lion learning rate (default: ${DEFAULT-VALUE})")
    double lr = 1e-3;

    @Option(names = "--seed", description = "seed (default: ${DEFAULT-VALUE})")
    long seed = 42;

    @Override
    public Integer call() throws Exception {
        final DataSet train = FashionMnist.load(dataDir, true, 0);
        final DataSet test = FashionMnist.load(dataDir, false, 0);
        final MultiLayerNetwork net = new MultiLayerNetwork(Models.mlp(new Lion(lr), 0.0, seed));
        net.init();
        System.out.printf("Lion MLP 784-256-10, %d parameters, Fashion-MNIST %d train / %d test, batch %d%n",
            net.numParams(), train.numExamples(), test.numExamples(), batch);
        for (int epoch = 1; epoch <= epochs; epoch++) {
            final long start = System.nanoTime();
            train.shuffle(seed + epoch);
            net.fit(new ListDataSetIterator<>(train.batchBy(batch)));
            final Evaluation eval = net.evaluate(new ListDataSetIterator<>(test.batchBy(1000)));
            System.out.printf("epoch %d  test accuracy %.4f  loss %.4f  %.1f s%n",
                epoch, eval.accuracy(), net.score(), (System.nanoTime() - start) / 1e9);
        }
        return 0;
    }
}
