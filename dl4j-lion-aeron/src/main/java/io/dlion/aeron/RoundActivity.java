package io.dlion.aeron;

import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.IdleStrategy;

/**
 * Whether this process has a round of the exchange in flight: from a worker's {@code submit} until its {@code await}
 * returns or throws (or its exchange closes). The embedded media driver idles by it ({@link #idleStrategy}): while a
 * round is in flight and moving it yields its core between duty cycles, so that no frame of the round waits for a park
 * to end; between rounds it backs off to parks as Aeron's default does, so a process waiting for its training step
 * burns no more than that default. A round's start wakes the threads parked there.
 * <p>
 * A round that makes no progress for {@link #STALL_NS} (no chunk sent, no frame read: {@link #progress()}) is stalled,
 * waiting for another worker, a server's failover or its round deadline, and the driver backs off then too. Yielding
 * through a stall only burnt the cores the others need: in a chaos soak on 2 cores, the survivors of a kill took 1.5 to
 * 1.9 cores while they waited out the dead server's 3 s of silence, against 0.9 to 1.4 while training; and a killed
 * process must get a core to be torn down and let its ports go (one took 11.5 s to die in such a soak). A stalled
 * round's next frame waits at most one park of the backoff (1 ms).
 * <p>
 * One per process: its driver serves every exchange of the process, and a round of any of them is work for it.
 * Measured in docs/benchmarks.md (<i>Datagrams that stay on the host, and a driver that follows the rounds</i>): over
 * UDP loopback, P = 18,978,314, N = 2, the round's median fell from 11.8-15.5 ms with Aeron's backoff alone to
 * 10.2-10.6 ms, with the same CPU between rounds; where many processes share few cores the yields cost more than they
 * save, and {@code -Daeron.shared.idle.strategy=backoff} brings back Aeron's own.
 */
public final class RoundActivity {
    /** How long a round in flight may go without progress before the driver backs off as between rounds: 100 ms. */
    public static final long STALL_NS = TimeUnit.MILLISECONDS.toNanos(100);

    private static final AtomicInteger ROUNDS = new AtomicInteger();
    private static final AtomicLong LAST_PROGRESS_NS = new AtomicLong(System.nanoTime());
    /** Threads that idle by {@link #idleStrategy}: woken when a round starts. Weak, so a stopped driver's thread goes. */
    private static final Set<Thread> IDLERS = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

    private RoundActivity() {
    }

    /** A round of this process starts: the first one in flight wakes every thread parked in {@link #idleStrategy}. */
    public static void begin() {
        progress();
        if (ROUNDS.getAndIncrement() == 0) {
            synchronized (IDLERS) {
                for (final Thread thread : IDLERS) {
                    LockSupport.unpark(thread);
                }
            }
        }
    }

    /** A round that {@link #begin} started has ended, with a result or without one. */
    public static void end() {
        if (ROUNDS.decrementAndGet() < 0) {
            ROUNDS.incrementAndGet();
            throw new IllegalStateException("a round ended that had not begun");
        }
    }

    /** A round in flight moved: a chunk went up or a frame came down. */
    public static void progress() {
        LAST_PROGRESS_NS.lazySet(System.nanoTime());
    }

    /** @return true while a round is in flight and has progressed within {@link #STALL_NS}. */
    static boolean isMoving() {
        return ROUNDS.get() > 0 && System.nanoTime() - LAST_PROGRESS_NS.get() < STALL_NS;
    }

    /** @return rounds of this process in flight now. */
    public static int inFlight() {
        return ROUNDS.get();
    }

    /**
     * @param betweenRounds how to idle while no round is in flight (for the media driver, Aeron's backoff).
     * @param maxSpins      busy spins after work before the first yield, in a round.
     * @return an idle strategy that spins, then yields, while a round is in flight and moving, and idles by
     *     {@code betweenRounds} otherwise (between rounds, and in a stalled round); one per thread.
     */
    public static IdleStrategy idleStrategy(final IdleStrategy betweenRounds, final int maxSpins) {
        return new InRound(betweenRounds, maxSpins);
    }

    private static final class InRound implements IdleStrategy {
        private final IdleStrategy betweenRounds;
        private final int maxSpins;
        private int spins;
        private boolean registered;

        InRound(final IdleStrategy betweenRounds, final int maxSpins) {
            if (maxSpins < 0) {
                throw new IllegalArgumentException("maxSpins must be >= 0, got " + maxSpins);
            }
            this.betweenRounds = betweenRounds;
            this.maxSpins = maxSpins;
        }

        @Override
        public void idle(final int workCount) {
            if (workCount > 0) {
                reset();
            } else {
                idle();
            }
        }

        @Override
        public void idle() {
            if (!registered) {
                registered = true;
                IDLERS.add(Thread.currentThread());
            }
            if (isMoving()) {
                betweenRounds.reset();
                if (spins < maxSpins) {
                    spins++;
                    Thread.onSpinWait();
                } else {
                    Thread.yield();
                }
            } else {
                spins = 0;
                betweenRounds.idle();
            }
        }

        @Override
        public void reset() {
            spins = 0;
            betweenRounds.reset();
        }

        @Override
        public String alias() {
            return "in-round";
        }
    }
}
