package io.dlion.cli.vit;

import java.util.Objects;

import io.dlion.Lion;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.learning.config.IUpdater;

/**
 * The size and training settings of a {@link ViT}: an immutable value, made by {@link #builder()} (or from a
 * preset with {@link #toBuilder()}) and validated once in {@link Builder#build()}.
 * <p>
 * Images are square, {@code imageSize x imageSize} with {@code channels} channels, and arrive flat in
 * channel-major order ({@code [batch, channels * imageSize * imageSize]}, as {@code FashionMnist} and
 * {@code Cifar10} give them). They are cut into {@code (imageSize / patch)^2} patches of {@code patch x patch}
 * pixels, each embedded in {@code hidden} dimensions, and run through {@code depth} transformer blocks with
 * {@code heads} attention heads and an MLP of {@code mlpRatio * hidden} units.
 * <p>
 * Presets: {@link #paper()} (the CIFAR-10 ViT of the Distributed Lion paper, 18,978,314 parameters) and
 * {@link #tinyFashionMnist()} (a 2-block model that trains on Fashion-MNIST on a laptop CPU, 104,970 parameters).
 */
public final class ViTConfig {

    /** Learning rate of the presets' default {@link Lion} updater. */
    public static final double DEFAULT_LEARNING_RATE = 1e-4;

    private final int imageSize;
    private final int channels;
    private final int patch;
    private final int hidden;
    private final int depth;
    private final int heads;
    private final int mlpRatio;
    private final int classes;
    private final long seed;
    private final IUpdater updater;
    private final double weightDecay;
    private final DataType dataType;

    private ViTConfig(final Builder b) {
        this.imageSize = b.imageSize;
        this.channels = b.channels;
        this.patch = b.patch;
        this.hidden = b.hidden;
        this.depth = b.depth;
        this.heads = b.heads;
        this.mlpRatio = b.mlpRatio;
        this.classes = b.classes;
        this.seed = b.seed;
        this.updater = b.updater.clone();
        this.weightDecay = b.weightDecay;
        this.dataType = b.dataType;
    }

    /**
     * The CIFAR-10 ViT of Liu et al. (Distributed Lion, NeurIPS 2024): 32x32x3 images, patch 4 (64 tokens),
     * hidden 512, 6 blocks, 8 heads, MLP ratio 4, 10 classes; 18,978,314 parameters. Updater
     * {@code new Lion(1e-4)}, no weight decay, seed 42, FLOAT.
     *
     * @return the preset.
     */
    public static ViTConfig paper() {
        return builder().build();
    }

    /**
     * A small ViT of the same code for Fashion-MNIST: 28x28x1 images, patch 7 (16 tokens), hidden 64, 2 blocks,
     * 4 heads, MLP ratio 4, 10 classes; 104,970 parameters. Updater {@code new Lion(1e-4)}, no weight decay,
     * seed 42, FLOAT.
     *
     * @return the preset.
     */
    public static ViTConfig tinyFashionMnist() {
        return builder().imageSize(28).channels(1).patch(7).hidden(64).depth(2).heads(4).build();
    }

    /**
     * A builder holding the values of {@link #paper()}.
     *
     * @return a new builder.
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A builder holding this configuration's values, to derive a variant.
     *
     * @return a new builder.
     */
    public Builder toBuilder() {
        return new Builder()
            .imageSize(imageSize).channels(channels).patch(patch).hidden(hidden).depth(depth).heads(heads)
            .mlpRatio(mlpRatio).classes(classes).seed(seed).updater(updater).weightDecay(weightDecay)
            .dataType(dataType);
    }

    /** @return image height and width in pixels. */
    public int imageSize() {
        return imageSize;
    }

    /** @return colour channels of the input images. */
    public int channels() {
        return channels;
    }

    /** @return patch height and width in pixels. */
    public int patch() {
        return patch;
    }

    /** @return embedding width D of every token. */
    public int hidden() {
        return hidden;
    }

    /** @return number of transformer blocks. */
    public int depth() {
        return depth;
    }

    /** @return attention heads per block; each head has {@code hidden / heads} dimensions. */
    public int heads() {
        return heads;
    }

    /** @return MLP width as a multiple of {@link #hidden()}. */
    public int mlpRatio() {
        return mlpRatio;
    }

    /** @return number of output classes. */
    public int classes() {
        return classes;
    }

    /** @return weight-initialisation seed. */
    public long seed() {
        return seed;
    }

    /** @return a copy of the updater every parameter is trained with. */
    public IUpdater updater() {
        return updater.clone();
    }

    /** @return decoupled weight decay (DL4J {@code WeightDecay}, applyLR = true) on the weight matrices. */
    public double weightDecay() {
        return weightDecay;
    }

    /** @return data type of parameters and activations (FLOAT to train, DOUBLE for gradient checks). */
    public DataType dataType() {
        return dataType;
    }

    /** @return patches (tokens) per image: {@code (imageSize / patch)^2}. */
    public int tokens() {
        final int side = imageSize / patch;
        return side * side;
    }

    /** @return values per flattened patch: {@code channels * patch^2}. */
    public int patchDim() {
        return channels * patch * patch;
    }

    /** @return values per flattened input image: {@code channels * imageSize^2}. */
    public int inputSize() {
        return channels * imageSize * imageSize;
    }

    /** @return hidden units of each block's MLP: {@code mlpRatio * hidden}. */
    public int mlpHidden() {
        return mlpRatio * hidden;
    }

