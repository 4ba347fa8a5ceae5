package io.dlion.cli.train;

import java.io.PrintStream;

/**
 * A progress line every two seconds: step, steps/s, loss, bytes on the wire so far and, for runs with an exchange, where
 * this worker's rounds of the epoch spent their time (compute, pack, wait, apply: mean/p99 in ms).
 */
final class Progress {
    private static final long EVERY_NANOS = 2_000_000_000L;

    private final PrintStream out;
    private final int epoch;
    private final int steps;
    private final boolean quiet;
    private final long start = System.nanoTime();
    private long lastPrint = start;
    private int done;
    private int first;

    Progress(final PrintStream out, final int epoch, final int steps, final boolean quiet) {
        this.out = out;
        this.epoch = epoch;
        this.steps = steps;
        this.quiet = quiet;
    }

    /**
     * @param step the step this epoch starts at (a worker that joined in the middle of it).
     * @return this.
     */
    Progress startAt(final int step) {
        done = step;
        first = step;
        return this;
    }

    void step(final double loss, final long bytesUp, final long bytesDown) {
        step(loss, bytesUp, bytesDown, null);
    }

    /**
     * @param times this worker's round times of the epoch, read on its training thread, or null.
     */
    void step(final double loss, final long bytesUp, final long bytesDown, final io.dlion.exchange.RoundTimes times) {
        done++;
        final long now = System.nanoTime();
        if (quiet || now - lastPrint < EVERY_NANOS) {
            return;
        }
        lastPrint = now;
        out.printf("  epoch %d  step %d/%d  %.1f steps/s  loss %.4f  wire up %,d B down %,d B%s%n", epoch, done, steps,
            (done - first) / ((now - start) / 1e9), loss, bytesUp, bytesDown, times == null ? "" : "  " + times.summary());
    }
}
