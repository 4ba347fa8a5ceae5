package io.dlion;

import java.util.HashMap;
import java.util.Map;

import io.dlion.dist.ReplicaBinder;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.impl.transforms.pairwise.arithmetic.Axpy;
import org.nd4j.linalg.api.ops.impl.transforms.same.Sign;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.GradientUpdater;

/**
 * The {@link GradientUpdater} of {@link Lion}: computes Lion's step in place in the gradient view.
 * <p>
 * The step is five or six in-place ND4J ops, no temporary array (so nothing is allocated per step, in or
 * out of a workspace), and every op runs on the array's device:
 * <pre>
 *   g  = (1 - beta1) * g                      scalar multiply
 *   g  = beta1 * m + g                        Axpy: g now holds c
 *   m  = a * m          a = (beta2 - beta1) / (1 - beta1)
 *   m  = b * g + m      b = (1 - beta2) / (1 - beta1)
 *   g  = lr * sign(g)                         Sign, scalar multiply
 * </pre>
 * The momentum line is {@code beta2 * m + (1 - beta2) * g} rewritten in terms of {@code c}
 * (substitute {@code g = (c - beta1 * m) / (1 - beta1)}); it is the same value up to float rounding
 * and lets the step reuse the gradient buffer for {@code c} instead of a temporary.
 * <p>
 * <b>Distributed mode.</b> When a {@link io.dlion.dist.DLionAccumulator} binds a vote target with
 * {@link #bindVoteTarget(INDArray)} (directly, or through {@link ReplicaBinder} on a replica thread), the step writes {@code c} into that target (the worker's vote,
 * Algorithm 1 of Distributed Lion), updates {@code m} locally and leaves zero in the gradient, so that
 * what DL4J adds afterwards (decoupled weight decay) is the only term left there. The binding is run-time
 * state, never part of the JSON configuration.
 */
public final class LionUpdater implements GradientUpdater<Lion> {

    /** State key of the momentum buffer. */
    public static final String M_STATE = "M";

    private final Lion config;
    private INDArray m;
    private INDArray voteTarget;

    public LionUpdater(final Lion config) {
        this.config = config;
    }

    @Override
    public Lion getConfig() {
        return config;
    }

    @Override
    public void setState(final Map<String, INDArray> stateMap, final boolean initialize) {
        if (stateMap == null || stateMap.size() != 1 || !stateMap.containsKey(M_STATE)) {
            throw new IllegalStateException("Lion state must hold exactly the key [" + M_STATE + "], got "
                + (stateMap == null ? null : stateMap.keySet()));
        }
        final INDArray state = stateMap.get(M_STATE);
        if (state == null) {
            throw new IllegalStateException("Lion state [" + M_STATE + "] is null");
        }
        if (initialize) {
            state.assign(0);
        }
        this.m = state;
    }

    @Override
    public Map<String, INDArray> getState() {
        final Map<String, INDArray> state = new HashMap<>();
        state.put(M_STATE, m);
        return state;
    }

    @Override
    public void setStateViewArray(final INDArray viewArray, final long[] gradientShape, final char gradientOrder, final boolean initialize) {
        long expected = 1;
        for (final long d : gradientShape) {
            expected *= d;
        }
        if (viewArray.length() != expected) {
            throw new IllegalArgumentException("Lion state view has length " + viewArray.length() + ", expected " + expected);
        }
        if (initialize) {
            viewArray.assign(0);
        }
        final INDArray reshaped = viewArray.reshape(gradientOrder, gradientShape);
        this.m = reshaped;
    }

    /**
     * Bind (or, with null, unbind) the array that receives {@code c = beta1 * m + (1 - beta1) * g}
     * instead of the local update. Used by the distributed accumulator only.
     *
     * @param target an array of the block's length, or null to return to plain Lion.
     */
    public void bindVoteTarget(final INDArray target) {
        if (target != null && m != null && target.length() != m.length()) {
            throw new IllegalArgumentException("vote target length " + target.length() + " != block length " + m.length());
        }
        this.voteTarget = target;
    }

    /** @return the bound vote target, or null. */
    public INDArray voteTarget() {
        return voteTarget;
    }

    @Override
    public void applyUpdater(final INDArray gradient, final int iteration, final int epoch) {
        if (m == null) {
            throw new IllegalStateException("Lion updater has no state: setStateViewArray or setState was not called");
        }
        if (gradient.length() != m.length()) {
            throw new IllegalArgumentException("gradient length " + gradient.length() + " != state length " + m.length());
        }
        final INDArray g = gradient.shape().length == m.shape().length ? gradient : gradient.reshape(m.shape());
        final double beta1 = config.getBeta1();
        final double beta2 = config.getBeta2();
        final double oneMinusBeta1 = 1.0 - beta1;
        if (voteTarget == null) {
            voteTarget = ReplicaBinder.voteTargetFor(this, gradient);
        }

        if (voteTarget == null) {
            g.muli(oneMinusBeta1);
            Nd4j.exec(new Axpy(m, g, g, beta1));                                    // g = c
            m.muli((beta2 - beta1) / oneMinusBeta1);
            Nd4j.exec(new Axpy(g, m, m, (1.0 - beta2) / oneMinusBeta1));            // m = beta2 m + (1-beta2) g
            Nd4j.exec(new Sign(g, g));
            g.muli(config.getLearningRate(iteration, epoch));
        } else {
            final INDArray c = voteTarget.shape().length == m.shape().length ? voteTarget : voteTarget.reshape(m.shape());
            g.muli(oneMinusBeta1);
            Nd4j.exec(new Axpy(m, g, c, beta1));                                    // c = beta1 m + (1-beta1) g
            m.muli((beta2 - beta1) / oneMinusBeta1);
            Nd4j.exec(new Axpy(c, m, m, (1.0 - beta2) / oneMinusBeta1));
            g.assign(0);
        }
    }
}
