package io.dlion.cli.data;

import java.util.List;
import java.util.NoSuchElementException;
import java.util.Random;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.DataSetPreProcessor;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;

/**
 * Mini-batches of an in-memory data set (CIFAR-10 from {@link Cifar10#load}), in a new seeded random order every
 * epoch, each batch optionally augmented by a {@link Cifar10Augment}.
 * <p>
 * Epoch e (counting the {@link #reset()} calls, the first epoch being 0) visits the examples in the order of a
 * Fisher–Yates shuffle seeded with {@code seed + e}; the last batch may be smaller. The same seed gives the same
 * batches. Not thread-safe; {@link #asyncSupported()} is true, so DL4J may prefetch from one background thread.
 */
public final class Cifar10Iterator implements DataSetIterator {

    private static final long serialVersionUID = 1L;

    private final DataSet data;
    private final int batchSize;
    private final long seed;
    private final Cifar10Augment augment;
    private DataSetPreProcessor preProcessor;
    private int[] order;
    private int epoch;
    private int cursor;

    /**
     * @param data      features {@code [n, …]} and labels {@code [n, classes]}.
     * @param batchSize examples per batch.
     * @param augment   applied to every batch's features, or null for none (evaluation).
     * @param seed      shuffling seed.
     */
    public Cifar10Iterator(final DataSet data, final int batchSize, final Cifar10Augment augment, final long seed) {
        if (data == null || data.numExamples() == 0) {
            throw new IllegalArgumentException("data must hold at least one example");
        }
        if (batchSize <= 0) {
            throw new IllegalArgumentException("batchSize must be positive: " + batchSize);
        }
        this.data = data;
        this.batchSize = batchSize;
        this.augment = augment;
        this.seed = seed;
        shuffle();
    }

    /** @return the epoch the next batch belongs to (0 before the first {@link #reset()}). */
    public int epoch() {
        return epoch;
    }

    @Override
    public boolean hasNext() {
        return cursor < order.length;
    }

    @Override
    public DataSet next() {
        return next(batchSize);
    }

    @Override
    public DataSet next(final int num) {
        if (!hasNext()) {
            throw new NoSuchElementException("epoch " + epoch + " is over; call reset()");
        }
        final int n = Math.min(num, order.length - cursor);
        final int[] rows = new int[n];
        System.arraycopy(order, cursor, rows, 0, n);
        cursor += n;
        INDArray features = data.getFeatures().getRows(rows);
        if (augment != null) {
            features = augment.apply(features);
        }
        final DataSet batch = new DataSet(features, data.getLabels().getRows(rows));
        if (preProcessor != null) {
            preProcessor.preProcess(batch);
        }
        return batch;
    }

    @Override
    public int inputColumns() {
        return (int) data.getFeatures().size(1);
    }

    @Override
    public int totalOutcomes() {
        return (int) data.getLabels().size(1);
    }

    @Override
    public boolean resetSupported() {
        return true;
    }

    @Override
    public boolean asyncSupported() {
        return true;
    }

    /** Starts the next epoch, in a new order. */
    @Override
    public void reset() {
        epoch++;
        shuffle();
    }

    @Override
    public int batch() {
        return batchSize;
    }

    @Override
    public void setPreProcessor(final DataSetPreProcessor preProcessor) {
        this.preProcessor = preProcessor;
    }

    @Override
    public DataSetPreProcessor getPreProcessor() {
        return preProcessor;
    }

    @Override
    public List<String> getLabels() {
        return totalOutcomes() == Cifar10.CLASSES ? Cifar10.LABELS : null;
    }

    private void shuffle() {
        final int n = data.numExamples();
        order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        final Random random = new Random(seed + epoch);
        for (int i = n - 1; i > 0; i--) {
            final int j = random.nextInt(i + 1);
            final int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        cursor = 0;
    }
}
