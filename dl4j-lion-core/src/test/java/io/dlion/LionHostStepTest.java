package io.dlion;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import io.dlion.codec.KernelThreads;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;
import org.nd4j.linalg.learning.GradientUpdater;

/** The fused host step of {@link LionUpdater} on the CPU backend (FLOAT and DOUBLE). */
class LionHostStepTest {

    enum Type {
        FLOAT(DataType.FLOAT), DOUBLE(DataType.DOUBLE);
        final DataType dataType;

        Type(final DataType dataType) {
            this.dataType = dataType;
        }
    }

    private static final double BETA1 = 0.9;
    private static final double BETA2 = 0.99;
    private static final double K = BETA1 / (1 - BETA1);
    private static final double A = BETA2 - (1 - BETA2) * K;
    private static final double B = 1 - BETA2;
    private static final int[] LENGTHS = {1, 7, 8, 9, 63, 64, 65, 1000, LionHostStep.CHUNK + 3, 3 * (int) LionHostStep.MIN_SLICE + 17};
    private static final int[] SLICES = {1, 2, 3, 5, 8};

    @Test
    void shouldRunOnTheCpuBackend() {
        assertTrue(Nd4j.getEnvironment().isCPU());
        final INDArray m = Nd4j.create(DataType.FLOAT, 1, 10);
        assertTrue(LionHostStep.supports(Nd4j.create(DataType.FLOAT, 1, 10), m, null), "this JVM must run the host step (FMA intrinsic)");
    }

