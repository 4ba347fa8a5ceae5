package io.dlion.cli.train;

import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * A worker that starts late in a job (a rejoin or a resume) resets its shard once for every epoch it skips and must then
 * see the batches of the run that never stopped. The reference is the rule written out: the k-th epoch shuffles the
 * shard in place with seed {@code seed + 1000 k + worker} and cuts it into batches, and a shard with fewer full batches
 * than the epoch needs appends further shuffles (seeds {@code + 7919 j}), full batches only.
 */
class ShardIteratorTest {
    private static final int BATCH = 8;
    private static final long SEED = 42;
    private static final int WORKER = 3;

    @Test
    void shouldGiveTheBatchesOfTheRunThatNeverStoppedAfterSkippedEpochs() {
        for (final int minBatches : new int[] {0, 6, 13}) {
            final int examples = 37; // 4 full batches and one of 5 per shuffle
            final List<List<DataSet>> expected = reference(shard(examples), examples, minBatches, 6);
            for (int skipped = 0; skipped < 6; skipped++) {
                final ShardIterator it = new ShardIterator(shard(examples), BATCH, SEED, WORKER, UnaryOperator.identity(), minBatches);
                for (int e = 0; e < skipped; e++) {
                    it.reset(); // a skipped epoch: no batch is read
                }
                for (int e = skipped; e < 6; e++) {
                    it.reset();
                    final List<DataSet> got = new ArrayList<>();
                    while (it.hasNext()) {
                        got.add(it.next());
                    }
                    final List<DataSet> want = expected.get(e);
                    assertEquals(want.size(), got.size(), "batches of epoch " + (e + 1) + " after " + skipped + " skipped, min " + minBatches);
                    for (int b = 0; b < want.size(); b++) {
                        assertEquals(want.get(b).getFeatures(), got.get(b).getFeatures(),
                            "batch " + b + " of epoch " + (e + 1) + " after " + skipped + " skipped, min " + minBatches);
                        assertEquals(want.get(b).getLabels(), got.get(b).getLabels());
                    }
                }
            }
        }
    }

    @Test
    void shouldHaveNoBatchBeforeItsFirstReset() {
        assertFalse(new ShardIterator(shard(20), BATCH, SEED, WORKER, UnaryOperator.identity(), 0).hasNext());
    }

    /** Every epoch's batches by the rule, with every epoch cut. */
    private static List<List<DataSet>> reference(final DataSet shard, final int examples, final int minBatches, final int epochs) {
        final List<List<DataSet>> all = new ArrayList<>();
        for (int k = 1; k <= epochs; k++) {
            shard.shuffle(SEED + 1000L * k + WORKER);
            List<DataSet> batches = shard.batchBy(BATCH);
            int full = examples / BATCH;
            for (int j = 1; full < minBatches; j++) {
                final List<DataSet> more = new ArrayList<>(batches.subList(0, full));
                shard.shuffle(SEED + 1000L * k + WORKER + 7919L * j);
                more.addAll(shard.batchBy(BATCH));
                batches = more;
                full += examples / BATCH;
            }
            all.add(batches);
        }
        return all;
    }

    /** Examples whose features and label name their index. */
    private static DataSet shard(final int examples) {
        final DataSet d = new DataSet(Nd4j.arange(examples * 3L).castTo(DataType.FLOAT).reshape(examples, 3),
            Nd4j.arange(examples).castTo(DataType.FLOAT).reshape(examples, 1));
        return d;
    }
}
