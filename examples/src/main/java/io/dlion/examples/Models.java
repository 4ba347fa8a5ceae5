package io.dlion.examples;

import io.dlion.examples.data.FashionMnist;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.weights.WeightInit;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.learning.config.IUpdater;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/** The network configurations the examples train. Weight decay is set per layer (see the README). */
public final class Models {
    private Models() {
    }

    /**
     * MLP 784-256-10 for Fashion-MNIST.
     *
     * @param updater     Lion, Adam, ...
     * @param weightDecay decoupled weight decay on the weights of every layer (0 for none).
     * @param seed        weight initialisation seed.
     */
    public static MultiLayerConfiguration mlp(final IUpdater updater, final double weightDecay, final long seed) {
        return new NeuralNetConfiguration.Builder()
            .seed(seed)
            .weightInit(WeightInit.XAVIER)
            .updater(updater)
            .list()
            .layer(new DenseLayer.Builder().nIn(FashionMnist.PIXELS).nOut(256).activation(Activation.RELU).weightDecay(weightDecay).build())
            .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(256).nOut(FashionMnist.CLASSES)
                .activation(Activation.SOFTMAX).weightDecay(weightDecay).build())
            .build();
    }
}
