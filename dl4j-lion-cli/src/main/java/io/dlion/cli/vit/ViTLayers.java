package io.dlion.cli.vit;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.samediff.AbstractSameDiffLayer;
import org.nd4j.autodiff.samediff.SDVariable;
import org.nd4j.autodiff.samediff.SameDiff;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.learning.regularization.Regularization;
import org.nd4j.linalg.learning.regularization.WeightDecay;

/** What the ViT layers share: LayerNorm, regularization set-up and input checks. */
final class ViTLayers {

    /** LayerNorm epsilon, as in PyTorch's {@code nn.LayerNorm}. */
    static final double LAYER_NORM_EPS = 1e-5;

    private ViTLayers() {
    }

    /**
     * Puts decoupled weight decay (applyLR = true) on the layer's weight parameters and nothing on its bias
     * parameters (biases, LayerNorm gains and shifts, position embedding), so DL4J applies it once per step.
     */
    static void weightDecayOnWeights(final AbstractSameDiffLayer layer, final double weightDecay) {
        if (!(weightDecay >= 0.0) || Double.isInfinite(weightDecay)) {
            throw new IllegalArgumentException("weightDecay must be finite and >= 0: " + weightDecay);
        }
        final List<Regularization> weights = new ArrayList<>();
        if (weightDecay > 0.0) {
            weights.add(new WeightDecay(weightDecay, true));
        }
        layer.setRegularization(weights);
        layer.setRegularizationBias(new ArrayList<>());
    }

    /**
     * LayerNorm over the last dimension of {@code x [rows, D]}: {@code (x - mean) / sqrt(var + eps) * gain + shift},
     * with the biased variance, written with elementary ops.
     */
    static SDVariable layerNorm(final SameDiff sd, final SDVariable x, final SDVariable gain, final SDVariable shift) {
        final SDVariable centred = x.sub(x.mean(true, 1));
        final SDVariable variance = centred.mul(centred).mean(true, 1);
        return centred.mul(sd.math.rsqrt(variance.add(LAYER_NORM_EPS))).mul(gain).add(shift);
    }

    static void checkFeedForward(final InputType inputType, final long expectedSize, final String layer, final int index) {
        if (inputType == null || inputType.getType() != InputType.Type.FF || inputType.arrayElementsPerExample() != expectedSize) {
            throw new IllegalStateException(layer + " (layer " + index + ") expects feed-forward input of size "
                + expectedSize + ", got " + inputType);
        }
    }

    static void checkInput(final INDArray input, final long expectedSize, final String layer) {
        if (input.rank() != 2 || input.size(1) != expectedSize) {
            throw new IllegalArgumentException(layer + " expects input [batch, " + expectedSize + "], got "
                + Arrays.toString(input.shape()));
        }
    }
}
