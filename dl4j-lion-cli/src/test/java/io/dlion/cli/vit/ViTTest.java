package io.dlion.cli.vit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.List;

import io.dlion.Lion;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.layers.BaseLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.regularization.Regularization;
import org.nd4j.linalg.learning.regularization.WeightDecay;

class ViTTest {

    /**
     * Hand count for the paper model (D = 512, p = 4, C = 3, N = 64, L = 6, M = 2048, K = 10):
     * patch embedding 48·512 + 512 = 25,088; position 64·512 = 32,768;
     * one block 4·512² + 2·512·2048 + 9·512 + 2048 = 1,048,576 + 2,097,152 + 4,608 + 2,048 = 3,152,384, six blocks
     * 18,914,304; final LayerNorm 1,024; head 512·10 + 10 = 5,130. Total 18,978,314.
     */
    private static final long PAPER_PARAMETERS = 18_978_314L;

    /** Tiny: (49 + 1)·64 + 16·64 + 2·(4·64² + 2·64·256 + 9·64 + 256) + 2·64 + 65·10 = 104,970. */
    private static final long TINY_PARAMETERS = 104_970L;

    @Test
    void shouldCountAbout19MillionParametersAtThePaperSize() {
        final ViTConfig paper = ViTConfig.paper();
        assertEquals(PAPER_PARAMETERS, ViT.parameterCount(paper));
        final MultiLayerNetwork net = ViT.build(paper);
        assertEquals(PAPER_PARAMETERS, net.numParams());
        assertEquals(ViT.parameterCount(paper), net.numParams());
        assertEquals(paper.depth() + 3, net.getnLayers());
    }

    @Test
    void shouldMatchTheClosedFormForTheTinyModelAndOddSizes() {
        assertEquals(TINY_PARAMETERS, ViT.parameterCount(ViTConfig.tinyFashionMnist()));
        assertEquals(TINY_PARAMETERS, ViT.build(ViTConfig.tinyFashionMnist()).numParams());
        final ViTConfig odd = ViTConfig.builder().imageSize(6).channels(2).patch(3).hidden(6).depth(3).heads(3).mlpRatio(3).classes(4).build();
        assertEquals(ViT.parameterCount(odd), ViT.build(odd).numParams());
    }

    @Test
    void shouldOutputClassProbabilitiesForFlatImages() {
        final MultiLayerNetwork net = ViT.build(ViTConfig.tinyFashionMnist());
        final INDArray x = Nd4j.rand(DataType.FLOAT, 5, 784);
        final INDArray out = net.output(x);
        assertArrayEquals(new long[] {5, 10}, out.shape());
        final INDArray rowSums = out.sum(1);
        for (int i = 0; i < 5; i++) {
            assertEquals(1.0, rowSums.getDouble(i), 1e-5);
        }
        assertTrue(out.minNumber().doubleValue() > 0.0);
        assertFalse(out.getRow(0).equalsWithEps(out.getRow(1), 1e-6), "different images, same output");
    }

    @Test
    void shouldRejectInputOfTheWrongWidth() {
        final MultiLayerNetwork net = ViT.build(ViTConfig.tinyFashionMnist());
        assertThrows(IllegalArgumentException.class, () -> net.output(Nd4j.rand(DataType.FLOAT, 2, 783)));
    }

    @Test
    void shouldRoundTripTheConfigurationThroughJson() {
        final ViTConfig c = ViTConfig.tinyFashionMnist().toBuilder().weightDecay(0.5).updater(new Lion(3e-4)).build();
        final MultiLayerConfiguration conf = ViT.configuration(c);
        final MultiLayerConfiguration back = MultiLayerConfiguration.fromJson(conf.toJson());
        assertEquals(conf, back);
        final MultiLayerNetwork a = ViT.build(c);
        final MultiLayerNetwork b = new MultiLayerNetwork(back);
        b.init(a.params(), false);
        final INDArray x = Nd4j.rand(DataType.FLOAT, 3, 784);
        assertEquals(a.output(x), b.output(x));
    }

