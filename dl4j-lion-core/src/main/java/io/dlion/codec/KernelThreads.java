package io.dlion.codec;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The threads that run the host kernels of the CPU backend (the fused Lion step, {@link SignPacker} and
 * {@link DeltaApplier} on FLOAT and DOUBLE arrays) over slices of a vector.
 * <p>
 * {@link #run(Slices, int)} runs {@code body.run(s, slices)} once for every slice {@code s} in {@code [0, slices)}:
 * the calling thread and the pool's threads claim slices until none is left, and the call returns when all are done.
 * The kernels make every slice independent of the others (a slice writes only its own elements or words), so a
 * result is bit-identical whatever the number of slices and whichever thread runs which slice. One call at a time
 * uses the pool; a call that finds it busy (two model replicas stepping at once) runs all its slices on its own
 * thread. Nothing is allocated per call.
 * <p>
 * The pool is process-wide and made of daemon threads started on first use: {@value #THREADS_PROP_NAME} threads
 * in all counting the caller (default: the available processors, at most {@value #MAX_DEFAULT_THREADS}; 1 runs
 * every kernel on the caller's thread).
 */
public final class KernelThreads {

    /** System property: threads a kernel runs on, counting the caller. */
    public static final String THREADS_PROP_NAME = "dlion.kernel.threads";

    /** Upper bound of the default thread count: the kernels are bound by memory bandwidth, not by cores. */
    public static final int MAX_DEFAULT_THREADS = 8;

    /** Slices per thread of a long vector. */
    public static final int SLICES_PER_THREAD = 4;

    private static final int SPINS_BEFORE_PARK = 200;

    /**
     * True when the JVM resolved the Vector API module ({@code --add-modules jdk.incubator.vector}): the codec's host
     * kernels then use it for their whole-word loops ({@code VectorCodec}), with the same results as without.
     */
    static final boolean VECTOR_API = ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();

    /** The work of one call: slice {@code slice} of {@code slices}. */
    @FunctionalInterface
    public interface Slices {
        /**
         * @param slice  the slice to run, in {@code [0, slices)}.
         * @param slices the number of slices of this call.
         */
        void run(int slice, int slices);
    }

    private static final class Holder {
        private static final KernelThreads SHARED = new KernelThreads(configuredThreads());
    }

    private final int threads;
    private final Thread[] workers;
    private final AtomicBoolean busy = new AtomicBoolean();
    /** Call number in the upper 32 bits, next unclaimed slice in the lower 32 bits. */
    private final AtomicLong ticket = new AtomicLong();
    private final AtomicInteger remaining = new AtomicInteger();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile Slices body;
    private volatile int sliceCount;
    private volatile Thread caller;

    private KernelThreads(final int threads) {
        this.threads = threads;
        this.workers = new Thread[threads - 1];
        for (int i = 0; i < workers.length; i++) {
            final Thread t = new Thread(this::workLoop, "dlion-kernel-" + (i + 1));
            t.setDaemon(true);
            workers[i] = t;
            t.start();
        }
    }

    /** @return true when the codec's host kernels use the Vector API ({@code --add-modules jdk.incubator.vector}). */
    public static boolean vectorApi() {
        return VECTOR_API;
    }

    /** @return the process-wide pool, started on first use. */
    public static KernelThreads shared() {
        return Holder.SHARED;
    }

    /** @return threads a kernel runs on, counting the caller. */
    public int threads() {
        return threads;
    }

    /**
     * Slices for a vector of {@code length} elements: {@value #SLICES_PER_THREAD} per thread (so that a thread the OS
     * leaves waiting on a shared machine holds up little work: the others claim the rest), but none shorter than
     * {@code minSliceLength}, and one when there is a single thread.
     *
     * @param length         elements (or words) to split.
     * @param minSliceLength the smallest slice worth a thread hand-over.
     * @return a slice count in {@code [1, SLICES_PER_THREAD * threads()]}.
     */
    public int slicesFor(final long length, final long minSliceLength) {
        if (threads == 1) {
            return 1;
        }
        return (int) Math.max(1, Math.min((long) SLICES_PER_THREAD * threads, length / Math.max(1, minSliceLength)));
    }

    /**
     * Run {@code body} over {@code slices} slices and return when all have run. A {@link RuntimeException} or
     * {@link Error} thrown by a slice is rethrown here after the other slices have finished.
     *
     * @param body   the slice work.
     * @param slices the number of slices, {@code >= 1}.
     */
    public void run(final Slices body, final int slices) {
        if (slices < 1) {
            throw new IllegalArgumentException("slices must be >= 1, got " + slices);
        }
        if (slices == 1 || workers.length == 0 || !busy.compareAndSet(false, true)) {
            for (int s = 0; s < slices; s++) {
                body.run(s, slices);
            }
            return;
        }
        try {
            failure.set(null);
            caller = Thread.currentThread();
            this.body = body;
            sliceCount = slices;
            remaining.set(slices);
            final long call = (ticket.get() >>> 32) + 1;
            ticket.set(call << 32);
            for (int i = 0, n = Math.min(workers.length, slices - 1); i < n; i++) {
                LockSupport.unpark(workers[i]);
            }
            claimAndRun();
            int spins = 0;
            while (remaining.get() != 0) {
                if (spins < SPINS_BEFORE_PARK) {
                    spins++;
                    Thread.onSpinWait();
                } else {
                    LockSupport.park(this);
                }
            }
            this.body = null;
            final Throwable t = failure.getAndSet(null);
            if (t instanceof RuntimeException) {
                throw (RuntimeException) t;
            }
            if (t instanceof Error) {
                throw (Error) t;
            }
        } finally {
            busy.set(false);
        }
    }

    private void workLoop() {
        while (true) {
            if (!claimAndRun()) {
                LockSupport.park(this);
            }
        }
    }

    /**
     * Claim and run slices of the current call until none is left.
     *
     * @return true when at least one slice was run.
     */
    private boolean claimAndRun() {
        boolean ran = false;
        while (true) {
            final long t = ticket.get();
            final Slices b = body;
            final int n = sliceCount;
            final int slice = (int) t;
            if (b == null || slice >= n) {
                return ran;
            }
            if (!ticket.compareAndSet(t, t + 1)) {
                continue;
            }
            ran = true;
            try {
                b.run(slice, n);
            } catch (final Throwable e) {
                failure.compareAndSet(null, e);
            }
            if (remaining.decrementAndGet() == 0) {
                LockSupport.unpark(caller);
            }
        }
    }

    private static int configuredThreads() {
        final int defaultThreads = Math.min(Runtime.getRuntime().availableProcessors(), MAX_DEFAULT_THREADS);
        final String value = System.getProperty(THREADS_PROP_NAME);
        if (value == null) {
            return defaultThreads;
        }
        final int threads;
        try {
            threads = Integer.parseInt(value.trim());
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException(THREADS_PROP_NAME + " must be an integer >= 1, got " + value, e);
        }
        if (threads < 1) {
            throw new IllegalArgumentException(THREADS_PROP_NAME + " must be >= 1, got " + value);
        }
        return threads;
    }
}