    /** Every length, every slice count: the same bits as the element-by-element rule, and close to the DOUBLE reference. */
    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldMatchTheRuleElementByElementForEverySliceCount(final Type type) {
        final Random random = new Random(11);
        for (final int n : LENGTHS) {
            final double[] g = special(random, n);
            final double[] m = new double[n];
            for (int i = 0; i < n; i++) {
                m[i] = i % 11 == 0 ? 0.0 : random.nextGaussian() * 0.1;
            }
            final INDArray g0 = Nd4j.createFromArray(g).castTo(type.dataType).reshape(1, n);
            final INDArray m0 = Nd4j.createFromArray(m).castTo(type.dataType).reshape(1, n);
            final double lr = 3e-4;
            final double[] expectedUpdate = new double[n];
            final double[] expectedM = new double[n];
            rule(type, g0.toDoubleVector(), m0.toDoubleVector(), lr, expectedUpdate, expectedM, null);
            for (final int slices : SLICES) {
                final INDArray gs = g0.dup();
                final INDArray ms = m0.dup();
                new LionHostStep(KernelThreads.shared(), slices).step(gs, ms, null, K, A, B, lr);
                assertBits(expectedUpdate, gs.toDoubleVector(), type + " update n=" + n + " slices=" + slices);
                assertBits(expectedM, ms.toDoubleVector(), type + " m n=" + n + " slices=" + slices);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldStayCloseToTheDoubleReferenceOverSeveralSteps(final Type type) {
        final int n = 5003;
        final double lr = 1e-3;
        final INDArray state = Nd4j.create(type.dataType, 1, n);
        final GradientUpdater<Lion> updater = new Lion(lr, BETA1, BETA2).instantiate(state, true);
        final double[] mRef = new double[n];
        final double[] c = new double[n];
        final Random random = new Random(5);
        final double tol = type == Type.FLOAT ? 1e-6 : 1e-13;
        final double tiny = 2.0 * (type == Type.FLOAT ? Float.MIN_VALUE : Double.MIN_VALUE);
        for (int step = 0; step < 6; step++) {
            final INDArray grad = Nd4j.createFromArray(special(random, n)).castTo(type.dataType);
            final double[] gCast = grad.toDoubleVector();
            final double[] expected = LionReference.step(gCast, mRef, lr, BETA1, BETA2, c);
            updater.applyUpdater(grad, step, 0);
            final double[] actual = grad.toDoubleVector();
            final double[] mActual = state.toDoubleVector();
            for (int i = 0; i < n; i++) {
                if (Double.isNaN(c[i])) {
                    assertTrue(Double.isNaN(actual[i]), "NaN stays NaN at " + i);
                } else if (gCast[i] == 0 && mRef[i] == 0) {
                    assertBits(new double[] {0.0}, new double[] {actual[i]}, "sign(0) = +0 at " + i);
                } else if (Math.abs(c[i]) > tol * 16 * (Math.abs(mRef[i]) + Math.abs(gCast[i])) || Double.isInfinite(c[i])) {
                    assertEquals(expected[i], actual[i], lr * tol, "update[" + i + "] step " + step);
                }
                if (Double.isFinite(mRef[i])) {
                    assertEquals(mRef[i], mActual[i], tol * 8 * (Math.abs(mRef[i]) + Math.abs(gCast[i])) + tiny, "m[" + i + "] step " + step);
                }
                mRef[i] = mActual[i];
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldKeepSignsOfSubnormalsZerosAndInfinities(final Type type) {
        final double tiny = type == Type.FLOAT ? Float.MIN_VALUE : Double.MIN_VALUE;
        final double normalTiny = type == Type.FLOAT ? Float.MIN_NORMAL : Double.MIN_NORMAL;
        final double[] g = {tiny, -tiny, 0.0, -0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.NaN, normalTiny / 4, -normalTiny / 4};
        final INDArray grad = Nd4j.createFromArray(g).castTo(type.dataType);
        final INDArray m = Nd4j.create(type.dataType, g.length);
        new LionHostStep(KernelThreads.shared(), 1).step(grad, m, null, K, A, B, 0.5);
        final double[] u = grad.toDoubleVector();
        assertBits(new double[] {0.5, -0.5, 0.0, 0.0, 0.5, -0.5, Double.NaN, 0.5, -0.5}, u, type + " updates");
        final double[] mAfter = m.toDoubleVector();
        assertEquals(Double.POSITIVE_INFINITY, mAfter[4]);
        assertEquals(Double.NEGATIVE_INFINITY, mAfter[5]);
        assertTrue(Double.isNaN(mAfter[6]));
    }

    /** DL4J hands the updater views into the network's flat arrays, at an offset: nothing outside them is touched. */
    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldStepViewsAtAnOffsetAndLeaveTheRestAlone(final Type type) {
        final Random random = new Random(19);
        for (final int n : new int[] {1, 9, 131, LionHostStep.CHUNK * 2 + 5}) {
            final int offset = 37;
            final INDArray gBuffer = Nd4j.create(type.dataType, 1, offset + n + 9).assign(99);
            final INDArray mBuffer = Nd4j.create(type.dataType, offset + 3 + n + 4).assign(-7);
            final INDArray tBuffer = Nd4j.create(type.dataType, 1, 5 + n + 5).assign(42);
            final INDArray g = gBuffer.get(NDArrayIndex.point(0), NDArrayIndex.interval(offset, offset + n));
            final INDArray m = mBuffer.get(NDArrayIndex.interval(offset + 3, offset + 3 + n));
            final INDArray target = tBuffer.get(NDArrayIndex.point(0), NDArrayIndex.interval(5, 5 + n));
            final double[] gv = new double[n];
            final double[] mv = new double[n];
            for (int i = 0; i < n; i++) {
                gv[i] = random.nextGaussian();
                mv[i] = random.nextGaussian() * 0.1;
            }
            g.assign(Nd4j.createFromArray(gv).castTo(type.dataType));
            m.assign(Nd4j.createFromArray(mv).castTo(type.dataType));
            final double[] expectedUpdate = new double[n];
            final double[] expectedM = new double[n];
            final double[] expectedC = new double[n];
            rule(type, g.toDoubleVector(), m.toDoubleVector(), 1e-3, expectedUpdate, expectedM, expectedC);
            final INDArray g2 = g.dup();
            final INDArray m2 = m.dup();
            assertTrue(LionHostStep.supports(g, m, target));
            new LionHostStep(KernelThreads.shared(), 3).step(g, m, target, K, A, B, 1e-3);
            assertBits(new double[n], g.toDoubleVector(), "vote mode leaves zero in g");
            assertBits(expectedM, m.toDoubleVector(), "vote mode m");
            assertBits(expectedC, target.toDoubleVector(), "vote mode target");
            new LionHostStep(KernelThreads.shared(), 2).step(g2, m2, null, K, A, B, 1e-3);
            assertBits(expectedUpdate, g2.toDoubleVector(), "plain update");
            assertBits(expectedM, m2.toDoubleVector(), "plain m");
            assertEquals(99.0, gBuffer.getDouble(0, offset - 1));
            assertEquals(99.0, gBuffer.getDouble(0, offset + n));
            assertEquals(-7.0, mBuffer.getDouble(offset + 2));
            assertEquals(-7.0, mBuffer.getDouble(offset + 3 + n));
            assertEquals(42.0, tBuffer.getDouble(0, 4));
            assertEquals(42.0, tBuffer.getDouble(0, 5 + n));
        }
    }

    @Test
    void shouldLeaveStridedAndHalfArraysToTheNd4jPath() {
        final INDArray strided = Nd4j.create(DataType.FLOAT, 40).get(NDArrayIndex.interval(0, 2, 40));
        assertFalse(LionHostStep.supports(strided, Nd4j.create(DataType.FLOAT, 20), null));
        assertFalse(LionHostStep.supports(Nd4j.create(DataType.FLOAT, 20), Nd4j.create(DataType.FLOAT, 20), strided));
        assertFalse(LionHostStep.supports(Nd4j.create(DataType.FLOAT16, 20), Nd4j.create(DataType.FLOAT16, 20), null));
        assertFalse(LionHostStep.supports(Nd4j.create(DataType.DOUBLE, 20), Nd4j.create(DataType.FLOAT, 20), null));
        assertFalse(LionHostStep.supports(Nd4j.create(DataType.FLOAT, 'c', 4, 5), Nd4j.create(DataType.FLOAT, 'f', 4, 5), null));
        assertFalse(LionHostStep.supports(Nd4j.create(DataType.FLOAT, 'c', 4, 5), Nd4j.create(DataType.FLOAT, 'c', 5, 4), null));
    }

    /** A strided gradient goes through the ND4J ops and still gets Lion's step. */
    @Test
    void shouldStepAStridedGradientThroughNd4j() {
        final int n = 50;
        final INDArray buffer = Nd4j.create(DataType.DOUBLE, 2 * n);
        final INDArray g = buffer.get(NDArrayIndex.interval(0, 2, 2 * n));
        final Random random = new Random(2);
        final double[] gv = new double[n];
        for (int i = 0; i < n; i++) {
            gv[i] = random.nextGaussian();
            g.putScalar(i, gv[i]);
        }
        final INDArray state = Nd4j.create(DataType.DOUBLE, n);
        new Lion(0.25).instantiate(state, true).applyUpdater(g, 0, 0);
        for (int i = 0; i < n; i++) {
            assertEquals(0.25 * Math.signum(gv[i]), g.getDouble(i), 0.0);
            assertEquals(0.01 * gv[i], state.getDouble(i), 1e-15);
        }
    }

    @ParameterizedTest
    @EnumSource(Type.class)
    void shouldAllocateNothingPerStep(final Type type) {
        final com.sun.management.ThreadMXBean bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        final int n = 4 * (int) LionHostStep.MIN_SLICE;
        final INDArray g = Nd4j.rand(type.dataType, 1, n);
        final INDArray m = Nd4j.rand(type.dataType, 1, n);
        final INDArray target = Nd4j.create(type.dataType, 1, n);
        final LionHostStep step = new LionHostStep(KernelThreads.shared(), 4);
        for (int i = 0; i < 2000; i++) {
            step.step(g, m, (i & 1) == 0 ? null : target, K, A, B, 1e-4);
        }
        final long[] ids = kernelThreadIds();
        final long before = allocated(bean, ids);
        for (int i = 0; i < 50; i++) {
            step.step(g, m, (i & 1) == 0 ? null : target, K, A, B, 1e-4);
        }
        assertEquals(0, allocated(bean, ids) - before, "bytes allocated by 50 steps on the caller and kernel threads");
    }

    static long[] kernelThreadIds() {
        final List<Long> ids = new ArrayList<>();
        ids.add(Thread.currentThread().getId());
        for (final Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("dlion-kernel-")) {
                ids.add(t.getId());
            }
        }
        return ids.stream().mapToLong(Long::longValue).toArray();
    }

    static long allocated(final com.sun.management.ThreadMXBean bean, final long[] ids) {
        long sum = 0;
        for (final long id : ids) {
            sum += bean.getThreadAllocatedBytes(id);
        }
        return sum;
    }

    /** Gaussian values with zeros of both signs, subnormals, infinities and NaN sprinkled in. */
    private static double[] special(final Random random, final int n) {
        final double[] g = new double[n];
        for (int i = 0; i < n; i++) {
            switch (random.nextInt(40)) {
                case 0:
                    g[i] = 0.0;
                    break;
                case 1:
                    g[i] = -0.0;
                    break;
                case 2:
                    g[i] = Double.NaN;
                    break;
                case 3:
                    g[i] = random.nextBoolean() ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY;
                    break;
                case 4:
                    g[i] = (random.nextBoolean() ? 1 : -1) * Float.MIN_VALUE * (1 + random.nextInt(100));
                    break;
                case 5:
                    g[i] = (random.nextBoolean() ? 1 : -1) * Double.MIN_VALUE * (1 + random.nextInt(100));
                    break;
                default:
                    g[i] = random.nextGaussian();
            }
        }
        return g;
    }

    /** The class comment's rule, one element at a time, in the type's arithmetic. */
    private static void rule(final Type type, final double[] g, final double[] m, final double lr, final double[] update,
        final double[] mOut, final double[] cOut) {
        for (int i = 0; i < g.length; i++) {
            final double c;
            if (type == Type.FLOAT) {
                final float cf = Math.fma((float) K, (float) m[i], (float) g[i]);
                mOut[i] = Math.fma((float) B, cf, (float) m[i] * (float) A);
                c = cf;
                update[i] = Float.isNaN(cf) ? Float.NaN : cf > 0 ? (float) lr : cf < 0 ? -(float) lr : 0.0;
            } else {
                c = Math.fma(K, m[i], g[i]);
                mOut[i] = Math.fma(B, c, m[i] * A);
                update[i] = Double.isNaN(c) ? Double.NaN : c > 0 ? lr : c < 0 ? -lr : 0.0;
            }
            if (cOut != null) {
                cOut[i] = c;
            }
        }
    }

    private static void assertBits(final double[] expected, final double[] actual, final String message) {
        final long[] e = new long[expected.length];
        final long[] a = new long[actual.length];
        for (int i = 0; i < e.length; i++) {
            e[i] = Double.doubleToLongBits(expected[i]);
        }
        for (int i = 0; i < a.length; i++) {
            a[i] = Double.doubleToLongBits(actual[i]);
        }
        assertArrayEquals(e, a, message);
    }
}
