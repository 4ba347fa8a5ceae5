package io.dlion.cli.train;

import java.util.List;

import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.nd4j.linalg.dataset.DataSet;

/**
 * A list iterator (one batch per {@code next()}) that holds back its first batch after every reset by a fixed delay.
 * DL4J's threshold sharing deadlocks when worker 0 starts training on the root model (and holds its lock) before the
 * other ParallelWrapper replicas of the same {@code fit} have copied that model; delaying the first batch lets them
 * finish first.
 */
final class DelayedStartIterator extends ListDataSetIterator<DataSet> {
    private static final long serialVersionUID = 1L;

    private final long delayMillis;
    private boolean started;

    DelayedStartIterator(final List<DataSet> batches, final long delayMillis) {
        super(batches, 1);
        if (delayMillis < 0) {
            throw new IllegalArgumentException("delayMillis must be >= 0, got " + delayMillis);
        }
        this.delayMillis = delayMillis;
    }

    @Override
    public DataSet next() {
        if (!started) {
            started = true;
            try {
                Thread.sleep(delayMillis);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return super.next();
    }

    @Override
    public void reset() {
        super.reset();
        started = false;
    }
}
