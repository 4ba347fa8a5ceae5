package io.dlion;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Path;

import org.deeplearning4j.nn.conf.ComputationGraphConfiguration;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.BaseLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.lossfunctions.LossFunctions;
import org.nd4j.linalg.schedule.ExponentialSchedule;
import org.nd4j.linalg.schedule.ScheduleType;

class LionNetworkTest {

    static MultiLayerConfiguration mlp(final Lion lion, final double weightDecay) {
        return new NeuralNetConfiguration.Builder()
            .seed(7)
            .dataType(DataType.DOUBLE)
            .updater(lion)
            .list()
            .layer(new DenseLayer.Builder().nIn(5).nOut(4).activation(Activation.TANH).weightDecay(weightDecay).build())
            .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(4).nOut(3).activation(Activation.SOFTMAX).build())
            .build();
    }

    static DataSet randomData(final long seed) {
        Nd4j.getRandom().setSeed(seed);
        final INDArray features = Nd4j.rand(DataType.DOUBLE, 8, 5).subi(0.5);
        final INDArray labels = Nd4j.zeros(DataType.DOUBLE, 8, 3);
        for (int i = 0; i < 8; i++) {
            labels.putScalar(i, i % 3, 1.0);
        }
        return new DataSet(features, labels);
    }

    @Test
    void shouldRoundTripMultiLayerConfigurationThroughJson() {
        final Lion lion = new Lion(3e-4, 0.95, 0.98);
        final MultiLayerConfiguration conf = mlp(lion, 0.0);
        final MultiLayerConfiguration back = MultiLayerConfiguration.fromJson(conf.toJson());
        assertEquals(conf, back);
        final Object updater = ((BaseLayer) back.getConf(0).getLayer()).getIUpdater();
        assertInstanceOf(Lion.class, updater);
        assertEquals(lion, updater);
        assertEquals(conf.toJson(), back.toJson());
    }

    @Test
    void shouldRoundTripScheduleThroughJsonAndYaml() {
        final Lion lion = new Lion(new ExponentialSchedule(ScheduleType.EPOCH, 1e-3, 0.9));
        final MultiLayerConfiguration conf = mlp(lion, 0.0);
        assertEquals(lion, ((BaseLayer) MultiLayerConfiguration.fromJson(conf.toJson()).getConf(0).getLayer()).getIUpdater());
        assertEquals(lion, ((BaseLayer) MultiLayerConfiguration.fromYaml(conf.toYaml()).getConf(0).getLayer()).getIUpdater());
    }

    @Test
    void shouldRoundTripComputationGraphConfigurationThroughJson() {
        final ComputationGraphConfiguration conf = new NeuralNetConfiguration.Builder()
            .updater(new Lion(2e-4))
            .graphBuilder()
            .addInputs("in")
            .addLayer("dense", new DenseLayer.Builder().nIn(5).nOut(4).build(), "in")
            .addLayer("out", new OutputLayer.Builder().nIn(4).nOut(3).activation(Activation.SOFTMAX).build(), "dense")
            .setOutputs("out")
            .build();
        final ComputationGraphConfiguration back = ComputationGraphConfiguration.fromJson(conf.toJson());
        assertEquals(conf, back);
        final ComputationGraph graph = new ComputationGraph(back);
        graph.init();
        graph.fit(randomData(3));
        assertInstanceOf(LionUpdater.class, graph.getUpdater().getUpdaterBlocks().get(0).getGradientUpdater());
    }

    @Test
    void shouldKeepMomentumThroughModelSerializer(@TempDir final Path dir) throws Exception {
        final MultiLayerNetwork net = new MultiLayerNetwork(mlp(new Lion(1e-2), 0.0));
        net.init();
        for (int i = 0; i < 3; i++) {
            net.fit(randomData(i));
        }
        final INDArray state = net.getUpdater().getStateViewArray().dup();
        assertTrue(state.norm2Number().doubleValue() > 0, "momentum should be non-zero after training");

        final File file = dir.resolve("lion.zip").toFile();
        ModelSerializer.writeModel(net, file, true);
        final MultiLayerNetwork restored = ModelSerializer.restoreMultiLayerNetwork(file, true);
        assertEquals(state, restored.getUpdater().getStateViewArray());
        assertEquals(net.params(), restored.params());

        // both continue identically: the restored momentum is really used
        net.fit(randomData(10));
        restored.fit(randomData(10));
        assertEquals(net.params(), restored.params());
    }

    /**
     * Per-layer decoupled weight decay: on the first step m = 0, so c = (1 - beta1) g and
     * theta' = theta - lr * (sign(g) + lambda * theta) for the weights; biases carry no decay.
     */
    @Test
    void shouldApplyPerLayerWeightDecayDecoupled() {
        final double lr = 0.01;
        final double lambda = 0.1;
        final MultiLayerNetwork net = new MultiLayerNetwork(mlp(new Lion(lr), lambda));
        net.init();
        final DataSet data = randomData(5);

        net.setInput(data.getFeatures());
        net.setLabels(data.getLabels());
        net.computeGradientAndScore();
        final double[] grad = net.gradient().getGradientFor("0_W").dup().ravel().toDoubleVector();
        final double[] gradB = net.gradient().getGradientFor("0_b").dup().ravel().toDoubleVector();
        final double[] w = net.getParam("0_W").dup().ravel().toDoubleVector();
        final double[] b = net.getParam("0_b").dup().ravel().toDoubleVector();

        net.fit(data);

        final double[] wAfter = net.getParam("0_W").ravel().toDoubleVector();
        final double[] bAfter = net.getParam("0_b").ravel().toDoubleVector();
        final double[] wExpected = new double[w.length];
        for (int i = 0; i < w.length; i++) {
            wExpected[i] = w[i] - lr * (Math.signum(grad[i]) + lambda * w[i]);
        }
        final double[] bExpected = new double[b.length];
        for (int i = 0; i < b.length; i++) {
            bExpected[i] = b[i] - lr * Math.signum(gradB[i]);
        }
        assertArrayEquals(wExpected, wAfter, 1e-12);
        assertArrayEquals(bExpected, bAfter, 1e-12);
    }
}
