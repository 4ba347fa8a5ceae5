package io.dlion.exchange;

import java.util.Locale;

import org.HdrHistogram.Histogram;

/**
 * Where one worker's rounds spend their time, per phase, as HdrHistograms of nanoseconds, so that a user sees whether
 * the network or the model is the bottleneck:
 * <ul>
 *   <li>{@link Phase#COMPUTE}: from the end of the previous round to the start of packing: loading the batch, forward
 *       and backward pass, and every local step before the exchange (D-Lion: the Lion step that makes the vote);</li>
 *   <li>{@link Phase#PACK}: turning the local result into the message (D-Lion: signs to bits; dense: the gradient
 *       copied out as fp32);</li>
 *   <li>{@link Phase#WAIT}: submit and await, until the round's result is complete (sending, the server, receiving);</li>
 *   <li>{@link Phase#APPLY}: applying the result until the parameters are updated (D-Lion: {@code lr * Delta} and the
 *       step; dense: the updater, Lion or AdamW, on the mean, and the step).</li>
 * </ul>
 * Call order, on the training thread, per round: {@link #packStarted} (records compute since {@link #roundDone} of the
 * previous round) → {@link #record} of PACK, WAIT, APPLY → {@link #roundDone}. {@link #reset()} (between epochs, while
 * no round runs) clears the histograms and forgets the previous round's end, so the time between epochs (evaluation,
 * shuffling) is never counted as compute. Recording allocates nothing. Readers on other threads read after the
 * training thread finished its rounds (e.g. after joining it).
 */
public final class RoundTimes {
    /** The phases of a round, in order. */
    public enum Phase {
        COMPUTE("compute"), PACK("pack"), WAIT("wait"), APPLY("apply");

        private final String label;

        Phase(final String label) {
            this.label = label;
        }

        /** @return the phase's name in progress lines and CSV columns. */
        public String label() {
            return label;
        }
    }

    /**
     * Sees every time as it is recorded, e.g. an exporter that keeps its own histograms for the whole run (these are
     * reset between epochs). Called on the training thread: it must be quick and must not block.
     */
    @FunctionalInterface
    public interface Observer {
        /**
         * @param phase a phase.
         * @param nanos how long it took this round, as recorded.
         */
        void onRecord(Phase phase, long nanos);
    }

    /** Longest time a histogram holds: one hour; longer phases are recorded as one hour. */
    public static final long HIGHEST_NANOS = 3_600_000_000_000L;

    private static final Phase[] PHASES = Phase.values();
    private final Histogram[] histograms = new Histogram[PHASES.length];
    private long roundEndNs = -1;
    private volatile Observer observer;

    public RoundTimes() {
        for (int i = 0; i < histograms.length; i++) {
            // 1 us resolution, 2 significant digits: a few KiB each
            histograms[i] = new Histogram(1_000, HIGHEST_NANOS, 2);
        }
    }

    /**
     * Packing starts: the time since the previous round's {@link #roundDone} is this round's compute.
     *
     * @param nowNs now, {@code System.nanoTime()}.
     */
    public void packStarted(final long nowNs) {
        if (roundEndNs >= 0) {
            record(Phase.COMPUTE, nowNs - roundEndNs);
        }
    }

    /**
     * @param phase a phase.
     * @param nanos how long it took this round.
     */
    public void record(final Phase phase, final long nanos) {
        final long value = Math.min(Math.max(nanos, 0), HIGHEST_NANOS);
        histograms[phase.ordinal()].recordValue(value);
        final Observer o = observer;
        if (o != null) {
            o.onRecord(phase, value);
        }
    }

    /**
     * @param observer sees every time recorded from now on (replaces the previous one), or null for none.
     */
    public void observer(final Observer observer) {
        this.observer = observer;
    }

    /**
     * The round's result is applied.
     *
     * @param nowNs now, {@code System.nanoTime()}.
     */
    public void roundDone(final long nowNs) {
        roundEndNs = nowNs;
    }

    /** Clear every histogram and forget the previous round's end (between epochs). */
    public void reset() {
        for (final Histogram h : histograms) {
            h.reset();
        }
        roundEndNs = -1;
    }

    /** @return rounds recorded for the phase. */
    public long count(final Phase phase) {
        return histograms[phase.ordinal()].getTotalCount();
    }

    /** @return mean of the phase in milliseconds, 0 when nothing was recorded. */
    public double meanMillis(final Phase phase) {
        final Histogram h = histograms[phase.ordinal()];
        return h.getTotalCount() == 0 ? 0 : h.getMean() / 1e6;
    }

    /** @return 99th percentile of the phase in milliseconds, 0 when nothing was recorded. */
    public double p99Millis(final Phase phase) {
        final Histogram h = histograms[phase.ordinal()];
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(99) / 1e6;
    }

    /**
     * Add another worker's times (a JVM that trains several workers reports them together).
     *
     * @param other times of another worker, not recording concurrently.
     */
    public void add(final RoundTimes other) {
        for (int i = 0; i < histograms.length; i++) {
            histograms[i].add(other.histograms[i]);
        }
    }

    /** @return e.g. {@code "compute 12.1/15.0 pack 0.3/0.4 wait 40.2/61.0 apply 1.1/1.4 ms (mean/p99)"}. */
    public String summary() {
        final StringBuilder sb = new StringBuilder();
        for (final Phase p : PHASES) {
            sb.append(p.label()).append(' ').append(String.format(Locale.ROOT, "%.1f/%.1f", meanMillis(p), p99Millis(p))).append(' ');
        }
        return sb.append("ms (mean/p99)").toString();
    }
}
