package io.dlion.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

class PartitionBatchesTest {
    /** @return n examples whose single feature is its index, from {@code first}. */
    private static DataSet examples(final int first, final int n) {
        final float[] f = new float[n];
        for (int i = 0; i < n; i++) {
            f[i] = first + i;
        }
        return new DataSet(Nd4j.create(f, new long[] {n, 1}), Nd4j.zeros(n, 2));
    }

    private static List<Integer> firstFeatures(final PartitionBatches it) {
        final List<Integer> out = new ArrayList<>();
        while (it.hasNext()) {
            out.add((int) it.next().getFeatures().getFloat(0, 0));
        }
        return out;
    }

    @Test
    void shouldCutDataSetsOfAnySizeIntoFullBatchesInOrderDroppingTheRest() {
        // 3 + 7 + 5 = 15 examples, batches of 4: 0-3, 4-7, 8-11; 12-14 dropped
        final List<DataSet> batches = PartitionBatches.cut(List.of(examples(0, 3), examples(3, 7), examples(10, 5)).iterator(), 4);
        assertEquals(3, batches.size());
        for (int b = 0; b < 3; b++) {
            assertEquals(4, batches.get(b).numExamples());
            for (int i = 0; i < 4; i++) {
                assertEquals(4 * b + i, batches.get(b).getFeatures().getFloat(i, 0));
            }
        }
        assertTrue(PartitionBatches.cut(List.of(examples(0, 3)).iterator(), 4).isEmpty());
        assertTrue(PartitionBatches.cut(new ArrayList<DataSet>().iterator(), 4).isEmpty());
    }

    @Test
    void shouldGiveTheSameOrderForTheSameEpochAndWorkerOnly() {
        final List<DataSet> batches = PartitionBatches.cut(List.of(examples(0, 64)).iterator(), 4);
        final PartitionBatches a = new PartitionBatches(batches, true, 7, 1);
        final PartitionBatches b = new PartitionBatches(batches, true, 7, 1);
        a.reset();
        final List<Integer> epoch1 = firstFeatures(a);
        a.reset();
        final List<Integer> epoch2 = firstFeatures(a);
        b.reset();
        b.reset();
        assertEquals(epoch2, firstFeatures(b), "the k-th epoch's order depends only on k (a resumed job resets once per epoch)");
        assertNotEquals(epoch1, epoch2);
        final PartitionBatches other = new PartitionBatches(batches, true, 7, 2);
        other.reset();
        assertNotEquals(epoch1, firstFeatures(other), "another worker, another order");
        final PartitionBatches plain = new PartitionBatches(batches, false, 7, 1);
        plain.reset();
        final List<Integer> inOrder = firstFeatures(plain);
        for (int i = 0; i < inOrder.size(); i++) {
            assertEquals(4 * i, inOrder.get(i));
        }
        assertFalse(plain.hasNext());
    }
}
