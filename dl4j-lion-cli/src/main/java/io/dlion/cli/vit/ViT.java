package io.dlion.cli.vit;

import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.weights.WeightInit;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * A Vision Transformer (Dosovitskiy et al., ICLR 2021, arXiv 2010.11929) as a DL4J {@link MultiLayerNetwork} of
 * custom {@code SameDiffLayer}s, so that it trains through DL4J's flat parameter and gradient views: its updater
 * blocks, gradient accumulators ({@code setGradientsAccumulator}) and {@code ParallelWrapper} all see one
 * ordinary network.
 * <pre>
 * layer 0          {@link PatchEmbedding}    [batch, C*S*S] → [batch, N*D]   patches·W + b + pos
 * layers 1..L      {@link TransformerBlock}  [batch, N*D]   → [batch, N*D]   pre-LN MHSA and GELU MLP, residuals
 * layer L+1        {@link TokenPooling}      [batch, N*D]   → [batch, D]     final LayerNorm, mean over tokens
 * layer L+2        OutputLayer               [batch, D]     → [batch, K]     softmax, multi-class cross-entropy
 * </pre>
 * Input is the flat image in channel-major order, exactly as {@code FashionMnist.load} and {@code Cifar10.load}
 * return it, so one {@code DataSet} feeds both an MLP and this model; labels are one-hot {@code [batch, K]}.
 * <p>
 * Parameters, with N = (S/p)², M = mlpRatio·D, K classes:
 * <pre>
 * P = (C·p² + 1)·D  +  N·D  +  L·(4D² + 2D·M + 9D + M)  +  2D  +  (D + 1)·K
 * </pre>
 * {@link ViTConfig#paper()}: 18,978,314. {@link ViTConfig#tinyFashionMnist()}: 104,970.
 * <p>
 * Weight decay is set per layer, never globally (DL4J 1.0.0-M2.1 applies a global {@code weightDecay} twice):
 * on the weight matrices only — not on biases, LayerNorm gains and shifts, or the position embedding.
 */
public final class ViT {

    private ViT() {
    }

    /**
     * @param config the model's size and training settings.
     * @return a new, initialised network.
     */
    public static MultiLayerNetwork build(final ViTConfig config) {
        final MultiLayerNetwork net = new MultiLayerNetwork(configuration(config));
        net.init();
        return net;
    }

    /**
     * @param config the model's size and training settings.
     * @return the network configuration (JSON round trip exact, as {@code ParallelWrapper} needs).
     */
    public static MultiLayerConfiguration configuration(final ViTConfig config) {
        final int tokens = config.tokens();
        final int hidden = config.hidden();
        final double wd = config.weightDecay();
        final NeuralNetConfiguration.ListBuilder list = new NeuralNetConfiguration.Builder()
            .seed(config.seed())
            .dataType(config.dataType())
            .updater(config.updater())
            .list();
        int index = 0;
        final PatchEmbedding embedding = new PatchEmbedding(config.channels(), config.imageSize(), config.patch(), hidden, wd);
        embedding.setLayerName("patch-embedding");
        list.layer(index++, embedding);
        for (int b = 0; b < config.depth(); b++) {
            final TransformerBlock block = new TransformerBlock(tokens, hidden, config.heads(), config.mlpHidden(), wd);
            block.setLayerName("block-" + b);
            list.layer(index++, block);
        }
        final TokenPooling pooling = new TokenPooling(tokens, hidden);
        pooling.setLayerName("final-norm-pool");
        list.layer(index++, pooling);
        list.layer(index, new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT)
            .name("head")
            .nIn(hidden)
            .nOut(config.classes())
            .activation(Activation.SOFTMAX)
            .weightInit(WeightInit.XAVIER)
            .weightDecay(wd)
            .build());
        return list.setInputType(InputType.feedForward(config.inputSize())).build();
    }

    /**
     * The closed-form parameter count (see the class comment); equals {@code build(config).numParams()}.
     *
     * @param config the model's size.
     * @return number of trainable parameters.
     */
    public static long parameterCount(final ViTConfig config) {
        final long d = config.hidden();
        final long embedding = ((long) config.patchDim() + 1) * d + (long) config.tokens() * d;
        final long blocks = config.depth() * TransformerBlock.parameterCount(d, config.mlpHidden());
        final long head = 2 * d + (d + 1) * config.classes();
        return embedding + blocks + head;
    }
}