    @Override
    public boolean equals(final Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof ViTConfig)) {
            return false;
        }
        final ViTConfig c = (ViTConfig) o;
        return imageSize == c.imageSize && channels == c.channels && patch == c.patch && hidden == c.hidden
            && depth == c.depth && heads == c.heads && mlpRatio == c.mlpRatio && classes == c.classes
            && seed == c.seed && Double.compare(weightDecay, c.weightDecay) == 0 && updater.equals(c.updater)
            && dataType == c.dataType;
    }

    @Override
    public int hashCode() {
        return Objects.hash(imageSize, channels, patch, hidden, depth, heads, mlpRatio, classes, seed, updater,
            weightDecay, dataType);
    }

    @Override
    public String toString() {
        return "ViTConfig{image=" + imageSize + "x" + imageSize + "x" + channels + ", patch=" + patch
            + ", hidden=" + hidden + ", depth=" + depth + ", heads=" + heads + ", mlpRatio=" + mlpRatio
            + ", classes=" + classes + ", seed=" + seed + ", updater=" + updater + ", weightDecay=" + weightDecay
            + ", dataType=" + dataType + "}";
    }

    /** Fluent builder of a {@link ViTConfig}; starts from the values of {@link ViTConfig#paper()}. */
    public static final class Builder {
        private int imageSize = 32;
        private int channels = 3;
        private int patch = 4;
        private int hidden = 512;
        private int depth = 6;
        private int heads = 8;
        private int mlpRatio = 4;
        private int classes = 10;
        private long seed = 42;
        private IUpdater updater = new Lion(DEFAULT_LEARNING_RATE);
        private double weightDecay;
        private DataType dataType = DataType.FLOAT;

        private Builder() {
        }

        /**
         * @param imageSize image height and width in pixels, a multiple of {@link #patch(int)}.
         * @return this for a fluent API.
         */
        public Builder imageSize(final int imageSize) {
            this.imageSize = imageSize;
            return this;
        }

        /**
         * @param channels colour channels of the input images (3 for CIFAR-10, 1 for Fashion-MNIST).
         * @return this for a fluent API.
         */
        public Builder channels(final int channels) {
            this.channels = channels;
            return this;
        }

        /**
         * @param patch patch height and width in pixels.
         * @return this for a fluent API.
         */
        public Builder patch(final int patch) {
            this.patch = patch;
            return this;
        }

        /**
         * @param hidden embedding width D, a multiple of {@link #heads(int)}.
         * @return this for a fluent API.
         */
        public Builder hidden(final int hidden) {
            this.hidden = hidden;
            return this;
        }

        /**
         * @param depth number of transformer blocks.
         * @return this for a fluent API.
         */
        public Builder depth(final int depth) {
            this.depth = depth;
            return this;
        }

        /**
         * @param heads attention heads per block.
         * @return this for a fluent API.
         */
        public Builder heads(final int heads) {
            this.heads = heads;
            return this;
        }

        /**
         * @param mlpRatio MLP width as a multiple of the hidden width.
         * @return this for a fluent API.
         */
        public Builder mlpRatio(final int mlpRatio) {
            this.mlpRatio = mlpRatio;
            return this;
        }

        /**
         * @param classes number of output classes, at least 2.
         * @return this for a fluent API.
         */
        public Builder classes(final int classes) {
            this.classes = classes;
            return this;
        }

        /**
         * @param seed weight-initialisation seed.
         * @return this for a fluent API.
         */
        public Builder seed(final long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * @param updater updater of every parameter ({@code new Lion(lr)}, {@code new AdamW(...)}, ...); copied.
         * @return this for a fluent API.
         */
        public Builder updater(final IUpdater updater) {
            this.updater = updater;
            return this;
        }

        /**
         * @param weightDecay decoupled weight decay coefficient λ (update += lr·λ·θ) on the weight matrices of every
         *                    layer; not on biases, LayerNorm gains or the position embedding. 0 for none.
         * @return this for a fluent API.
         */
        public Builder weightDecay(final double weightDecay) {
            this.weightDecay = weightDecay;
            return this;
        }

        /**
         * @param dataType FLOAT, DOUBLE or HALF.
         * @return this for a fluent API.
         */
        public Builder dataType(final DataType dataType) {
            this.dataType = dataType;
            return this;
        }

        /**
         * Validates and builds.
         *
         * @return the configuration.
         * @throws IllegalArgumentException naming the first field with a bad value.
         */
        public ViTConfig build() {
            positive("imageSize", imageSize);
            positive("channels", channels);
            positive("patch", patch);
            positive("hidden", hidden);
            positive("depth", depth);
            positive("heads", heads);
            positive("mlpRatio", mlpRatio);
            if (imageSize % patch != 0) {
                throw new IllegalArgumentException("imageSize (" + imageSize + ") must be a multiple of patch (" + patch + ")");
            }
            if (hidden % heads != 0) {
                throw new IllegalArgumentException("hidden (" + hidden + ") must be a multiple of heads (" + heads + ")");
            }
            if (classes < 2) {
                throw new IllegalArgumentException("classes must be at least 2: " + classes);
            }
            if (updater == null) {
                throw new IllegalArgumentException("updater must not be null");
            }
            if (!(weightDecay >= 0.0) || Double.isInfinite(weightDecay)) {
                throw new IllegalArgumentException("weightDecay must be finite and >= 0: " + weightDecay);
            }
            if (dataType == null || !dataType.isFPType()) {
                throw new IllegalArgumentException("dataType must be a floating-point type: " + dataType);
            }
            final long inputSize = (long) channels * imageSize * imageSize;
            if (inputSize > Integer.MAX_VALUE || (long) mlpRatio * hidden > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("imageSize/channels or mlpRatio/hidden too large: input " + inputSize
                    + ", MLP " + (long) mlpRatio * hidden);
            }
            return new ViTConfig(this);
        }

        private static void positive(final String field, final int value) {
            if (value <= 0) {
                throw new IllegalArgumentException(field + " must be positive: " + value);
            }
        }
    }
}
