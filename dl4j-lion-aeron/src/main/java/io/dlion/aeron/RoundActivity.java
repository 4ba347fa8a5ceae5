package io.dlion.aeron;

import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.IdleStrategy;

/**
 * Whether this process has a round of the exchange in flight: from a worker's {@code submit} until its {@code await}
 * returns or throws (or its exchange closes). The embedded media driver idles by it ({@link #idleStrategy}): while a
 * round is in flight it yields its core between duty cycles, so that no frame of the round waits for a park to end;
 * between rounds it backs off to parks as Aeron's default does, so a process waiting for its training step burns no
 * more than that default. A round's start wakes the threads parked there.
 * <p>
 * One per process: its driver serves every exchange of the process, and a round of any of them is work for it.
 * Measured in docs/benchmarks.md (<i>Datagrams that stay on the host, and a driver that follows the rounds</i>): over
 * UDP loopback, P = 18,978,314, N = 2, the round's median fell from 11.8-15.5 ms with Aeron's backoff alone to
 * 10.2-10.6 ms, with the same CPU between rounds; where many processes share few cores the yields cost more than they
 * save, and {@code -Daeron.shared.idle.strategy=backoff} brings back Aeron's own.
 */
public final class RoundActivity {
    private static final AtomicInteger ROUNDS = new AtomicInteger();
    /** Threads that idle by {@link #idleStrategy}: woken when a round starts. Weak, so a stopped driver's thread goes. */
    private static final Set<Thread> IDLERS = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

    private RoundActivity() {
    }

    /** A round of this process starts: the first one in flight wakes every thread parked in {@link #idleStrategy}. */
    public static void begin() {
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

    /** @return rounds of this process in flight now. */
    public static int inFlight() {
        return ROUNDS.get();
    }

    /**
     * @param betweenRounds how to idle while no round is in flight (for the media driver, Aeron's backoff).
     * @param maxSpins      busy spins after work before the first yield, in a round.
     * @return an idle strategy that spins, then yields, while a round is in flight, and idles by {@code betweenRounds}
     *     otherwise; one per thread.
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
            if (ROUNDS.get() > 0) {
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
