package io.dlion.exchange;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What one worker's exchange did, counted where it happens (bytes as they go on or come off the wire,
 * headers included). Readable from any thread while training runs.
 */
public final class ExchangeCounters {
    private final AtomicLong bytesUp = new AtomicLong();
    private final AtomicLong bytesDown = new AtomicLong();
    private final AtomicLong rounds = new AtomicLong();
    private final AtomicLong waitNanos = new AtomicLong();

    public void addBytesUp(final long bytes) {
        bytesUp.addAndGet(bytes);
    }

    public void addBytesDown(final long bytes) {
        bytesDown.addAndGet(bytes);
    }

    public void addRound(final long waitedNanos) {
        rounds.incrementAndGet();
        waitNanos.addAndGet(waitedNanos);
    }

    /** @return bytes this worker sent, headers included. */
    public long bytesUp() {
        return bytesUp.get();
    }

    /** @return bytes this worker received, headers included. */
    public long bytesDown() {
        return bytesDown.get();
    }

    /** @return rounds completed. */
    public long rounds() {
        return rounds.get();
    }

    /** @return total time spent waiting for results, in nanoseconds. */
    public long waitNanos() {
        return waitNanos.get();
    }
}
