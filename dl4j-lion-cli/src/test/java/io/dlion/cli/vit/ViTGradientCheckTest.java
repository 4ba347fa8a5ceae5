package io.dlion.cli.vit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.deeplearning4j.gradientcheck.GradientCheckUtil;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.NoOp;

/**
 * Backprop of the custom layers against central differences, in DOUBLE, on a ViT small enough to run in seconds:
 * 4x4x2 images, patch 2 (4 tokens), hidden 8, 2 heads, 1 block, MLP ratio 2, 3 classes.
 */
class ViTGradientCheckTest {

    private DataType defaultType;
    private DataType defaultFloatType;

    @BeforeEach
    void useDouble() {
        defaultType = Nd4j.dataType();
        defaultFloatType = Nd4j.defaultFloatingPointType();
        Nd4j.setDefaultDataTypes(DataType.DOUBLE, DataType.DOUBLE);
    }

    @AfterEach
    void restoreTypes() {
        Nd4j.setDefaultDataTypes(defaultType, defaultFloatType);
    }

    @Test
    void shouldMatchNumericalGradientsOfEveryParameterArray() {
        final ViTConfig config = ViTConfig.builder()
            .imageSize(4).channels(2).patch(2).hidden(8).heads(2).depth(1).mlpRatio(2).classes(3)
            .updater(new NoOp()).dataType(DataType.DOUBLE).seed(7).build();
        final MultiLayerNetwork net = ViT.build(config);
        Nd4j.getRandom().setSeed(11);
        final INDArray x = Nd4j.rand(DataType.DOUBLE, 3, config.inputSize()).subi(0.5);
        final INDArray y = Nd4j.zeros(DataType.DOUBLE, 3, 3);
        y.putScalar(0, 0, 1);
        y.putScalar(1, 2, 1);
        y.putScalar(2, 1, 1);
        final boolean ok = GradientCheckUtil.checkGradients(new GradientCheckUtil.MLNConfig()
            .net(net).input(x).labels(y)
            .epsilon(1e-6).maxRelError(1e-5).minAbsoluteError(1e-9)
            .subset(true).maxPerParam(4));
        assertTrue(ok, "gradient check failed; see the log for the parameters");
    }

    @Test
    void shouldCorrectTheDoubledGradientOfDl4jM21SameDiffLayers() {
        assertEquals(2.0, CorrectedSameDiffLayer.externalErrorsFactor(),
            "DL4J's SameDiffLayer no longer doubles dL/dOutput: the correction is now a no-op, update the docs");
    }
}
