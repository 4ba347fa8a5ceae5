package io.dlion;

import java.util.HashMap;
import java.util.Map;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.impl.scalar.ScalarMultiplication;
import org.nd4j.linalg.api.ops.impl.transforms.pairwise.arithmetic.Axpy;
import org.nd4j.linalg.api.ops.impl.transforms.same.Sign;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.GradientUpdater;

import io.dlion.codec.BlasSlices;

/**
 * The {@link GradientUpdater} of {@link Lion}: computes Lion's step in place in the gradient view.
 * <p>
 * On ND4J's CPU backend, FLOAT and DOUBLE steps on contiguous arrays run as one fused loop over the host buffers,
 * split over the cores ({@code LionHostStep}): it reads g and m and writes g and m once each, computes the values
 * below with fused multiply-adds, keeps NaN as NaN ({@code sign(NaN) = NaN}) and allocates nothing per step.
 * Everything else (the CUDA backend, HALF, strided views) runs five in-place ND4J operations, no temporary array
 * (so nothing is allocated per step, in or out of a workspace), every one on the array's device:
 * <pre>
 *   g  = k * m + g            BLAS axpy, k = beta1 / (1 - beta1): g now holds c' = c / (1 - beta1)
 *   m  = a * m                scalar multiply, a = beta2 - (1 - beta2) * k
 *   m  = (1 - beta2) * g + m  BLAS axpy: m is now beta2 * m + (1 - beta2) * (the original g)
 *   g  = lr * sign(g)         Sign, scalar multiply
 * </pre>
 * {@code c'} is {@code c} scaled by the positive {@code 1 / (1 - beta1)}, so it has the same sign, and the
 * momentum line is {@code beta2 * m + (1 - beta2) * g} rewritten in terms of {@code c'}: the same value up to
 * float rounding (for beta1 &gt; beta2, a &lt; 0 and the rounding error grows by about beta1 / (1 - beta1)
 * ulps). This lets the step reuse the gradient buffer instead of a temporary. The axpy lines use the BLAS
 * routine (OpenBLAS on CPU, cuBLAS on CUDA) for FLOAT and DOUBLE, cut into slices of at most 2^30 elements
 * ({@link BlasSlices}: ND4J's wrapper passes the length as an {@code int}), several times faster than ND4J's legacy
 * {@code Axpy} op, which remains for other types. {@code sign(0) = 0}, as in every reference implementation;
 * ND4J's {@code Sign} maps NaN to 0 on this path.
 * <p>
 * <b>Distributed mode.</b> When a {@link io.dlion.dist.DLionAccumulator} binds a vote target with
 * {@link #bindVoteTarget(INDArray)} (for its own model, or for a ParallelWrapper replica when the replica's thread starts), the
 * step writes {@code c'} into that target (its sign is the worker's vote of Algorithm 1 of Distributed
 * Lion), updates {@code m} locally and leaves zero in the gradient, so that
 * what DL4J adds afterwards (decoupled weight decay) is the only term left there. The binding is run-time
 * state, never part of the JSON configuration.
 */
public final class LionUpdater implements GradientUpdater<Lion> {

    /** State key of the momentum buffer. */
    public static final String M_STATE = "M";

    /** Elements per BLAS call on the ND4J path; a test seam (set small to compare against one call). */
    static long blasSlice = BlasSlices.MAX_SLICE;
    /** Whether the fused host step may run; a test seam (false forces the ND4J path on the CPU backend). */
    static boolean hostStepAllowed = true;

    private final Lion config;
    private INDArray m;
    private INDArray voteTarget;
    private LionHostStep hostStep;

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
        final double k = beta1 / (1.0 - beta1);
        final double a = beta2 - (1.0 - beta2) * k;
        final INDArray c = voteTarget == null || voteTarget.shape().length == m.shape().length ? voteTarget : voteTarget.reshape(m.shape());
        if (hostStepAllowed && LionHostStep.supports(g, m, c)) {
            hostStep().step(g, m, c, k, a, 1.0 - beta2, config.getLearningRate(iteration, epoch));
            return;
        }
        axpy(k, m, g);                                                              // g = c' = c / (1 - beta1)
        Nd4j.exec(new ScalarMultiplication(m, null, m, a));
        axpy(1.0 - beta2, g, m);                                                    // m = beta2 m + (1 - beta2) g
        if (c == null) {
            Nd4j.exec(new Sign(g, g));
            Nd4j.exec(new ScalarMultiplication(g, null, g, config.getLearningRate(iteration, epoch)));
        } else {
            c.assign(g);                                                            // the vote argument
            g.assign(0);
        }
    }

    private LionHostStep hostStep() {
        if (hostStep == null) {
            hostStep = new LionHostStep();
        }
        return hostStep;
    }

    /** y += alpha * x, in place: BLAS for FLOAT/DOUBLE contiguous arrays, ND4J's Axpy op otherwise. */
    private static void axpy(final double alpha, final INDArray x, final INDArray y) {
        final DataType type = x.dataType();
        if ((type == DataType.FLOAT || type == DataType.DOUBLE) && y.dataType() == type
            && x.elementWiseStride() == 1 && y.elementWiseStride() == 1 && x.ordering() == y.ordering()) {
            BlasSlices.axpy(alpha, x, y, blasSlice);
        } else {
            Nd4j.exec(new Axpy(x, y, y, alpha));
        }
    }
}
