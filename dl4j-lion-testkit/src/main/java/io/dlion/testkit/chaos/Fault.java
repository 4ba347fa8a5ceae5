package io.dlion.testkit.chaos;

import java.util.Arrays;

/**
 * One fault of a {@link ChaosSchedule}.
 *
 * @param index      its number in the schedule, from 0.
 * @param atMs       when it starts, in ms after the job's workers were started.
 * @param kind       what it is.
 * @param targets    the workers it hits (kills, stop, loss), or the slice whose port it sprays (garbage), or the worker id the
 *                   stranger claims; never modified.
 * @param durationMs how long it lasts: a killed worker's down time before its restart, a stop's length, a burst's, a spray's,
 *                   the stranger's life.
 */
public record Fault(int index, long atMs, FaultKind kind, int[] targets, long durationMs) {

    /** @return when it ends (restart, SIGCONT, end of the burst or spray), in ms after the start. */
    public long endMs() {
        return atMs + durationMs;
    }

    /** @return one line, as the nemesis logs it and the schedule test compares it. */
    public String describe() {
        return String.format("#%d at %d ms: %s targets=%s for %d ms", index, atMs, kind.label(), Arrays.toString(targets), durationMs);
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof Fault && describe().equals(((Fault) o).describe());
    }

    @Override
    public int hashCode() {
        return describe().hashCode();
    }

    @Override
    public String toString() {
        return describe();
    }
}
