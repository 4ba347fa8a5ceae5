package io.dlion.aeron.client;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

import org.agrona.concurrent.NanoClock;

/**
 * The time this process was running: {@link System#nanoTime()}, except that a step longer than {@link #MAX_STEP_NS}
 * between two of its daemon thread's ticks (every {@link #TICK_NS}) counts as {@link #MAX_STEP_NS}: the whole process
 * did not run (stopped, a long collection, or its host stalled: a virtual machine paused by its hypervisor stops every
 * process at once). It is the workers' clock for a slice server's silence ({@link ExchangeContext#nanoClock(NanoClock)}),
 * so that a worker does not count its own pause against a server: a worker that did not run heard nothing from any
 * server meanwhile, and its media driver dropped its publications' connections, so on waking it would find every server
 * silent and disconnected. The servers do the same for the round deadline ({@code AggregationServer.Context#pauseNs}).
 * <p>
 * Between two ticks a read is capped at the last tick plus {@link #MAX_STEP_NS}, so a reader that wakes from a stall
 * before the daemon thread does sees no jump, and the clock never goes back. Thread-safe and lock-free: a read is two
 * loads and the source clock; the daemon thread publishes an immutable tick.
 */
public final class RunningClock implements NanoClock {
    /** The longest step between two ticks counted as running time: 200 ms, as a server's pause. */
    public static final long MAX_STEP_NS = TimeUnit.MILLISECONDS.toNanos(200);
    /** How often the daemon thread ticks: 50 ms. */
    public static final long TICK_NS = TimeUnit.MILLISECONDS.toNanos(50);
    /** The process's clock, its daemon thread started on first use. */
    public static final RunningClock INSTANCE = new RunningClock(System::nanoTime, MAX_STEP_NS);

    private final LongSupplier source;
    private final long maxStepNs;
    private volatile Tick last;
    private volatile boolean ticking;

    /** A tick: the source's time then, and the time not counted up to then. */
    private record Tick(long sourceNs, long stalledNs) {
    }

    /**
     * @param source    the clock it follows, e.g. {@link System#nanoTime()}.
     * @param maxStepNs the longest step between two ticks counted as running time.
     */
    RunningClock(final LongSupplier source, final long maxStepNs) {
        if (maxStepNs <= 0) {
            throw new IllegalArgumentException("maxStepNs must be > 0, got " + maxStepNs);
        }
        this.source = source;
        this.maxStepNs = maxStepNs;
        this.last = new Tick(source.getAsLong(), 0);
    }

    @Override
    public long nanoTime() {
        if (!ticking && this == INSTANCE) {
            startTicking();
        }
        final Tick t = last; // before the source: the source's time is then at or after the tick's
        return Math.max(t.sourceNs, Math.min(source.getAsLong(), t.sourceNs + maxStepNs)) - t.stalledNs;
    }

    /** @return the time not counted up to the last tick: the steps beyond {@link #MAX_STEP_NS}, summed. */
    public long stalledNs() {
        return last.stalledNs;
    }

    /** The daemon thread's tick (one thread only): a step since the last beyond {@link #MAX_STEP_NS} is not counted. */
    void tick() {
        final Tick t = last;
        final long now = Math.max(source.getAsLong(), t.sourceNs);
        last = new Tick(now, t.stalledNs + Math.max(0, now - t.sourceNs - maxStepNs));
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
                tick();
            }
        }, "dlion-running-clock");
        ticker.setDaemon(true);
        ticker.start();
    }
}
