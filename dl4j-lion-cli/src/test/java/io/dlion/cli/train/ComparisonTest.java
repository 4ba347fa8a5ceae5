package io.dlion.cli.train;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ComparisonTest {
    private static final long PARAMS = 203_530;

    @TempDir
    Path dir;

    @Test
    void shouldCountDenseDataParallelBytesAsFourBytesPerParameterUpAndDownPerWorkerPerStep() {
        // 4 workers, 936 steps: (4 up + 4 down) x 203,530 x 4 x 936; the README's demo states 6,096,130,560 for this job
        assertEquals(6_096_130_560L, Comparison.denseEquivalentBytes(PARAMS, 4, 936));
        assertEquals(8L * PARAMS, Comparison.denseEquivalentBytes(PARAMS, 1, 1));
        assertEquals(0, Comparison.denseEquivalentBytes(PARAMS, 8, 0));
    }

    @Test
    void shouldMarkARunThatStoppedEarlyAsHungInTheEpochItStoppedIn() {
        assertNull(Comparison.hungNote(2, 2));
        assertEquals("hung in epoch 2", Comparison.hungNote(2, 1));
        assertEquals("hung in epoch 1", Comparison.hungNote(2, 0));
    }

    @Test
    void shouldShowGlobalRunsAtTheirDenseEquivalentAndHungRunsAsHung() throws Exception {
        final Map<String, List<EpochMetrics>> runs = runs();
        final String table = Comparison.table(runs, 2, 4);
        assertTrue(table.contains("| global Lion | 0.8400, 0.8600 | 814,120* | 814,120* | 1/1.0* (dense data-parallel equivalent x4, not measured) |"),
            table);
        assertTrue(table.contains("| DL4J threshold x4 (AdamW) | 0.8300 (**hung in epoch 2**"), table);
        assertTrue(table.contains("| DL4J threshold x4 (Lion) | **hung in epoch 1** (no progress; killed) |"), table);
        // measured: 100 rounds x 4 workers; 10,000,000 / 400 = 25,000 up, 16,000,000 / 400 = 40,000 down
        assertTrue(table.contains("| D-Lion MaVo x4 | 0.8500, 0.8650 | 25,000 | 40,000 | 1/25.0 |"), table);
        assertTrue(table.contains("computed, not measured"), table);
        Comparison.plot(dir, runs, 2, 4);
        for (final String png : List.of("accuracy_vs_epoch.png", "accuracy_vs_bytes.png", "accuracy_vs_bytes_log.png")) {
            assertTrue(Files.size(dir.resolve(png)) > 1000, png);
        }
    }

    @Test
    void shouldPlotGlobalRunsAtTheDenseEquivalentMegabytes() {
        final EpochMetrics global = new EpochMetrics(1, 100, 0.84, 0.4, 0, 0, PARAMS, 1, 1.0);
        assertEquals(Comparison.denseEquivalentBytes(PARAMS, 4, 100) / 1e6, Reports.mb(global, 4), 1e-9);
        final EpochMetrics measured = new EpochMetrics(1, 100, 0.84, 0.4, 3_000_000, 1_000_000, PARAMS, 4, 1.0);
        assertEquals(4.0, Reports.mb(measured, 4), 1e-12);
    }

    private static Map<String, List<EpochMetrics>> runs() {
        final Map<String, List<EpochMetrics>> runs = new LinkedHashMap<>();
        runs.put("global Lion", List.of(new EpochMetrics(1, 50, 0.84, 0.5, 0, 0, PARAMS, 1, 5.0),
            new EpochMetrics(2, 100, 0.86, 0.4, 0, 0, PARAMS, 1, 10.0)));
        runs.put("D-Lion MaVo x4", List.of(new EpochMetrics(1, 50, 0.85, 0.5, 5_000_000, 8_000_000, PARAMS, 4, 5.0),
            new EpochMetrics(2, 100, 0.865, 0.4, 10_000_000, 16_000_000, PARAMS, 4, 10.0)));
        runs.put("DL4J threshold x4 (AdamW)", List.of(new EpochMetrics(1, 50, 0.83, 0.5, 2_000_000, 6_000_000, PARAMS, 4, 5.0)));
        runs.put("DL4J threshold x4 (Lion)", List.of());
        return runs;
    }
}
