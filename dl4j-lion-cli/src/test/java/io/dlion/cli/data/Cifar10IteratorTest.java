package io.dlion.cli.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;

import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

/** Example i has every feature equal to i and label i % 10, so a batch shows which examples it holds. */
class Cifar10IteratorTest {

    private static final int N = 23;

    private static DataSet numbered() {
        final INDArray f = Nd4j.create(DataType.FLOAT, N, 4);
        final INDArray l = Nd4j.create(DataType.FLOAT, N, 10);
        for (int i = 0; i < N; i++) {
            f.getRow(i).assign(i);
            l.putScalar(i, i % 10, 1f);
        }
        return new DataSet(f, l);
    }

    private static List<Integer> epoch(final Cifar10Iterator it) {
        final List<Integer> ids = new ArrayList<>();
        while (it.hasNext()) {
            final DataSet b = it.next();
            for (int r = 0; r < b.numExamples(); r++) {
                final int id = b.getFeatures().getInt(r, 0);
                assertEquals(1f, b.getLabels().getFloat(r, id % 10), "label follows its example");
                ids.add(id);
            }
        }
        return ids;
    }

    @Test
    void shouldVisitEveryExampleOncePerEpochInANewOrder() {
        final Cifar10Iterator it = new Cifar10Iterator(numbered(), 5, null, 3);
        final List<Integer> first = epoch(it);
        it.reset();
        final List<Integer> second = epoch(it);
        assertEquals(N, first.size());
        assertEquals(N, first.stream().distinct().count());
        assertEquals(N, second.stream().distinct().count());
        assertNotEquals(first, second);
        assertEquals(1, it.epoch());
        assertFalse(it.hasNext());
        assertThrows(NoSuchElementException.class, it::next);
    }

    @Test
    void shouldRepeatForTheSameSeed() {
        assertEquals(epoch(new Cifar10Iterator(numbered(), 4, null, 9)), epoch(new Cifar10Iterator(numbered(), 4, null, 9)));
        assertNotEquals(epoch(new Cifar10Iterator(numbered(), 4, null, 9)), epoch(new Cifar10Iterator(numbered(), 4, null, 10)));
    }

    @Test
    void shouldMakeFullBatchesAndASmallerLastOne() {
        final Cifar10Iterator it = new Cifar10Iterator(numbered(), 10, null, 1);
        assertEquals(10, it.next().numExamples());
        assertEquals(10, it.next().numExamples());
        assertEquals(3, it.next().numExamples());
        assertEquals(4, it.inputColumns());
        assertEquals(10, it.totalOutcomes());
        assertEquals(Cifar10.LABELS, it.getLabels());
    }

    @Test
    void shouldAugmentEveryBatch() {
        final DataSet data = numbered();
        final INDArray features = Nd4j.rand(DataType.FLOAT, N, Cifar10.PIXELS);
        final DataSet images = new DataSet(features, data.getLabels());
        final Cifar10Iterator plain = new Cifar10Iterator(images, 8, null, 2);
        final Cifar10Iterator augmented = new Cifar10Iterator(images, 8, Cifar10Augment.standard(2), 2);
        final DataSet a = plain.next();
        final DataSet b = augmented.next();
        assertEquals(a.getLabels(), b.getLabels());
        assertArrayEquals(a.getFeatures().shape(), b.getFeatures().shape());
        assertNotEquals(a.getFeatures(), b.getFeatures());
    }
}
