package io.dlion.cli.vit;

import java.util.Collection;
import java.util.Map;
import java.util.Objects;

import org.deeplearning4j.nn.api.Layer;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.samediff.SDLayerParams;
import org.deeplearning4j.nn.conf.layers.samediff.SameDiffLayer;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.nd4j.autodiff.samediff.SDVariable;
import org.nd4j.autodiff.samediff.SameDiff;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.shade.jackson.annotation.JsonProperty;

/**
 * The end of a {@link ViT}'s encoder: the final LayerNorm on every token, then the mean over the tokens
 * (global average pooling instead of a class token).
 * <pre>
 * input  [batch, N*D]  →  LN(token) for each of the N tokens  →  mean over tokens  →  output [batch, D]
 * </pre>
 * Parameters (DL4J bias parameters, so no weight decay): LayerNorm gain {@code g [D]} (ones) and shift
 * {@code b [D]} (zeros).
 */
public final class TokenPooling extends SameDiffLayer {

    /** LayerNorm gain key. */
    public static final String GAIN = "g";
    /** LayerNorm shift key. */
    public static final String SHIFT = "b";

    @JsonProperty
    private int tokens;
    @JsonProperty
    private int hidden;

    /**
     * @param tokens tokens N per example.
     * @param hidden token width D.
     */
    public TokenPooling(final int tokens, final int hidden) {
        if (tokens <= 0 || hidden <= 0) {
            throw new IllegalArgumentException("token pooling needs positive sizes: tokens=" + tokens + " hidden=" + hidden);
        }
        this.tokens = tokens;
        this.hidden = hidden;
        ViTLayers.weightDecayOnWeights(this, 0.0);
    }

    private TokenPooling() {
    }

    @Override
    public Layer instantiate(final NeuralNetConfiguration conf, final Collection<TrainingListener> listeners,
                             final int layerIndex, final INDArray paramsView, final boolean initializeParams,
                             final DataType dataType) {
        return CorrectedSameDiffLayer.instantiate(conf, listeners, layerIndex, paramsView, initializeParams, dataType);
    }

    @Override
    public InputType getOutputType(final int layerIndex, final InputType inputType) {
        ViTLayers.checkFeedForward(inputType, (long) tokens * hidden, "TokenPooling", layerIndex);
        return InputType.feedForward(hidden);
    }

    @Override
    public void defineParameters(final SDLayerParams params) {
        params.clear();
        params.addBiasParam(GAIN, hidden);
        params.addBiasParam(SHIFT, hidden);
    }

    @Override
    public void initializeParameters(final Map<String, INDArray> params) {
        params.get(GAIN).assign(1);
        params.get(SHIFT).assign(0);
    }

    @Override
    public SDVariable defineLayer(final SameDiff sd, final SDVariable input, final Map<String, SDVariable> p,
                                  final SDVariable mask) {
        final SDVariable normed = ViTLayers.layerNorm(sd, sd.reshape(input, -1, hidden), p.get(GAIN), p.get(SHIFT));
        return sd.reshape(normed, -1, tokens, hidden).mean(false, 1);
    }

    @Override
    public void validateInput(final INDArray input) {
        ViTLayers.checkInput(input, (long) tokens * hidden, "TokenPooling");
    }

    @Override
    public boolean equals(final Object o) {
        if (o == this) {
            return true;
        }
        if (!(o instanceof TokenPooling) || !super.equals(o)) {
            return false;
        }
        final TokenPooling t = (TokenPooling) o;
        return tokens == t.tokens && hidden == t.hidden;
    }

    @Override
    protected boolean canEqual(final Object other) {
        return other instanceof TokenPooling;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), tokens, hidden);
    }
}
