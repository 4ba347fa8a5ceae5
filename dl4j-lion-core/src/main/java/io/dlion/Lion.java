package io.dlion;

import java.util.Map;
import java.util.Objects;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.learning.GradientUpdater;
import org.nd4j.linalg.learning.config.IUpdater;
import org.nd4j.linalg.schedule.ISchedule;
import org.nd4j.shade.jackson.annotation.JsonCreator;
import org.nd4j.shade.jackson.annotation.JsonProperty;

/**
 * The Lion optimizer ("EvoLved Sign Momentum") as a DL4J {@link IUpdater}: Chen et al.,
 * <i>Symbolic Discovery of Optimization Algorithms</i>, arXiv 2302.06675.
 * <p>
 * Per parameter, with DL4J's sign convention {@code params -= update}:
 * <pre>
 *   c      = beta1 * m + (1 - beta1) * g
 *   update = lr * sign(c)                  (sign(0) = 0)
 *   m      = beta2 * m + (1 - beta2) * g   (after the sign, with beta2)
 * </pre>
 * Decoupled weight decay ({@code update += lr * lambda * theta}) comes from DL4J's per-layer
 * {@code .weightDecay(lambda)}, which DL4J applies after the updater. Configure it per layer: the
 * global {@code NeuralNetConfiguration.Builder.weightDecay(...)} of DL4J 1.0.0-M2.1 is applied twice.
 * <p>
 * The state is one buffer {@code M} of the gradient's size ({@code stateSize(n) == n}; Adam needs 2n).
 * Lion's update has the same magnitude for every parameter, so it wants a learning rate 3-10x smaller
 * than AdamW's and a weight decay 3-10x larger.
 * <p>
 * Usage: {@code new NeuralNetConfiguration.Builder().updater(new Lion(1e-4))...}
 */
public final class Lion implements IUpdater {

    private static final long serialVersionUID = 1L;

    public static final double DEFAULT_LEARNING_RATE = 1e-4;
    public static final double DEFAULT_BETA1 = 0.9;
    public static final double DEFAULT_BETA2 = 0.99;

    private double learningRate;
    private ISchedule learningRateSchedule;
    private double beta1;
    private double beta2;

    /** Lion with the defaults: lr 1e-4, beta1 0.9, beta2 0.99. */
    public Lion() {
        this(DEFAULT_LEARNING_RATE, null, DEFAULT_BETA1, DEFAULT_BETA2);
    }

    /** @param learningRate fixed learning rate, &gt; 0. */
    public Lion(final double learningRate) {
        this(learningRate, null, DEFAULT_BETA1, DEFAULT_BETA2);
    }

    /** @param learningRateSchedule learning rate as a function of iteration and epoch. */
    public Lion(final ISchedule learningRateSchedule) {
        this(Double.NaN, Objects.requireNonNull(learningRateSchedule, "learningRateSchedule"), DEFAULT_BETA1, DEFAULT_BETA2);
    }

    /**
     * @param learningRate fixed learning rate, &gt; 0.
     * @param beta1        interpolation factor of the sign's argument, in [0, 1).
     * @param beta2        momentum decay, in [0, 1).
     */
    public Lion(final double learningRate, final double beta1, final double beta2) {
        this(learningRate, null, beta1, beta2);
    }

    @JsonCreator
    private Lion(
        @JsonProperty("learningRate") final double learningRate,
        @JsonProperty("learningRateSchedule") final ISchedule learningRateSchedule,
        @JsonProperty("beta1") final double beta1,
        @JsonProperty("beta2") final double beta2) {
        validateLearningRate(learningRate, learningRateSchedule);
        validateBeta("beta1", beta1);
        validateBeta("beta2", beta2);
        this.learningRate = learningRate;
        this.learningRateSchedule = learningRateSchedule;
        this.beta1 = beta1;
        this.beta2 = beta2;
    }

