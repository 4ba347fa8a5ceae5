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
import org.nd4j.shade.jackson.annotation.JsonProperty;

/**
 * One pre-LayerNorm transformer encoder block of a {@link ViT}, on N tokens of width D with H heads:
 * <pre>
 * x = x + MHSA(LN1(x))                 MHSA: q,k,v = h·Wq+bq, h·Wk+bk, h·Wv+bv, split into H heads of D/H;
 *                                            a = softmax(q·kᵀ / sqrt(D/H)) per head; out = concat(a·v)·Wo + bo
 * x = x + W2·GELU(W1·LN2(x) + b1) + b2  MLP D → M → D
 * </pre>
 * Input and output are flat {@code [batch, N*D]} (tokens row-major), so the block is an ordinary feed-forward
 * DL4J layer and sits in a {@code MultiLayerNetwork}. GELU is the tanh approximation
 * {@code 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³)))}, written with elementary ops so that SameDiff
 * differentiates it exactly. LayerNorm uses ε = 1e-5.
 * <p>
 * Weight parameters (Xavier, weight decay applies): {@code Wq, Wk, Wv, Wo [D, D]}, {@code W1 [D, M]},
 * {@code W2 [M, D]}. Bias parameters (no weight decay): {@code bq, bk, bv, bo, b2 [D]}, {@code b1 [M]} (zeros),
 * LayerNorm gains {@code ln1g, ln2g [D]} (ones) and shifts {@code ln1b, ln2b [D]} (zeros).
 * Parameters: {@code 4D² + 2DM + 9D + M}.
 */
public final class TransformerBlock extends SameDiffLayer {

    private static final String[] ATTENTION_WEIGHTS = {"Wq", "Wk", "Wv", "Wo"};
    private static final String[] ZERO_INIT = {"ln1b", "bq", "bk", "bv", "bo", "ln2b", "b1", "b2"};
    private static final double GELU_C = Math.sqrt(2.0 / Math.PI);
    private static final double GELU_A = 0.044715;

    @JsonProperty
    private int tokens;
    @JsonProperty
    private int hidden;
    @JsonProperty
    private int heads;
    @JsonProperty
    private int mlpHidden;

    /**
     * @param tokens      tokens N per example.
     * @param hidden      token width D, a multiple of {@code heads}.
     * @param heads       attention heads H.
     * @param mlpHidden   MLP width M.
     * @param weightDecay decoupled weight decay on the six weight matrices (0 for none).
     */
    public TransformerBlock(final int tokens, final int hidden, final int heads, final int mlpHidden,
                            final double weightDecay) {
        if (tokens <= 0 || hidden <= 0 || heads <= 0 || mlpHidden <= 0 || hidden % heads != 0) {
            throw new IllegalArgumentException("transformer block needs positive sizes and hidden a multiple of heads: tokens="
                + tokens + " hidden=" + hidden + " heads=" + heads + " mlpHidden=" + mlpHidden);
        }
        this.tokens = tokens;
        this.hidden = hidden;
        this.heads = heads;
        this.mlpHidden = mlpHidden;
        ViTLayers.weightDecayOnWeights(this, weightDecay);
    }

    private TransformerBlock() {
    }

    /**
     * @param hidden    token width D.
     * @param mlpHidden MLP width M.
     * @return parameters of one block: {@code 4D² + 2DM + 9D + M}.
     */
    public static long parameterCount(final long hidden, final long mlpHidden) {
        return 4 * hidden * hidden + 2 * hidden * mlpHidden + 9 * hidden + mlpHidden;
    }

    @Override
    public Layer instantiate(final NeuralNetConfiguration conf, final Collection<TrainingListener> listeners,
                             final int layerIndex, final INDArray paramsView, final boolean initializeParams,
                             final DataType dataType) {
        return CorrectedSameDiffLayer.instantiate(conf, listeners, layerIndex, paramsView, initializeParams, dataType);
    }

    @Override
    public InputType getOutputType(final int layerIndex, final InputType inputType) {
        ViTLayers.checkFeedForward(inputType, (long) tokens * hidden, "TransformerBlock", layerIndex);
        return InputType.feedForward((long) tokens * hidden);
    }

