package io.dlion.cli.vit;

import java.util.Collection;
import java.util.Map;
import java.util.Objects;

import org.deeplearning4j.nn.api.Layer;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.samediff.SDLayerParams;
import org.deeplearning4j.nn.conf.layers.samediff.SameDiffLayer;
import org.deeplearning4j.nn.weights.WeightInit;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.nd4j.autodiff.samediff.SDVariable;
import org.nd4j.autodiff.samediff.SameDiff;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.shade.jackson.annotation.JsonProperty;

/**
 * The first layer of a {@link ViT}: cuts each image into non-overlapping {@code patch x patch} patches, projects
 * every flattened patch linearly to {@code hidden} dimensions and adds a learned position embedding.
 * <pre>
 * input  [batch, C*S*S]            flat image, channel-major (CHW), S = imageSize
 * x      [batch*N, C*p*p]          patch (i, j) flattened in (c, dy, dx) order, N = (S/p)^2, row-major over (i, j)
 * tokens [batch, N, D] = x·W + b + pos
 * output [batch, N*D]              flat, so the next layer's DL4J input type is feed-forward
 * </pre>
 * This is the stride-p convolution of the ViT paper written as a reshape, a permute and one matrix product.
 * Parameters: weight {@code W [C*p*p, D]} (Xavier; the layer's weight decay applies to it), and as DL4J "bias"
 * parameters (no weight decay) {@code b [D]} (zeros) and {@code pos [N, D]} (normal, std 0.02).
 */
public final class PatchEmbedding extends SameDiffLayer {

    /** Weight matrix key. */
    public static final String WEIGHT = "W";
    /** Bias key. */
    public static final String BIAS = "b";
    /** Position embedding key. */
    public static final String POSITION = "pos";

    private static final double POSITION_STD = 0.02;

    @JsonProperty
    private int channels;
    @JsonProperty
    private int imageSize;
    @JsonProperty
    private int patch;
    @JsonProperty
    private int hidden;

    /**
     * @param channels    image channels C.
     * @param imageSize   image height and width S, a multiple of {@code patch}.
     * @param patch       patch height and width p.
     * @param hidden      embedding width D.
     * @param weightDecay decoupled weight decay on {@code W} (0 for none).
     */
    public PatchEmbedding(final int channels, final int imageSize, final int patch, final int hidden,
                          final double weightDecay) {
        if (channels <= 0 || imageSize <= 0 || patch <= 0 || hidden <= 0 || imageSize % patch != 0) {
            throw new IllegalArgumentException("patch embedding needs positive sizes and imageSize a multiple of patch: channels="
                + channels + " imageSize=" + imageSize + " patch=" + patch + " hidden=" + hidden);
        }
        this.channels = channels;
        this.imageSize = imageSize;
        this.patch = patch;
        this.hidden = hidden;
        ViTLayers.weightDecayOnWeights(this, weightDecay);
    }

    private PatchEmbedding() {
    }

    /** @return tokens N per image. */
    public int tokens() {
        final int side = imageSize / patch;
        return side * side;
    }

    private int patchDim() {
        return channels * patch * patch;
    }

    @Override
    public Layer instantiate(final NeuralNetConfiguration conf, final Collection<TrainingListener> listeners,
                             final int layerIndex, final INDArray paramsView, final boolean initializeParams,
                             final DataType dataType) {
        return CorrectedSameDiffLayer.instantiate(conf, listeners, layerIndex, paramsView, initializeParams, dataType);
    }

    @Override
    public InputType getOutputType(final int layerIndex, final InputType inputType) {
        ViTLayers.checkFeedForward(inputType, (long) channels * imageSize * imageSize, "PatchEmbedding", layerIndex);
        return InputType.feedForward((long) tokens() * hidden);
    }

    @Override
    public void defineParameters(final SDLayerParams params) {
        params.clear();
        params.addWeightParam(WEIGHT, patchDim(), hidden);
        params.addBiasParam(BIAS, hidden);
        params.addBiasParam(POSITION, tokens(), hidden);
    }

    @Override
    public void initializeParameters(final Map<String, INDArray> params) {
        initWeights(patchDim(), hidden, WeightInit.XAVIER, params.get(WEIGHT));
        params.get(BIAS).assign(0);
        final INDArray pos = params.get(POSITION);
        pos.assign(Nd4j.randn(pos.dataType(), pos.shape()).muli(POSITION_STD));
    }

    @Override
    public SDVariable defineLayer(final SameDiff sd, final SDVariable input, final Map<String, SDVariable> p,
                                  final SDVariable mask) {
        final int side = imageSize / patch;
        SDVariable x = sd.reshape(input, -1, channels, side, patch, side, patch);
        x = sd.permute(x, 0, 2, 4, 1, 3, 5);
        x = sd.reshape(x, -1, patchDim());
        x = x.mmul(p.get(WEIGHT)).add(p.get(BIAS));
        x = sd.reshape(x, -1, tokens(), hidden).add(p.get(POSITION));
        return sd.reshape(x, -1, (long) tokens() * hidden);
    }

    @Override
    public void validateInput(final INDArray input) {
        ViTLayers.checkInput(input, (long) channels * imageSize * imageSize, "PatchEmbedding");
    }

    @Override
    public boolean equals(final Object o) {
        if (o == this) {
            return true;
        }
        if (!(o instanceof PatchEmbedding) || !super.equals(o)) {
            return false;
        }
        final PatchEmbedding e = (PatchEmbedding) o;
        return channels == e.channels && imageSize == e.imageSize && patch == e.patch && hidden == e.hidden;
    }

    @Override
    protected boolean canEqual(final Object other) {
        return other instanceof PatchEmbedding;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), channels, imageSize, patch, hidden);
    }
}
