package io.dlion.bench;

import io.dlion.Lion;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.learning.config.IUpdater;

/**
 * Measures the updater state that DL4J really allocates for the same network with Lion and with Adam
 * (the length and bytes of the updater state view array), and prints one table row per updater.
 */
public final class UpdaterStateMemory {
    private UpdaterStateMemory() {
    }

    public static void main(final String[] args) {
        System.out.println("| updater | params | state elements | state bytes | state / params |");
        System.out.println("|---|---|---|---|---|");
        for (final IUpdater updater : new IUpdater[] {new Lion(1e-4), new Adam(1e-3)}) {
            final MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder()
                .updater(updater)
                .list()
                .layer(new DenseLayer.Builder().nIn(784).nOut(1024).activation(Activation.RELU).build())
                .layer(new OutputLayer.Builder().nIn(1024).nOut(10).activation(Activation.SOFTMAX).build())
                .build());
            net.init();
            final long params = net.numParams();
            final long state = net.getUpdater().getStateViewArray().length();
            final long bytes = state * net.getUpdater().getStateViewArray().dataType().width();
            System.out.printf("| %s | %d | %d | %d | %.2f |%n", updater.getClass().getSimpleName(), params, state, bytes, (double) state / params);
        }
    }
}
