package io.dlion.cli.train;

/**
 * One row of {@code metrics.csv}: the state after an epoch. Bytes and rounds are cumulative over the run
 * and over all workers; bytes are counted where they are sent or received, not computed from a formula. The last eight
 * columns are where this epoch's rounds spent their time ({@link io.dlion.exchange.RoundTimes}: compute, pack, wait,
 * apply; mean and p99 in milliseconds over the rounds of the epoch of the workers in this process); empty for runs
 * without an exchange. {@code wall_s} is the time since training started, {@code train_s} the same without the
 * evaluations after each epoch (the time a job needs to train).
 */
public final class EpochMetrics {
    public static final String CSV_HEADER = "epoch,rounds,test_accuracy,train_loss,bytes_up,bytes_down,params,workers,wall_s,train_s,"
        + "compute_ms,compute_p99_ms,pack_ms,pack_p99_ms,wait_ms,wait_p99_ms,apply_ms,apply_p99_ms";
    /** Columns of the round times: mean and p99 of compute, pack, wait, apply. */
    static final int TIME_COLUMNS = 8;

    final int epoch;
    final long rounds;
    final double testAccuracy;
    final double trainLoss;
    final long bytesUp;
    final long bytesDown;
    final long params;
    final int workers;
    final double wallSeconds;
    /** Like {@link #wallSeconds} without the evaluations after each epoch. */
    final double trainSeconds;
    /** Mean and p99 (ms) of compute, pack, wait and apply, or null. */
    final double[] timesMs;

    EpochMetrics(final int epoch, final long rounds, final double testAccuracy, final double trainLoss, final long bytesUp,
        final long bytesDown, final long params, final int workers, final double wallSeconds) {
        this(epoch, rounds, testAccuracy, trainLoss, bytesUp, bytesDown, params, workers, wallSeconds, wallSeconds, null);
    }

    EpochMetrics(final int epoch, final long rounds, final double testAccuracy, final double trainLoss, final long bytesUp,
        final long bytesDown, final long params, final int workers, final double wallSeconds, final double trainSeconds, final double[] timesMs) {
        this.trainSeconds = trainSeconds;
        if (timesMs != null && timesMs.length != TIME_COLUMNS) {
            throw new IllegalArgumentException("timesMs must have " + TIME_COLUMNS + " values, got " + timesMs.length);
        }
        this.timesMs = timesMs == null ? null : timesMs.clone();
        this.epoch = epoch;
        this.rounds = rounds;
        this.testAccuracy = testAccuracy;
        this.trainLoss = trainLoss;
        this.bytesUp = bytesUp;
        this.bytesDown = bytesDown;
        this.params = params;
        this.workers = workers;
        this.wallSeconds = wallSeconds;
    }

    public int epoch() {
        return epoch;
    }

    public double testAccuracy() {
        return testAccuracy;
    }

    public long bytesUp() {
        return bytesUp;
    }

    public long bytesDown() {
        return bytesDown;
    }

    public long rounds() {
        return rounds;
    }

    public long params() {
        return params;
    }

    public int workers() {
        return workers;
    }

    public double wallSeconds() {
        return wallSeconds;
    }

    /** @return seconds since training started, without the evaluations after each epoch. */
    public double trainSeconds() {
        return trainSeconds;
    }

    public double trainLoss() {
        return trainLoss;
    }

    /** @return mean and p99 (ms) of compute, pack, wait and apply, or null for a run without an exchange. */
    public double[] timesMs() {
        return timesMs == null ? null : timesMs.clone();
    }

    /**
     * @param times the rounds of this epoch (every worker of this process).
     * @return mean and p99 in ms of compute, pack, wait and apply.
     */
    static double[] timesOf(final io.dlion.exchange.RoundTimes times) {
        final double[] ms = new double[TIME_COLUMNS];
        int i = 0;
        for (final io.dlion.exchange.RoundTimes.Phase p : io.dlion.exchange.RoundTimes.Phase.values()) {
            ms[i++] = times.meanMillis(p);
            ms[i++] = times.p99Millis(p);
        }
        return ms;
    }

    String csv() {
        final StringBuilder sb = new StringBuilder(String.format(java.util.Locale.ROOT, "%d,%d,%.4f,%.5f,%d,%d,%d,%d,%.1f,%.2f", epoch, rounds,
            testAccuracy, trainLoss, bytesUp, bytesDown, params, workers, wallSeconds, trainSeconds));
        for (int i = 0; i < TIME_COLUMNS; i++) {
            sb.append(',');
            if (timesMs != null) {
                sb.append(String.format(java.util.Locale.ROOT, "%.3f", timesMs[i]));
            }
        }
        return sb.toString();
    }
}
