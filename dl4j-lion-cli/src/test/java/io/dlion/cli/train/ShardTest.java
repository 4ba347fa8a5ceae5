package io.dlion.cli.train;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

class ShardTest {
    @Test
    void shouldDealExamplesRoundRobin() {
        final DataSet data = new DataSet(Nd4j.arange(10).reshape(10, 1).castTo(org.nd4j.linalg.api.buffer.DataType.FLOAT),
            Nd4j.zeros(10, 2));
        final List<DataSet> shards = Trainer.shard(data, 3);
        assertEquals(3, shards.size());
        assertEquals(4, shards.get(0).numExamples());
        assertEquals(3, shards.get(2).numExamples());
        assertEquals(9.0, shards.get(0).getFeatures().getDouble(3, 0));
        assertEquals(5.0, shards.get(2).getFeatures().getDouble(1, 0));
    }
}
