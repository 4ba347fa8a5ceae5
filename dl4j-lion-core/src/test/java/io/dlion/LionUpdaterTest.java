package io.dlion;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;
import org.nd4j.linalg.learning.GradientUpdater;
import org.nd4j.linalg.schedule.ISchedule;
import org.nd4j.linalg.schedule.ScheduleType;
import org.nd4j.linalg.schedule.StepSchedule;

class LionUpdaterTest {

    @SuppressWarnings("deprecation") // DataType.HALF: the half-precision type DL4J's networks are configured with
    enum Type {
        FLOAT(DataType.FLOAT, 1e-6), DOUBLE(DataType.DOUBLE, 1e-13), HALF(DataType.HALF, 2e-3);
        final DataType dataType;
        final double relTol;

        Type(final DataType dataType, final double relTol) {
            this.dataType = dataType;
            this.relTol = relTol;
        }
    }

    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldMatchDoubleReferenceOverSeveralSteps(final Type type) {
        final int n = 1037;
        final double lr = 3e-4;
        final double beta1 = 0.9;
        final double beta2 = 0.99;
        final Lion lion = new Lion(lr, beta1, beta2);
        final INDArray state = Nd4j.create(type.dataType, 1, n);
        final GradientUpdater<Lion> updater = lion.instantiate(state, true);

        final double[] mRef = new double[n];
        final double[] c = new double[n];
        final Random random = new Random(42);
        int checked = 0;
        for (int step = 0; step < 8; step++) {
            final double[] g = new double[n];
            for (int i = 0; i < n; i++) {
                g[i] = random.nextGaussian() * (1 + i % 7);
            }
            // the reference sees exactly the values the array holds after the cast to its type
            final INDArray grad = Nd4j.createFromArray(g).castTo(type.dataType);
            final double[] gCast = grad.toDoubleVector();
            final double[] expected = LionReference.step(gCast, mRef, lr, beta1, beta2, c);

            updater.applyUpdater(grad, step, 0);

            final double[] actual = grad.toDoubleVector();
            final double[] mActual = updater.getState().get(LionUpdater.M_STATE).toDoubleVector();
            for (int i = 0; i < n; i++) {
                final double scale = Math.abs(mRef[i]) + Math.abs(gCast[i]);
                assertEquals(mRef[i], mActual[i], type.relTol * 8 * scale + 1e-30, "m[" + i + "] at step " + step);
                // a sign may legitimately differ only where c is at the type's rounding level
                if (Math.abs(c[i]) > type.relTol * 16 * scale) {
                    assertEquals(expected[i], actual[i], lr * type.relTol * 4, "update[" + i + "] at step " + step);
                    checked++;
                }
            }
            // the reference m drifts from the array's rounding: resync so each step is tested on its own
            for (int i = 0; i < n; i++) {
                mRef[i] = mActual[i];
            }
        }
        assertTrue(checked > 8 * n * 0.95, "too few elements compared: " + checked);
    }

    /** DL4J hands the updater views into the network's flat arrays, at an offset: state and gradient here are such views. */
    @ParameterizedTest
    @EnumSource(value = Type.class, names = {"FLOAT", "DOUBLE"})
    void shouldMatchDoubleReferenceOnViewsAtAnOffset(final Type type) {
        final int n = 300;
        final int offset = 77;
        final double lr = 1e-3;
        final INDArray stateBuffer = Nd4j.create(type.dataType, 1, offset + n + 5);
        final INDArray state = stateBuffer.get(NDArrayIndex.point(0), NDArrayIndex.interval(offset, offset + n));
        final GradientUpdater<Lion> updater = new Lion(lr).instantiate(state, true);
        final INDArray gradBuffer = Nd4j.create(type.dataType, offset + n + 5);
        final INDArray grad = gradBuffer.get(NDArrayIndex.interval(offset, offset + n));
        final double[] mRef = new double[n];
        final double[] c = new double[n];
        final Random random = new Random(3);
        for (int step = 0; step < 4; step++) {
            gradBuffer.assign(99);
            final double[] g = new double[n];
            for (int i = 0; i < n; i++) {
                g[i] = random.nextGaussian();
            }
            grad.assign(Nd4j.createFromArray(g).castTo(type.dataType));
            final double[] gCast = grad.toDoubleVector();
            final double[] expected = LionReference.step(gCast, mRef, lr, 0.9, 0.99, c);
            updater.applyUpdater(grad, step, 0);
            final double[] mActual = state.toDoubleVector();
            for (int i = 0; i < n; i++) {
                assertEquals(mRef[i], mActual[i], type.relTol * 8 * (Math.abs(mRef[i]) + Math.abs(gCast[i])) + 1e-30, "m[" + i + "]");
                assertEquals(expected[i], grad.getDouble(i), lr * 1e-3, "update[" + i + "]");
                mRef[i] = mActual[i];
            }
            assertEquals(99.0, gradBuffer.getDouble(offset - 1), "outside the view, before");
            assertEquals(99.0, gradBuffer.getDouble(offset + n), "outside the view, after");
        }
        assertEquals(0.0, stateBuffer.getDouble(0, offset - 1), "state outside the view");
        assertEquals(0.0, stateBuffer.getDouble(0, offset + n), "state outside the view");
    }

