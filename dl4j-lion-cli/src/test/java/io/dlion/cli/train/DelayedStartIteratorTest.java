package io.dlion.cli.train;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DelayedStartIteratorTest {

    @Test
    void shouldHoldBackOnlyTheFirstBatchAfterEveryResetAndGiveEveryBatchInOrder() {
        final List<DataSet> batches = List.of(batch(), batch(), batch());
        final DelayedStartIterator it = new DelayedStartIterator(batches, 200);
        for (int pass = 0; pass < 2; pass++) {
            long t = System.nanoTime();
            assertEquals(batches.get(0).getFeatures(), it.next().getFeatures());
            assertTrue(System.nanoTime() - t >= 200_000_000L, "first batch of pass " + pass + " held back");
            assertEquals(batches.get(1).getFeatures(), it.next().getFeatures());
            assertEquals(batches.get(2).getFeatures(), it.next().getFeatures());
            assertFalse(it.hasNext());
            it.reset();
        }
    }

    @Test
    void shouldRefuseANegativeDelay() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new DelayedStartIterator(List.of(batch()), -1));
        assertEquals("delayMillis must be >= 0, got -1", e.getMessage());
    }

    private static DataSet batch() {
        return new DataSet(Nd4j.rand(2, 3), Nd4j.rand(2, 2));
    }
}
