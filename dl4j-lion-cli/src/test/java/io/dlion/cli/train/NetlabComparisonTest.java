package io.dlion.cli.train;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The table of {@code ./dlion compare --netlab}: its numbers from the workers' metrics, computed by hand here. */
class NetlabComparisonTest {
    private static final double[] TIMES = {10, 12, 1, 2, 30, 45, 3, 4};

    private static EpochMetrics epoch(final int e, final double accuracy, final long bytes, final double trainSeconds) {
        return new EpochMetrics(e, 10L * e, accuracy, 0.5, bytes, bytes, 1000, 1, trainSeconds + 1, trainSeconds, TIMES);
    }

    @Test
    void shouldSumBytesOverWorkersAndTimeTheEpochsAfterTheFirst() {
        final NetlabComparison.Result mavo = new NetlabComparison.Result("D-Lion MaVo x2", List.of(
            List.of(epoch(1, 0.70, 100, 9.0), epoch(2, 0.81, 200, 11.0), epoch(3, 0.84, 300, 13.0)),
            List.of(epoch(1, 0.70, 100, 9.5), epoch(2, 0.81, 200, 11.5), epoch(3, 0.84, 300, 13.5))), 0, 1320, 7);
        final NetlabComparison.Result dense = new NetlabComparison.Result("dense G-Lion x2", List.of(
            List.of(epoch(1, 0.71, 1000, 20.0), epoch(2, 0.79, 2000, 30.0), epoch(3, 0.83, 3000, 40.0)),
            List.of(epoch(1, 0.71, 1000, 20.0), epoch(2, 0.79, 2000, 30.0), epoch(3, 0.83, 3000, 40.0))), 0, -1, -1);
        final NetlabComparison.Result failed = new NetlabComparison.Result("dense G-AdamW x2", List.of(List.of(), List.of()), 1, -1, -1);
        final List<EpochMetrics> job = mavo.job();
        assertEquals(3, job.size());
        assertEquals(300 + 300, job.get(2).bytesUp(), "bytes up of both workers");
        assertEquals(300 + 300, job.get(2).bytesDown(), "bytes down of both workers");
        assertEquals(2.0, NetlabComparison.secondsPerEpoch(job), 1e-9, "(13 - 9) / 2");
        assertEquals(11.0, NetlabComparison.secondsTo(job, 0.80));
        assertNull(NetlabComparison.secondsTo(job, 0.90));

        final String table = NetlabComparison.table(List.of(mavo, dense, failed), 0.80, "100mbit per link, sharded");
        assertTrue(table.startsWith("| run (100mbit per link, sharded) | s/epoch | s to 80.0% |"), table);
        assertTrue(table.contains("| D-Lion MaVo x2 | 2.0 | 11.0 | 84.00% | 1,200 | 1,320 (1.10x) | 7 | 10.0 (12.0) ms | 1.0 (2.0) ms | 30.0 (45.0) ms"
            + " | 3.0 (4.0) ms |"), table);
        assertTrue(table.contains("| dense G-Lion x2 | 10.0 | 40.0 | 83.00% | 12,000 | - | - |"), table);
        assertTrue(table.contains("| dense G-AdamW x2 | **failed** (exit 1"), table);
        assertTrue(table.contains("D-Lion MaVo against dense G-Lion: 5.00x faster per epoch, 3.64x faster to 80.0%."), table);
    }
}