    /**
     * The ND4J path (the CUDA backend's, and the CPU's for blocks above 2 GB) with its BLAS calls cut into slices:
     * set to 1,024 elements here, the step must equal the one-call step and the double reference up to rounding.
     */
    @ParameterizedTest
    @EnumSource(value = Type.class, names = {"FLOAT", "DOUBLE"})
    void shouldGiveTheSameStepWithBlasCallsInSlices(final Type type) {
        final int n = 10_007;
        final Random random = new Random(11);
        final double[][] grads = new double[4][n];
        for (final double[] g : grads) {
            for (int i = 0; i < n; i++) {
                g[i] = random.nextGaussian();
            }
        }
        final long before = LionUpdater.blasSlice;
        final boolean hostBefore = LionUpdater.hostStepAllowed;
        try {
            LionUpdater.hostStepAllowed = false;
            final double[][] once = run(type, grads, BlasSliceLength.ONE_CALL);
            final double[][] sliced = run(type, grads, BlasSliceLength.SMALL);
            for (int i = 0; i < n; i++) {
                // one call and slices differ at most by the rounding of the BLAS kernel's tail loop (FMA or not)
                assertEquals(once[1][i], sliced[1][i], type.relTol * 8 * (Math.abs(once[1][i]) + 1e-3), "m[" + i + "], one call vs sliced");
            }
            final double[] mRef = new double[n];
            final double[] c = new double[n];
            double[] expected = null;
            for (final double[] g : grads) {
                expected = LionReference.step(Nd4j.createFromArray(g).castTo(type.dataType).toDoubleVector(), mRef, 1e-3, 0.9, 0.99, c);
            }
            for (int i = 0; i < n; i++) {
                assertEquals(mRef[i], sliced[1][i], type.relTol * 64 * (Math.abs(mRef[i]) + 1), "m[" + i + "]");
                if (Math.abs(c[i]) > 1e-4) {
                    assertEquals(expected[i], sliced[0][i], 1e-3 * type.relTol, "update[" + i + "]");
                }
            }
        } finally {
            LionUpdater.blasSlice = before;
            LionUpdater.hostStepAllowed = hostBefore;
        }
    }

    private enum BlasSliceLength { ONE_CALL, SMALL }

    /** Four steps on a fresh updater; returns the last update and the momentum. */
    private static double[][] run(final Type type, final double[][] grads, final BlasSliceLength slices) {
        LionUpdater.blasSlice = slices == BlasSliceLength.SMALL ? 1024 : io.dlion.codec.BlasSlices.MAX_SLICE;
        final int n = grads[0].length;
        final INDArray state = Nd4j.create(type.dataType, 1, n);
        final GradientUpdater<Lion> updater = new Lion(1e-3, 0.9, 0.99).instantiate(state, true);
        INDArray g = null;
        for (int step = 0; step < grads.length; step++) {
            g = Nd4j.createFromArray(grads[step]).castTo(type.dataType).reshape(1, n);
            updater.applyUpdater(g, step, 0);
        }
        return new double[][] {g.toDoubleVector(), state.toDoubleVector()};
    }

    @Test
    void shouldKeepSignOfZeroAsZero() {
        final Lion lion = new Lion(0.5);
        final GradientUpdater<Lion> updater = lion.instantiate(Nd4j.create(DataType.FLOAT, 1, 3), true);
        final INDArray g = Nd4j.createFromArray(0f, 2f, -2f);
        updater.applyUpdater(g, 0, 0);
        assertEquals(0.0, g.getDouble(0));
        assertEquals(0.5, g.getDouble(1));
        assertEquals(-0.5, g.getDouble(2));
    }

