package io.dlion.spark;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Random;

import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.DataSetPreProcessor;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;

/**
 * One task's partition cut into batches of the per-worker batch size, as the {@link DataSetIterator} its
 * {@code DLionJob} trains on. Every {@link #reset()} starts an epoch; with shuffling, the order of the k-th epoch
 * depends only on (seed, k, worker), so a job resumed from a checkpoint (which resets once for every epoch it skips)
 * sees the batches of the run that never stopped.
 */
final class PartitionBatches implements DataSetIterator {
    private static final long serialVersionUID = 1L;

    private final List<DataSet> batches;
    private final boolean shuffle;
    private final long seed;
    private final int worker;
    private final List<Integer> order = new ArrayList<>();
    private int resets;
    private int cursor;
    private DataSetPreProcessor preProcessor;

    /**
     * @param batches the batches, in partition order.
     * @param shuffle shuffle their order before every epoch.
     * @param seed    seed of the shuffle.
     * @param worker  the task's worker id (a different order on every worker).
     */
    PartitionBatches(final List<DataSet> batches, final boolean shuffle, final long seed, final int worker) {
        this.batches = batches;
        this.shuffle = shuffle;
        this.seed = seed;
        this.worker = worker;
        for (int i = 0; i < batches.size(); i++) {
            order.add(i);
        }
    }

    /**
     * Cut a partition into batches of {@code batchSize} examples, in order; a last, smaller batch is dropped (every
     * step of a worker has the same size).
     *
     * @param partition the partition's DataSets, of any size each.
     * @param batchSize examples per batch.
     * @return the batches.
     */
    static List<DataSet> cut(final Iterator<DataSet> partition, final int batchSize) {
        final List<DataSet> examples = new ArrayList<>();
        while (partition.hasNext()) {
            final DataSet d = partition.next();
            if (d.numExamples() > 0) {
                examples.add(d);
            }
        }
        final List<DataSet> batches = new ArrayList<>();
        if (examples.isEmpty()) {
            return batches;
        }
        final DataSet all = examples.size() == 1 ? examples.get(0) : DataSet.merge(examples);
        final int full = all.numExamples() / batchSize;
        if (full == 0) {
            return batches;
        }
        final List<DataSet> split = all.batchBy(batchSize);
        batches.addAll(split.subList(0, full));
        return batches;
    }

    /** @return batches per epoch. */
    int size() {
        return batches.size();
    }

    @Override
    public DataSet next(final int num) {
        throw new UnsupportedOperationException("batches have the per-worker batch size; call next()");
    }

    @Override
    public int inputColumns() {
        return batches.isEmpty() ? 0 : (int) batches.get(0).getFeatures().size(1);
    }

    @Override
    public int totalOutcomes() {
        return batches.isEmpty() ? 0 : (int) batches.get(0).getLabels().size(1);
    }

    @Override
    public boolean resetSupported() {
        return true;
    }

    @Override
    public boolean asyncSupported() {
        return false;
    }

    @Override
    public void reset() {
        resets++;
        cursor = 0;
        if (shuffle) {
            Collections.sort(order);
            Collections.shuffle(order, new Random(seed + 1000L * resets + worker));
        }
    }

    @Override
    public int batch() {
        return batches.isEmpty() ? 0 : batches.get(0).numExamples();
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
        return null;
    }

    @Override
    public boolean hasNext() {
        return cursor < batches.size();
    }

    @Override
    public DataSet next() {
        final DataSet d = batches.get(order.get(cursor++));
        if (preProcessor != null) {
            final DataSet copy = d.copy();
            preProcessor.preProcess(copy);
            return copy;
        }
        return d;
    }
}