    /** @return a builder starting from the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    private static void validateLearningRate(final double learningRate, final ISchedule schedule) {
        if (schedule == null && !(learningRate > 0 && Double.isFinite(learningRate))) {
            throw new IllegalArgumentException("learningRate must be finite and > 0 (or give a learningRateSchedule), got " + learningRate);
        }
        if (schedule != null && !Double.isNaN(learningRate) && !(learningRate > 0 && Double.isFinite(learningRate))) {
            throw new IllegalArgumentException("learningRate must be finite and > 0, got " + learningRate);
        }
    }

    private static void validateBeta(final String name, final double beta) {
        if (!(beta >= 0 && beta < 1)) {
            throw new IllegalArgumentException(name + " must be in [0, 1), got " + beta);
        }
    }

    public double getBeta1() {
        return beta1;
    }

    public double getBeta2() {
        return beta2;
    }

    /** @return the fixed learning rate, NaN when a schedule is set. */
    public double getLearningRate() {
        return learningRate;
    }

    /** @return the learning-rate schedule, or null. */
    public ISchedule getLearningRateSchedule() {
        return learningRateSchedule;
    }

    @Override
    public long stateSize(final long numParams) {
        return numParams;
    }

    @Override
    public GradientUpdater<Lion> instantiate(final INDArray viewArray, final boolean initializeViewArray) {
        final LionUpdater updater = new LionUpdater(this);
        final INDArray flat = viewArray.reshape(viewArray.length());
        updater.setStateViewArray(flat, flat.shape(), flat.ordering(), initializeViewArray);
        return updater;
    }

    @Override
    public GradientUpdater<Lion> instantiate(final Map<String, INDArray> updaterState, final boolean initializeStateArrays) {
        final LionUpdater updater = new LionUpdater(this);
        updater.setState(updaterState, initializeStateArrays);
        return updater;
    }

    @Override
    public Lion clone() {
        return new Lion(learningRate, learningRateSchedule == null ? null : learningRateSchedule.clone(), beta1, beta2);
    }

    @Override
    public double getLearningRate(final int iteration, final int epoch) {
        return learningRateSchedule != null ? learningRateSchedule.valueAt(iteration, epoch) : learningRate;
    }

    @Override
    public boolean hasLearningRate() {
        return true;
    }

    @Override
    public void setLrAndSchedule(final double lr, final ISchedule lrSchedule) {
        validateLearningRate(lr, lrSchedule);
        this.learningRate = lr;
        this.learningRateSchedule = lrSchedule;
    }

    @Override
    public boolean equals(final Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof Lion)) {
            return false;
        }
        final Lion that = (Lion) o;
        return Double.compare(learningRate, that.learningRate) == 0
            && Double.compare(beta1, that.beta1) == 0
            && Double.compare(beta2, that.beta2) == 0
            && Objects.equals(learningRateSchedule, that.learningRateSchedule);
    }

    @Override
    public int hashCode() {
        return Objects.hash(learningRate, learningRateSchedule, beta1, beta2);
    }

    @Override
    public String toString() {
        return "Lion(learningRate=" + learningRate + ", learningRateSchedule=" + learningRateSchedule
            + ", beta1=" + beta1 + ", beta2=" + beta2 + ")";
    }

    /** Fluent builder; {@link #build()} validates every field. */
    public static final class Builder {
        private double learningRate = DEFAULT_LEARNING_RATE;
        private ISchedule learningRateSchedule;
        private double beta1 = DEFAULT_BETA1;
        private double beta2 = DEFAULT_BETA2;

        public Builder() {
        }

        /**
         * @param learningRate fixed learning rate, &gt; 0.
         * @return this for a fluent API.
         */
        public Builder learningRate(final double learningRate) {
            this.learningRate = learningRate;
            return this;
        }

        /**
         * @param learningRateSchedule schedule that overrides the fixed learning rate.
         * @return this for a fluent API.
         */
        public Builder learningRateSchedule(final ISchedule learningRateSchedule) {
            this.learningRateSchedule = learningRateSchedule;
            return this;
        }

        /**
         * @param beta1 interpolation factor of the sign's argument, in [0, 1).
         * @return this for a fluent API.
         */
        public Builder beta1(final double beta1) {
            this.beta1 = beta1;
            return this;
        }

        /**
         * @param beta2 momentum decay, in [0, 1).
         * @return this for a fluent API.
         */
        public Builder beta2(final double beta2) {
            this.beta2 = beta2;
            return this;
        }

        /** @return the validated configuration. */
        public Lion build() {
            return new Lion(learningRateSchedule != null ? Double.NaN : learningRate, learningRateSchedule, beta1, beta2);
        }
    }
}
