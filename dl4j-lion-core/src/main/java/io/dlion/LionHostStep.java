package io.dlion;

import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.util.Arrays;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.dlion.codec.KernelThreads;
import org.nd4j.linalg.api.buffer.DataBuffer;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Lion's step as one fused loop over the host buffers of FLOAT and DOUBLE arrays on ND4J's CPU backend, split over
 * {@link KernelThreads}. Per element, in the array's type, with {@code k = beta1 / (1 - beta1)},
 * {@code a = beta2 - (1 - beta2) k}, {@code b = 1 - beta2} (each rounded to the type):
 * <pre>
 *   c  = fma(k, m, g)                  c' = c / (1 - beta1), one rounding
 *   m  = fma(b, c, m * a)              beta2 m + (1 - beta2) g, rewritten in c'
 *   g  = lr * sign(c)                  plain Lion: sign(+-0) = +0, sign(NaN) = NaN, subnormals keep their sign
 *   or target = c, g = 0               bound to a vote target (Distributed Lion)
 * </pre>
 * These are the values of {@link LionUpdater}'s ND4J composition (BLAS axpy, scalar multiply, axpy) where
 * OpenBLAS's vector kernels use fused multiply-adds, as they do on FMA hardware; OpenBLAS rounds the product
 * separately in the scalar tail of each of its threads' ranges (fewer than 32 elements), so there the two paths
 * can differ in the last bit of {@code c'} and {@code m}. ND4J's {@code Sign} maps NaN to 0; this loop keeps NaN.
 * <p>
 * The loop reads g and m once and writes g and m once (plus the target in distributed mode), in chunks copied
 * through small per-thread heap arrays that the JIT vectorizes. Slices are independent, so the result does not
 * depend on the slice count. Nothing is allocated per step once the buffers' views are cached (they are rebuilt
 * only when an array's buffer changes). One instance per {@link LionUpdater}; not thread-safe.
 * <p>
 * Used only where {@link #supports} holds: CPU backend, FLOAT or DOUBLE, contiguous arrays of equal type and
 * layout, and a JIT with the FMA intrinsic ({@code Math.fma} is otherwise far slower than the ND4J ops).
 */
final class LionHostStep implements KernelThreads.Slices {

    /** Elements per chunk copied through the per-thread heap arrays (16 KB of FLOAT, in L1 with its partner). */
    static final int CHUNK = 2048;

    /** Smallest slice handed to another thread. */
    static final long MIN_SLICE = 1 << 16;

    private static final boolean ENABLED = Nd4j.getEnvironment().isCPU() && fmaIntrinsic();
    private static final float SCALE_F = 0x1p100f;
    private static final double SCALE_D = 0x1p600;
    private static final float[] ZEROS_F = new float[CHUNK];
    private static final double[] ZEROS_D = new double[CHUNK];
    private static final ThreadLocal<float[][]> SCRATCH_F = ThreadLocal.withInitial(() -> new float[2][CHUNK]);
    private static final ThreadLocal<double[][]> SCRATCH_D = ThreadLocal.withInitial(() -> new double[2][CHUNK]);

    private final KernelThreads threads;
    private final int fixedSlices;
    private final BufferView gView = new BufferView();
    private final BufferView mView = new BufferView();
    private final BufferView tView = new BufferView();

    private boolean isFloat;
    private boolean vote;
    private int length;
    private int gOffset;
    private int mOffset;
    private int tOffset;
    private float kF;
    private float aF;
    private float bF;
    private float lrF;
    private double kD;
    private double aD;
    private double bD;
    private double lrD;

    LionHostStep() {
        this(KernelThreads.shared(), 0);
    }

    /**
     * @param threads     the pool.
     * @param fixedSlices slices per step, or 0 for one per thread (at least {@link #MIN_SLICE} elements each).
     */
    LionHostStep(final KernelThreads threads, final int fixedSlices) {
        this.threads = threads;
        this.fixedSlices = fixedSlices;
    }

    /**
     * @param g      the gradient, reshaped to m's shape.
     * @param m      the momentum.
     * @param target the vote target reshaped to m's shape, or null.
     * @return true when {@link #step} can run on these arrays.
     */
    static boolean supports(final INDArray g, final INDArray m, final INDArray target) {
        return ENABLED && hostContiguous(g, m) && (target == null || hostContiguous(target, m));
    }

    private static boolean hostContiguous(final INDArray x, final INDArray m) {
        final DataType type = m.dataType();
        if (type != DataType.FLOAT && type != DataType.DOUBLE || x.dataType() != type) {
            return false;
        }
        if (x.length() != m.length() || x.elementWiseStride() != 1 || m.elementWiseStride() != 1) {
            return false;
        }
        if (!(x.isVectorOrScalar() && m.isVectorOrScalar()) && (x.ordering() != m.ordering() || !Arrays.equals(x.shape(), m.shape()))) {
            return false;
        }
        final long bytes = type.width();
        return x.data().underlyingLength() * bytes <= Integer.MAX_VALUE && m.data().underlyingLength() * bytes <= Integer.MAX_VALUE;
    }

    /**
     * One step, with the rule of the class comment. Call only where {@link #supports} holds.
     *
     * @param g      the gradient (receives the update, or zero when a target is given).
     * @param m      the momentum, updated.
     * @param target receives c', or null for plain Lion.
     * @param k      beta1 / (1 - beta1).
     * @param a      beta2 - (1 - beta2) k.
     * @param b      1 - beta2.
     * @param lr     the learning rate.
     */
    void step(final INDArray g, final INDArray m, final INDArray target, final double k, final double a, final double b, final double lr) {
        isFloat = m.dataType() == DataType.FLOAT;
        vote = target != null;
        length = (int) m.length();
        gOffset = (int) g.offset();
        mOffset = (int) m.offset();
        gView.of(g.data(), isFloat);
        mView.of(m.data(), isFloat);
        if (vote) {
            tOffset = (int) target.offset();
            tView.of(target.data(), isFloat);
        }
        kF = (float) k;
        aF = (float) a;
        bF = (float) b;
        lrF = (float) lr;
        kD = k;
        aD = a;
        bD = b;
        lrD = lr;
        threads.run(this, fixedSlices > 0 ? fixedSlices : threads.slicesFor(length, MIN_SLICE));
    }

    @Override
    public void run(final int slice, final int slices) {
        final int from = (int) ((long) length * slice / slices);
        final int to = (int) ((long) length * (slice + 1) / slices);
        if (isFloat) {
            runFloat(from, to);
        } else {
            runDouble(from, to);
        }
    }

    private void runFloat(final int from, final int to) {
        final float[][] scratch = SCRATCH_F.get();
        final float[] gs = scratch[0];
        final float[] ms = scratch[1];
        final FloatBuffer gb = gView.floats;
        final FloatBuffer mb = mView.floats;
        final float k = kF;
        final float a = aF;
        final float b = bF;
        final float lr = lrF;
        for (int base = from; base < to; base += CHUNK) {
            final int len = Math.min(CHUNK, to - base);
            gb.get(gOffset + base, gs, 0, len);
            mb.get(mOffset + base, ms, 0, len);
            if (vote) {
                for (int i = 0; i < len; i++) {
                    final float c = Math.fma(k, ms[i], gs[i]);
                    ms[i] = Math.fma(b, c, ms[i] * a);
                    gs[i] = c;
                }
                tView.floats.put(tOffset + base, gs, 0, len);
                gb.put(gOffset + base, ZEROS_F, 0, len);
            } else {
                for (int i = 0; i < len; i++) {
                    final float c = Math.fma(k, ms[i], gs[i]);
                    ms[i] = Math.fma(b, c, ms[i] * a);
                    gs[i] = (Math.min(Math.max(c * SCALE_F * SCALE_F, -1f), 1f) + 0f) * lr;
                }
                gb.put(gOffset + base, gs, 0, len);
            }
            mb.put(mOffset + base, ms, 0, len);
        }
    }

    private void runDouble(final int from, final int to) {
        final double[][] scratch = SCRATCH_D.get();
        final double[] gs = scratch[0];
        final double[] ms = scratch[1];
        final DoubleBuffer gb = gView.doubles;
        final DoubleBuffer mb = mView.doubles;
        final double k = kD;
        final double a = aD;
        final double b = bD;
        final double lr = lrD;
        for (int base = from; base < to; base += CHUNK) {
            final int len = Math.min(CHUNK, to - base);
            gb.get(gOffset + base, gs, 0, len);
            mb.get(mOffset + base, ms, 0, len);
            if (vote) {
                for (int i = 0; i < len; i++) {
                    final double c = Math.fma(k, ms[i], gs[i]);
                    ms[i] = Math.fma(b, c, ms[i] * a);
                    gs[i] = c;
                }
                tView.doubles.put(tOffset + base, gs, 0, len);
                gb.put(gOffset + base, ZEROS_D, 0, len);
            } else {
                for (int i = 0; i < len; i++) {
                    final double c = Math.fma(k, ms[i], gs[i]);
                    ms[i] = Math.fma(b, c, ms[i] * a);
                    gs[i] = (Math.min(Math.max(c * SCALE_D * SCALE_D, -1.0), 1.0) + 0.0) * lr;
                }
                gb.put(gOffset + base, gs, 0, len);
            }
            mb.put(mOffset + base, ms, 0, len);
        }
    }

    /** @return true when HotSpot compiles {@code Math.fma} to the CPU's fused multiply-add. */
    private static boolean fmaIntrinsic() {
        try {
            final HotSpotDiagnosticMXBean bean = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            return bean != null && Boolean.parseBoolean(bean.getVMOption("UseFMA").getValue());
        } catch (final IllegalArgumentException | UnsupportedOperationException e) {
            return false;
        }
    }

    /** A cached NIO view of one ND4J buffer, indexed like the buffer's root (element {@code offset()} is the array's first). */
    static final class BufferView {
        private DataBuffer data;
        FloatBuffer floats;
        DoubleBuffer doubles;

        void of(final DataBuffer buffer, final boolean isFloat) {
            if (buffer == data) {
                return;
            }
            if (isFloat) {
                floats = buffer.asNio().order(ByteOrder.nativeOrder()).asFloatBuffer();
                doubles = null;
            } else {
                doubles = buffer.asNio().order(ByteOrder.nativeOrder()).asDoubleBuffer();
                floats = null;
            }
            data = buffer;
        }
    }
}
