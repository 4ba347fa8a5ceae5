package io.dlion.cli.train;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SweepTest {

    private static List<Sweep.Run> plan(final List<Integer> workers, final int workerBatch) {
        return Sweep.plan(List.of("mlp"), Sweep.METHODS, workers, workerBatch, List.of(3e-4, 1e-3), List.of(1e-3), List.of(1L, 2L));
    }

    @Test
    void shouldGrowTheGlobalBatchWithTheWorkersAtAFixedPerWorkerBatch() {
        for (final Sweep.Run run : plan(List.of(2, 4, 8, 16, 32), 8)) {
            assertEquals(8 * run.workers(), run.globalBatch(), run.toString());
            final TrainConfig c = Sweep.config(run, "fashion-mnist", null, 1, 0, 0, 60, Path.of("out"));
            assertEquals(8 * run.workers(), c.batch, "global batch of " + run);
            if (run.method().equals("mavo") || run.method().equals("avg")) {
                assertEquals(run.workers(), c.workers);
                assertEquals(8, c.workerBatch(), "per-worker batch of " + run);
            } else {
                // the global baseline trains one model at the same global batch
                assertEquals(1, c.workers);
                assertEquals(8 * run.workers(), c.workerBatch());
            }
            assertEquals(run.method().equals("adamw") ? "adamw" : "lion", c.optimizer);
        }
        assertEquals(256, Sweep.globalBatch(8, 32));
        assertThrows(ArithmeticException.class, () -> Sweep.globalBatch(Integer.MAX_VALUE, 2));
    }

    @Test
    void shouldPlanEveryMethodWorkerCountLearningRateAndSeed() {
        final List<Sweep.Run> runs = plan(List.of(2, 32), 16);
        // per N: mavo, avg, lion with 2 Lion rates, adamw with 1 AdamW rate; 2 seeds each
        assertEquals(2 * (3 * 2 + 1) * 2, runs.size());
        assertEquals(new Sweep.Run("mlp", "mavo", 2, 16, 3e-4, 1), runs.get(0));
        assertEquals(Path.of("o", "mlp", "mavo-n2-lr3e-4-s1"), runs.get(0).dir(Path.of("o")));
        assertEquals(Path.of("o", "mlp", "adamw-n32-lr1e-3-s2"), runs.get(runs.size() - 1).dir(Path.of("o")));
    }

    @Test
    void shouldNameTheOptionOfAnInvalidValue() {
        assertMessage("--workers", () -> plan(List.of(0), 8));
        assertMessage("--workers", () -> plan(List.of(), 8));
        assertMessage("--worker-batch", () -> plan(List.of(2), 0));
        assertMessage("--lr-lion", () -> Sweep.plan(List.of("mlp"), Sweep.METHODS, List.of(2), 8, List.of(-1.0), List.of(1e-3), List.of(1L)));
        assertMessage("--lr-adamw", () -> Sweep.plan(List.of("mlp"), Sweep.METHODS, List.of(2), 8, List.of(1e-3), List.of(), List.of(1L)));
        assertMessage("--methods", () -> Sweep.plan(List.of("mlp"), List.of("sgd"), List.of(2), 8, List.of(1e-3), List.of(1e-3), List.of(1L)));
        assertMessage("--models", () -> Sweep.plan(List.of("resnet"), Sweep.METHODS, List.of(2), 8, List.of(1e-3), List.of(1e-3), List.of(1L)));
        assertMessage("--seeds", () -> Sweep.plan(List.of("mlp"), Sweep.METHODS, List.of(2), 8, List.of(1e-3), List.of(1e-3), List.of()));
    }

    private static void assertMessage(final String option, final Runnable r) {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, r::run);
        assertTrue(e.getMessage().startsWith(option + " "), e.getMessage());
    }

    @Test
    void shouldPickTheLearningRateWithTheBestMeanOverSeedsAndMarkMissingCells() {
        final List<Sweep.Outcome> outcomes = new ArrayList<>();
        // lr 3e-4: seeds 0.80 and 0.70 (mean 0.75); lr 1e-3: 0.78 and 0.74 (mean 0.76) -> 1e-3 although 3e-4 has the best single run
        outcomes.add(outcome("mavo", 4, 3e-4, 1, 0.80));
        outcomes.add(outcome("mavo", 4, 3e-4, 2, 0.70));
        outcomes.add(outcome("mavo", 4, 1e-3, 1, 0.78));
        outcomes.add(outcome("mavo", 4, 1e-3, 2, 0.74));
        outcomes.add(Sweep.Outcome.of(new Sweep.Run("mlp", "lion", 4, 8, 3e-4, 1), List.of()));
        final Sweep.Best best = Sweep.best(outcomes, "mlp").get("mavo").get(4);
        assertEquals(1e-3, best.lr());
        assertEquals(0.76, best.meanAccuracy(), 1e-12);
        assertEquals(2, best.seeds());
        final String table = Sweep.table(outcomes, "mlp", List.of(4, 8), 8);
        assertTrue(table.contains("| D-Lion MaVo | 0.7600 (lr 1e-3, 2 seeds) | not run or failed |"), table);
        assertTrue(table.contains("| global Lion | not run or failed | not run or failed |"), table);
        assertTrue(table.contains("N=8 (batch 64)"), table);
        assertTrue(Sweep.gridTable(outcomes, "mlp").contains("| global Lion | 4 | 32 | 3e-4 | 1 | 0 | failed |  |"), Sweep.gridTable(outcomes, "mlp"));
    }

    @Test
    void shouldWriteLearningRatesAsOnTheCommandLine() {
        assertEquals("3e-4", Sweep.lrName(3e-4));
        assertEquals("1e-3", Sweep.lrName(1e-3));
        assertEquals("1.5E-4", Sweep.lrName(1.5e-4));
    }

    private static Sweep.Outcome outcome(final String method, final int n, final double lr, final long seed, final double accuracy) {
        return Sweep.Outcome.of(new Sweep.Run("mlp", method, n, 8, lr, seed),
            List.of(new EpochMetrics(1, 100, accuracy, 0.5, 0, 0, 1000, n, 1.0)));
    }
}