    @Override
    public void defineParameters(final SDLayerParams params) {
        params.clear();
        for (final String w : ATTENTION_WEIGHTS) {
            params.addWeightParam(w, hidden, hidden);
        }
        params.addWeightParam("W1", hidden, mlpHidden);
        params.addWeightParam("W2", mlpHidden, hidden);
        params.addBiasParam("ln1g", hidden);
        params.addBiasParam("ln1b", hidden);
        params.addBiasParam("bq", hidden);
        params.addBiasParam("bk", hidden);
        params.addBiasParam("bv", hidden);
        params.addBiasParam("bo", hidden);
        params.addBiasParam("ln2g", hidden);
        params.addBiasParam("ln2b", hidden);
        params.addBiasParam("b1", mlpHidden);
        params.addBiasParam("b2", hidden);
    }

    @Override
    public void initializeParameters(final Map<String, INDArray> params) {
        for (final String w : ATTENTION_WEIGHTS) {
            initWeights(hidden, hidden, WeightInit.XAVIER, params.get(w));
        }
        initWeights(hidden, mlpHidden, WeightInit.XAVIER, params.get("W1"));
        initWeights(mlpHidden, hidden, WeightInit.XAVIER, params.get("W2"));
        for (final String b : ZERO_INIT) {
            params.get(b).assign(0);
        }
        params.get("ln1g").assign(1);
        params.get("ln2g").assign(1);
    }

    @Override
    public SDVariable defineLayer(final SameDiff sd, final SDVariable input, final Map<String, SDVariable> p,
                                  final SDVariable mask) {
        final SDVariable x = sd.reshape(input, -1, hidden);
        final SDVariable h1 = ViTLayers.layerNorm(sd, x, p.get("ln1g"), p.get("ln1b"));
        final SDVariable q = splitHeads(sd, h1.mmul(p.get("Wq")).add(p.get("bq")));
        final SDVariable k = splitHeads(sd, h1.mmul(p.get("Wk")).add(p.get("bk")));
        final SDVariable v = splitHeads(sd, h1.mmul(p.get("Wv")).add(p.get("bv")));
        final SDVariable scores = sd.mmul(q, k, false, true, false).mul(1.0 / Math.sqrt((double) hidden / heads));
        final SDVariable attention = sd.nn.softmax(scores, 2);
        final SDVariable merged = mergeHeads(sd, sd.mmul(attention, v));
        final SDVariable x1 = x.add(merged.mmul(p.get("Wo")).add(p.get("bo")));

        final SDVariable h2 = ViTLayers.layerNorm(sd, x1, p.get("ln2g"), p.get("ln2b"));
        final SDVariable m = gelu(sd, h2.mmul(p.get("W1")).add(p.get("b1"))).mmul(p.get("W2")).add(p.get("b2"));
        return sd.reshape(x1.add(m), -1, (long) tokens * hidden);
    }

    /** [batch*N, D] to [batch*H, N, D/H]. */
    private SDVariable splitHeads(final SameDiff sd, final SDVariable x) {
        final int headDim = hidden / heads;
        final SDVariable r = sd.permute(sd.reshape(x, -1, tokens, heads, headDim), 0, 2, 1, 3);
        return sd.reshape(r, -1, tokens, headDim);
    }

    /** [batch*H, N, D/H] to [batch*N, D]. */
    private SDVariable mergeHeads(final SameDiff sd, final SDVariable x) {
        final int headDim = hidden / heads;
        final SDVariable r = sd.permute(sd.reshape(x, -1, heads, tokens, headDim), 0, 2, 1, 3);
        return sd.reshape(r, -1, hidden);
    }

    private static SDVariable gelu(final SameDiff sd, final SDVariable x) {
        final SDVariable inner = x.add(x.mul(x).mul(x).mul(GELU_A)).mul(GELU_C);
        return x.mul(sd.math.tanh(inner).add(1.0)).mul(0.5);
    }

    @Override
    public void validateInput(final INDArray input) {
        ViTLayers.checkInput(input, (long) tokens * hidden, "TransformerBlock");
    }

    @Override
    public boolean equals(final Object o) {
        if (o == this) {
            return true;
        }
        if (!(o instanceof TransformerBlock) || !super.equals(o)) {
            return false;
        }
        final TransformerBlock b = (TransformerBlock) o;
        return tokens == b.tokens && hidden == b.hidden && heads == b.heads && mlpHidden == b.mlpHidden;
    }

    @Override
    protected boolean canEqual(final Object other) {
        return other instanceof TransformerBlock;
    }

    @Override
    public int hashCode() {
        return Objects.hash(super.hashCode(), tokens, hidden, heads, mlpHidden);
    }
}
