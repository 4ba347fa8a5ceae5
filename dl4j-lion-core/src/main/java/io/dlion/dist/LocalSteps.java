package io.dlion.dist;

/**
 * Local steps between votes: every worker trains {@code H} steps on its own, then D-Lion's worker step runs once on
 * the pseudo-gradient of those steps (after Yu et al., <i>Distributed Sign Momentum with Local Steps</i>,
 * arXiv 2411.17866, with D-Lion's vote as the aggregation). One outer step of worker i:
 * <pre>
 *   theta_i = theta                                       every worker starts from the shared parameters
 *   H times: theta_i = theta_i - innerUpdate               the model's own Lion updaters (state kept across outer steps)
 *   g_i     = theta - theta_i                              pseudo-gradient
 *   delta_i = sign(outerBeta1 * m_i + (1 - outerBeta1) * g_i)        sent (1 bit per parameter)
 *   m_i     = outerBeta2 * m_i + (1 - outerBeta2) * g_i               outer momentum, local, never sent
 *   Delta   = MaVo or Avg of the delta_i                              the exchange, as in per-step D-Lion
 *   theta   = theta - lr_out * (Delta + outerWeightDecay * theta)     every worker, bit-identical
 *   lr_out  = outerLrScale * H * lr_block                            lr_block: the block's Lion learning rate
 * </pre>
 * {@code H = 1} is per-step D-Lion exactly (the gradient is the vote's argument, the Lion updater's own betas and
 * learning rate and the layers' weight decay apply); the outer settings are used only when {@code H > 1}.
 * Weight decay with {@code H > 1}: give it here ({@link #outerWeightDecay}) and none in the layers, so that it
 * applies once per outer step, to the shared parameters.
 * <p>
 * Call order: construct, the fluent setters, then hand it to {@link DLion#attach(org.deeplearning4j.nn.api.Model,
 * io.dlion.exchange.VoteExchange, LocalSteps)}, {@link DLionAccumulator#forModel} or {@code DLionJob.Builder.localSteps},
 * which call {@link #conclude()}.
 */
public final class LocalSteps {
    /** Default of {@link #steps(int)}: one step per vote, per-step D-Lion. */
    public static final int STEPS_DEFAULT = 1;
    /** Default of {@link #outerLrScale(double)}: a sign step as long as H inner sign steps. */
    public static final double OUTER_LR_SCALE_DEFAULT = 1.0;
    /** Default of {@link #outerBeta1(double)} (Lion's beta1). */
    public static final double OUTER_BETA1_DEFAULT = 0.9;
    /** Default of {@link #outerBeta2(double)} (Lion's beta2). */
    public static final double OUTER_BETA2_DEFAULT = 0.99;
    /** Default of {@link #outerWeightDecay(double)}. */
    public static final double OUTER_WEIGHT_DECAY_DEFAULT = 0.0;

    private int steps = STEPS_DEFAULT;
    private double outerLrScale = OUTER_LR_SCALE_DEFAULT;
    private double outerBeta1 = OUTER_BETA1_DEFAULT;
    private double outerBeta2 = OUTER_BETA2_DEFAULT;
    private double outerWeightDecay = OUTER_WEIGHT_DECAY_DEFAULT;

    /** @return per-step D-Lion (H = 1). */
    public static LocalSteps none() {
        return new LocalSteps();
    }

    /**
     * @param steps H, the local steps per vote, >= 1.
     * @return this for a fluent API.
     */
    public LocalSteps steps(final int steps) {
        this.steps = steps;
        return this;
    }

    /**
     * @param scale lr_out = scale * H * the block's Lion learning rate at the outer step's last inner step; > 0.
     * @return this for a fluent API.
     */
    public LocalSteps outerLrScale(final double scale) {
        this.outerLrScale = scale;
        return this;
    }

    /**
     * @param beta1 the outer vote's interpolation, in [0, 1).
     * @return this for a fluent API.
     */
    public LocalSteps outerBeta1(final double beta1) {
        this.outerBeta1 = beta1;
        return this;
    }

    /**
     * @param beta2 the outer momentum's decay, in [0, 1).
     * @return this for a fluent API.
     */
    public LocalSteps outerBeta2(final double beta2) {
        this.outerBeta2 = beta2;
        return this;
    }

    /**
     * @param lambda decoupled weight decay of the outer step, >= 0.
     * @return this for a fluent API.
     */
    public LocalSteps outerWeightDecay(final double lambda) {
        this.outerWeightDecay = lambda;
        return this;
    }

    /** @return H. */
    public int steps() {
        return steps;
    }

    /** @return the outer learning rate's scale. */
    public double outerLrScale() {
        return outerLrScale;
    }

    /** @return the outer beta1. */
    public double outerBeta1() {
        return outerBeta1;
    }

    /** @return the outer beta2. */
    public double outerBeta2() {
        return outerBeta2;
    }

    /** @return the outer weight decay. */
    public double outerWeightDecay() {
        return outerWeightDecay;
    }

    /** @return true when H > 1 (votes every H steps on pseudo-gradients). */
    public boolean enabled() {
        return steps > 1;
    }

    /**
     * Validate once, naming the field.
     *
     * @return this.
     * @throws IllegalArgumentException for a value out of range.
     */
    public LocalSteps conclude() {
        require(steps >= 1, "localSteps must be >= 1, got " + steps);
        require(outerLrScale > 0 && Double.isFinite(outerLrScale), "outerLrScale must be > 0, got " + outerLrScale);
        require(outerBeta1 >= 0 && outerBeta1 < 1, "outerBeta1 must be in [0, 1), got " + outerBeta1);
        require(outerBeta2 >= 0 && outerBeta2 < 1, "outerBeta2 must be in [0, 1), got " + outerBeta2);
        require(outerWeightDecay >= 0 && Double.isFinite(outerWeightDecay), "outerWeightDecay must be >= 0, got " + outerWeightDecay);
        return this;
    }

    /** @return a copy, so that a concluded setting cannot change under a running worker. */
    LocalSteps copy() {
        return new LocalSteps().steps(steps).outerLrScale(outerLrScale).outerBeta1(outerBeta1).outerBeta2(outerBeta2)
            .outerWeightDecay(outerWeightDecay);
    }

    private static void require(final boolean ok, final String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    @Override
    public String toString() {
        return "LocalSteps{steps=" + steps + ", outerLrScale=" + outerLrScale + ", outerBeta1=" + outerBeta1 + ", outerBeta2="
            + outerBeta2 + ", outerWeightDecay=" + outerWeightDecay + '}';
    }
}