    @Test
    void shouldSurviveCloneAndModelSerializer() throws Exception {
        final MultiLayerNetwork net = ViT.build(ViTConfig.tinyFashionMnist());
        final INDArray x = Nd4j.rand(DataType.FLOAT, 2, 784);
        assertEquals(net.output(x), net.clone().output(x));
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ModelSerializer.writeModel(net, bytes, true);
        final MultiLayerNetwork restored = ModelSerializer.restoreMultiLayerNetwork(new ByteArrayInputStream(bytes.toByteArray()), true);
        assertEquals(net.output(x), restored.output(x));
    }

    @Test
    void shouldTrainEveryParameterThroughTheFlatDl4jUpdater() {
        final MultiLayerNetwork net = ViT.build(ViTConfig.tinyFashionMnist().toBuilder().updater(new Lion(1e-3)).build());
        final INDArray before = net.params().dup();
        final INDArray x = Nd4j.rand(DataType.FLOAT, 4, 784);
        final INDArray y = Nd4j.zeros(DataType.FLOAT, 4, 10);
        for (int i = 0; i < 4; i++) {
            y.putScalar(i, i, 1f);
        }
        net.fit(new DataSet(x, y));
        assertEquals(net.numParams(), net.getUpdater().getStateViewArray().length(), "Lion keeps one momentum per parameter");
        assertEquals(net.numParams(), net.getFlattenedGradients().length());
        final INDArray step = net.params().sub(before);
        final long moved = step.neq(0).castTo(DataType.INT32).sumNumber().longValue();
        assertTrue(moved > 0.9 * net.numParams(), moved + " of " + net.numParams() + " parameters moved");
    }

    @Test
    void shouldBeDeterministicForASeed() {
        final ViTConfig c = ViTConfig.tinyFashionMnist();
        assertEquals(ViT.build(c).params(), ViT.build(c).params());
    }

    @Test
    void shouldPutWeightDecayOnWeightsOnlyAndOnceAsDecoupled() {
        final double wd = 0.25;
        final MultiLayerNetwork net = ViT.build(ViTConfig.tinyFashionMnist().toBuilder().weightDecay(wd).build());
        final MultiLayerConfiguration conf = net.getLayerWiseConfigurations();
        final String[][] weights = {
            {"W"}, {"Wq", "Wk", "Wv", "Wo", "W1", "W2"}, {"Wq", "Wk", "Wv", "Wo", "W1", "W2"}, {}, {"W"}};
        final String[][] others = {
            {"b", "pos"}, {"ln1g", "ln1b", "bq", "bk", "bv", "bo", "ln2g", "ln2b", "b1", "b2"},
            {"ln1g", "ln1b", "bq", "bk", "bv", "bo", "ln2g", "ln2b", "b1", "b2"}, {"g", "b"}, {"b"}};
        int decayed = 0;
        for (int i = 0; i < weights.length; i++) {
            final org.deeplearning4j.nn.conf.layers.Layer layer = conf.getConf(i).getLayer();
            for (final String w : weights[i]) {
                final List<Regularization> r = layer.getRegularizationByParam(w);
                assertEquals(1, r.size(), "layer " + i + " " + w);
                final WeightDecay d = (WeightDecay) r.get(0);
                assertEquals(wd, d.getCoeff().valueAt(0, 0));
                assertTrue(d.isApplyLR());
                decayed += (int) net.getLayer(i).getParam(w).length();
            }
            for (final String p : others[i]) {
                final List<Regularization> r = layer.getRegularizationByParam(p);
                assertTrue(r == null || r.isEmpty(), "layer " + i + " " + p + " has " + r);
            }
            assertEquals(weights[i].length + others[i].length, net.getLayer(i).paramTable().size(), "layer " + i);
        }
        assertTrue(conf.getConf(0).getLayer() instanceof PatchEmbedding);
        assertTrue(((BaseLayer) conf.getConf(4).getLayer()).getRegularizationBias().isEmpty());
        assertEquals(49 * 64 + 2 * (4 * 64 * 64 + 2 * 64 * 256) + 64 * 10, decayed);
    }
}
