package io.dlion.cli.train;

/**
 * One row of {@code metrics.csv}: the state after an epoch. Bytes and rounds are cumulative over the run
 * and over all workers; bytes are counted where they are sent or received, not computed from a formula.
 */
public final class EpochMetrics {
    public static final String CSV_HEADER = "epoch,rounds,test_accuracy,train_loss,bytes_up,bytes_down,params,workers,wall_s";

    final int epoch;
    final long rounds;
    final double testAccuracy;
    final double trainLoss;
    final long bytesUp;
    final long bytesDown;
    final long params;
    final int workers;
    final double wallSeconds;

    EpochMetrics(final int epoch, final long rounds, final double testAccuracy, final double trainLoss, final long bytesUp,
        final long bytesDown, final long params, final int workers, final double wallSeconds) {
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

    public double trainLoss() {
        return trainLoss;
    }

    String csv() {
        return String.format(java.util.Locale.ROOT, "%d,%d,%.4f,%.5f,%d,%d,%d,%d,%.1f", epoch, rounds, testAccuracy, trainLoss, bytesUp, bytesDown,
            params, workers, wallSeconds);
    }
}
