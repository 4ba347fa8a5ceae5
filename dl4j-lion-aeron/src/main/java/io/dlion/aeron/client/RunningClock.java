package io.dlion.aeron.client;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

import org.agrona.concurrent.NanoClock;

/**
 * The time this process was running: {@link System#nanoTime()}, except that it advances by at most
 * {@link #MAX_STEP_NS} between two reads. A daemon thread reads it every {@link #TICK_NS}, so a longer step means that
 * the whole process did not run: stopped, a long collection, or its host stalled (a virtual machine paused by its
 * hypervisor stops every process at once). It is the workers' clock for a slice server's silence
 * ({@link ExchangeContext#nanoClock(NanoClock)}), so that a worker does not count its own pause against a server: a
 * worker that did not run heard nothing from any server meanwhile, and its media driver dropped its publications'
 * connections, so on waking it would find every server silent and disconnected. The servers do the same for the round
 * deadline ({@code AggregationServer.Context#pauseNs}).
 * <p>
 * Thread-safe: every read takes one lock, a few tens of nanoseconds uncontended.
 */
public final class RunningClock implements NanoClock {
    /** The longest step between two reads counted as running time: 200 ms, as a server's pause. */
    public static final long MAX_STEP_NS = TimeUnit.MILLISECONDS.toNanos(200);
    /** How often the daemon thread reads the clock: 50 ms. */
    public static final long TICK_NS = TimeUnit.MILLISECONDS.toNanos(50);
    /** The process's clock, its daemon thread started on first use. */
    public static final RunningClock INSTANCE = new RunningClock(System::nanoTime, MAX_STEP_NS);

    private final LongSupplier source;
    private final long maxStepNs;
    private long lastSourceNs;
    private long stalledNs;
    private volatile boolean ticking;

    /**
     * @param source    the clock it follows, e.g. {@link System#nanoTime()}.
     * @param maxStepNs the longest step between two reads counted as running time.
     */
    RunningClock(final LongSupplier source, final long maxStepNs) {
        if (maxStepNs <= 0) {
            throw new IllegalArgumentException("maxStepNs must be > 0, got " + maxStepNs);
        }
        this.source = source;
        this.maxStepNs = maxStepNs;
        this.lastSourceNs = source.getAsLong();
    }

    @Override
    public long nanoTime() {
        if (!ticking && this == INSTANCE) {
            startTicking();
        }
        return read();
    }

    /** @return the time not counted so far: the steps beyond {@link #MAX_STEP_NS}, summed. */
    public synchronized long stalledNs() {
        return stalledNs;
    }

    synchronized long read() {
        final long now = source.getAsLong();
        final long step = now - lastSourceNs;
        if (step > maxStepNs) {
            stalledNs += step - maxStepNs;
        }
        lastSourceNs = Math.max(lastSourceNs, now);
        return lastSourceNs - stalledNs;
    }

    private void startTicking() {
        synchronized (this) {
            if (ticking) {
                return;
            }
            ticking = true;
        }
        final Thread ticker = new Thread(() -> {
            while (true) {
                LockSupport.parkNanos(TICK_NS);
                read();
            }
        }, "dlion-running-clock");
        ticker.setDaemon(true);
        ticker.start();
    }
}
