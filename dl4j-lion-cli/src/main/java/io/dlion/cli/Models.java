package io.dlion.cli;

import io.dlion.cli.data.FashionMnist;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.PoolingType;
import org.deeplearning4j.nn.conf.layers.SubsamplingLayer;
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

    /**
     * Small CNN for 28x28x1 (Fashion-MNIST): conv 5x5x16, max-pool, conv 5x5x32, max-pool, dense 128, softmax.
     * Input is the flat [batch, 784] array the data readers give.
     */
    public static MultiLayerConfiguration cnn(final IUpdater updater, final double weightDecay, final long seed) {
        return new NeuralNetConfiguration.Builder()
            .seed(seed)
            .weightInit(WeightInit.RELU)
            .updater(updater)
            .list()
            .layer(new ConvolutionLayer.Builder(5, 5).nOut(16).activation(Activation.RELU).weightDecay(weightDecay).build())
            .layer(new SubsamplingLayer.Builder(PoolingType.MAX).kernelSize(2, 2).stride(2, 2).build())
            .layer(new ConvolutionLayer.Builder(5, 5).nOut(32).activation(Activation.RELU).weightDecay(weightDecay).build())
            .layer(new SubsamplingLayer.Builder(PoolingType.MAX).kernelSize(2, 2).stride(2, 2).build())
            .layer(new DenseLayer.Builder().nOut(128).activation(Activation.RELU).weightDecay(weightDecay).build())
            .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(FashionMnist.CLASSES)
                .activation(Activation.SOFTMAX).weightDecay(weightDecay).build())
            .setInputType(InputType.convolutionalFlat(28, 28, 1))
            .build();
    }
}
