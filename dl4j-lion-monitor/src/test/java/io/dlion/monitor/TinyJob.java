package io.dlion.monitor;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import io.dlion.Lion;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/** A small seeded model and per-worker shards of random batches, for jobs whose training is beside the point. */
final class TinyJob {
    static final int BATCHES = 6;

    private TinyJob() {
    }

    static MultiLayerNetwork net() {
        final MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder().seed(3).dataType(DataType.FLOAT)
            .updater(new Lion(0.01)).list()
            .layer(new DenseLayer.Builder().nIn(8).nOut(16).activation(Activation.TANH).build())
            .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(16).nOut(3).activation(Activation.SOFTMAX).build())
            .build());
        net.init();
        return net;
    }

    static ListDataSetIterator<DataSet> shard(final int worker) {
        final List<DataSet> batches = new ArrayList<>();
        final Random random = new Random(100 + worker);
        for (int b = 0; b < BATCHES; b++) {
            final INDArray f = Nd4j.create(DataType.FLOAT, 4, 8);
            final INDArray l = Nd4j.zeros(DataType.FLOAT, 4, 3);
            for (int i = 0; i < 4; i++) {
                for (int j = 0; j < 8; j++) {
                    f.putScalar(i, j, random.nextGaussian());
                }
                l.putScalar(i, random.nextInt(3), 1);
            }
            batches.add(new DataSet(f, l));
        }
        return new ListDataSetIterator<>(batches, 1);
    }
}