    @Test
    void shouldFollowLearningRateSchedule() {
        final ISchedule schedule = new StepSchedule(ScheduleType.ITERATION, 0.1, 0.5, 2);
        final Lion lion = new Lion(schedule);
        final GradientUpdater<Lion> updater = lion.instantiate(Nd4j.create(DataType.DOUBLE, 1, 4), true);
        for (int iter = 0; iter < 6; iter++) {
            final INDArray g = Nd4j.createFromArray(1.0, -1.0, 2.0, -3.0);
            updater.applyUpdater(g, iter, 0);
            final double lr = 0.1 * Math.pow(0.5, Math.floor(iter / 2.0));
            assertEquals(lr, g.getDouble(0), 1e-15, "iteration " + iter);
            assertEquals(-lr, g.getDouble(3), 1e-15, "iteration " + iter);
        }
    }

    @Test
    void shouldHaveStateOfOneBuffer() {
        assertEquals(1000, new Lion().stateSize(1000));
        final GradientUpdater<Lion> updater = new Lion().instantiate(Nd4j.create(DataType.FLOAT, 1, 10), true);
        assertEquals(1, updater.getState().size());
        assertEquals(10, updater.getState().get("M").length());
    }

    @Test
    void shouldValidateStateKeys() {
        final LionUpdater updater = new LionUpdater(new Lion());
        final Map<String, INDArray> wrong = new HashMap<>();
        wrong.put("V", Nd4j.create(4));
        final IllegalStateException e = assertThrows(IllegalStateException.class, () -> updater.setState(wrong, false));
        assertTrue(e.getMessage().contains("M"), e.getMessage());

        final Map<String, INDArray> right = new HashMap<>();
        final INDArray m = Nd4j.createFromArray(1f, 2f);
        right.put("M", m);
        updater.setState(right, false);
        assertSame(m, updater.getState().get("M"));
        assertEquals(2.0, m.getDouble(1));
    }

    @Test
    void shouldRejectApplyWithoutState() {
        final LionUpdater updater = new LionUpdater(new Lion());
        assertThrows(IllegalStateException.class, () -> updater.applyUpdater(Nd4j.create(3), 0, 0));
    }

    @Test
    void shouldRejectBadHyperParametersNamingTheField() {
        assertMessage("learningRate", () -> new Lion(0));
        assertMessage("learningRate", () -> new Lion(-1e-3));
        assertMessage("learningRate", () -> new Lion(Double.NaN));
        assertMessage("learningRate", () -> new Lion(Double.POSITIVE_INFINITY));
        assertMessage("beta1", () -> new Lion(1e-4, 1.0, 0.99));
        assertMessage("beta1", () -> new Lion(1e-4, -0.1, 0.99));
        assertMessage("beta2", () -> new Lion(1e-4, 0.9, 1.0));
        assertMessage("beta2", () -> new Lion(1e-4, 0.9, Double.NaN));
        assertMessage("beta1", () -> Lion.builder().beta1(2).build());
        assertMessage("learningRate", () -> Lion.builder().learningRate(0).build());
        assertMessage("learningRate", () -> new Lion().setLrAndSchedule(-1, null));
        assertThrows(NullPointerException.class, () -> new Lion((ISchedule) null));
    }

    private static void assertMessage(final String field, final org.junit.jupiter.api.function.Executable executable) {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, executable);
        assertTrue(e.getMessage().startsWith(field + " "), e.getMessage());
    }

    @Test
    void shouldDefineDefaultsOnceAndCoverEveryFieldInEquals() {
        final Lion lion = new Lion();
        assertEquals(Lion.DEFAULT_LEARNING_RATE, lion.getLearningRate(0, 0));
        assertEquals(1e-4, Lion.DEFAULT_LEARNING_RATE);
        assertEquals(0.9, lion.getBeta1());
        assertEquals(0.99, lion.getBeta2());
        assertEquals(lion, Lion.builder().build());
        assertEquals(lion.hashCode(), Lion.builder().build().hashCode());
        assertEquals(lion, lion.clone());
        assertNotEquals(lion, new Lion(2e-4));
        assertNotEquals(lion, new Lion(1e-4, 0.8, 0.99));
        assertNotEquals(lion, new Lion(1e-4, 0.9, 0.98));
        assertNotEquals(lion, new Lion(new StepSchedule(ScheduleType.ITERATION, 1e-4, 0.5, 10)));
        assertEquals(new Lion(new StepSchedule(ScheduleType.ITERATION, 1e-4, 0.5, 10)),
            Lion.builder().learningRateSchedule(new StepSchedule(ScheduleType.ITERATION, 1e-4, 0.5, 10)).build());
    }
}
