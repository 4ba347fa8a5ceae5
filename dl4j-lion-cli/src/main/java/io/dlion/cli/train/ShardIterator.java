package io.dlion.cli.train;

import java.util.List;
import java.util.function.UnaryOperator;

import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.DataSetPreProcessor;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;

/**
 * One worker's shard as the {@link io.dlion.job.DLionJob} reads it: the k-th {@link #reset()} shuffles the shard
 * with seed {@code seed + 1000 k + worker} (in place, so the order of epoch k depends on every earlier one) and cuts it
 * into batches; {@link #next()} applies the training augmentation. The order therefore depends only on how often the
 * iterator was reset, which is what lets a resumed or rejoining worker see the batches of the run that never stopped.
 * A shard with fewer full batches than an epoch's steps (a skewed partition) goes round again within the epoch: the
 * k-th reset appends further shuffles (seeds {@code seed + 1000 k + worker + 7919 j}, j = 1, 2, ...), full batches only.
 * <p>
 * A reset only records the epoch; its shuffles and cuts are done when the epoch's first batch is asked for, and an epoch
 * reset again before that is only shuffled, in the same order, never cut into batches. Cutting a shard into batches
 * copies every example twice, and a worker that rejoins or resumes late in a job resets once for every epoch it skips:
 * a chaos soak's restarted workers spent up to a minute of a loaded machine's time cutting 30 skipped epochs, while the
 * job went on without them.
 */
final class ShardIterator implements DataSetIterator {
    private static final long serialVersionUID = 1L;
    private final transient DataSet shard;
    private final int batch;
    private final long seed;
    private final int worker;
    private final transient UnaryOperator<DataSet> augment;
    private transient List<DataSet> batches = List.of();
    private int epoch;
    /** True from a reset until the epoch's batches are cut ({@link #cut()}). */
    private boolean uncut;
    private int cursor;
    private transient DataSetPreProcessor preProcessor;
    private final int minBatches;

    ShardIterator(final DataSet shard, final int batch, final long seed, final int worker, final UnaryOperator<DataSet> augment,
        final int minBatches) {
        this.minBatches = minBatches;
        this.shard = shard;
        this.batch = batch;
        this.seed = seed;
        this.worker = worker;
        this.augment = augment;
    }

    @Override
    public void reset() {
        if (uncut) {
            shuffleOnly(); // an epoch skipped: its shuffles, not its batches
        }
        if (minBatches > 0 && shard.numExamples() < batch) {
            throw new IllegalStateException("worker " + worker + "'s shard holds " + shard.numExamples() + " examples, fewer than one batch of "
                + batch);
        }
        epoch++;
        uncut = true;
        batches = List.of();
        cursor = 0;
    }

    /** The epoch's shuffles, as {@link #cut()} does them, without cutting the batches. */
    private void shuffleOnly() {
        uncut = false;
        shard.shuffle(seed + 1000L * epoch + worker);
        final int perPass = shard.numExamples() / batch; // full batches of one shuffle
        for (int j = 1; (long) j * perPass < minBatches; j++) {
            shard.shuffle(seed + 1000L * epoch + worker + 7919L * j);
        }
    }

    /** Shuffle the shard for the epoch and cut it into batches: once per epoch, at its first batch. */
    private void cut() {
        uncut = false;
        shard.shuffle(seed + 1000L * epoch + worker);
        batches = shard.batchBy(batch);
        for (int j = 1; fullBatches(batches) < minBatches; j++) {
            final List<DataSet> more = new java.util.ArrayList<>(batches.subList(0, fullBatches(batches)));
            shard.shuffle(seed + 1000L * epoch + worker + 7919L * j);
            more.addAll(shard.batchBy(batch));
            batches = more;
        }
    }

    private int fullBatches(final List<DataSet> list) {
        int n = list.size();
        while (n > 0 && list.get(n - 1).numExamples() < batch) {
            n--;
        }
        return n;
    }

    @Override
    public boolean hasNext() {
        if (uncut) {
            cut();
        }
        return cursor < batches.size();
    }

    @Override
    public DataSet next() {
        if (uncut) {
            cut();
        }
        final DataSet b = augment.apply(batches.get(cursor++));
        if (preProcessor != null) {
            preProcessor.preProcess(b);
        }
        return b;
    }

    @Override
    public DataSet next(final int num) {
        throw new UnsupportedOperationException("the batch size is fixed: batches are cut from the shard once per epoch");
    }

    @Override
    public int inputColumns() {
        return (int) shard.getFeatures().size(1);
    }

    @Override
    public int totalOutcomes() {
        return (int) shard.getLabels().size(1);
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
    public int batch() {
        return batch;
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
}
