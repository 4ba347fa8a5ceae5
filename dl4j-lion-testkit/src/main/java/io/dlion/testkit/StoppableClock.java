package io.dlion.testkit;

import java.util.concurrent.atomic.AtomicLong;

import org.agrona.concurrent.NanoClock;

/**
 * A nano clock that follows {@link System#nanoTime()} until a test stops it at a chosen time, and then stands still
 * there: a worker's own judgement of silence (which reads this clock) can then be put past a deadline at once, while
 * what runs on real clocks (the media driver dropping a connection) goes on.
 */
public final class StoppableClock implements NanoClock {
    private final AtomicLong stoppedAt = new AtomicLong();

    /**
     * Stand still from now on, {@code aheadNs} ahead of the real clock.
     *
     * @param aheadNs how far ahead of {@link System#nanoTime()} the clock stands.
     */
    public void stopAhead(final long aheadNs) {
        stoppedAt.set(System.nanoTime() + aheadNs);
    }

    @Override
    public long nanoTime() {
        final long stopped = stoppedAt.get();
        return stopped != 0 ? stopped : System.nanoTime();
    }
}
