package io.dlion.cli.fault;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.dlion.cli.train.EpochMetrics;
import io.dlion.cli.train.Sharing;
import io.dlion.cli.train.TrainConfigs;
import io.dlion.cli.train.Trainer;
import io.dlion.testkit.FaultPlan;
import io.dlion.testkit.FaultRun;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 6's judgement, small: real Fashion-MNIST training by 3 worker processes and a server over UDP loopback, 5%
 * receive loss on every process, worker 2 killed at 20% and restarted with --rejoin at 35%, the server killed at 55%
 * and restarted 1 s later, a garbage sender spraying mutated frames at the restarted server. Training finishes, the
 * three workers end bit-identical, every garbage frame is counted, accuracy is that of the undisturbed job within noise.
 */
@Tag("slow")
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class FaultRunTest {
    private static final int WORKERS = 3;

    @Test
    void shouldFinishBitIdenticalWithEveryFaultAtOnce() throws Exception {
        // kept after the run: the logs of every process are the evidence
        final Path dir = Path.of("target", "fault-run-test");
        final Trainer undisturbed = new Trainer(TrainConfigs.of("fashion-mnist", null, "mlp", "lion", Sharing.DLION_MAVO, WORKERS, "inproc",
            2, 60, 3e-4, 0, 42, 12_000, 2_000, 600, dir.resolve("undisturbed")), System.out);
        final List<EpochMetrics> baseline = undisturbed.run();
        final double baselineAccuracy = baseline.get(baseline.size() - 1).testAccuracy();

        final FaultPlan plan = new FaultPlan(31, WORKERS, undisturbed.parameterCount(), 2,
            List.of("--epochs", "2", "--batch", "60", "--seed", "42", "--train-limit", "12000", "--test-limit", "2000", "--lr", "3e-4"),
            2, 0.2, 0.35, 0.55, 1_000, 0.05, 200, 2_000, 600, dir.resolve("disturbed"));
        final FaultRun.Report report = new FaultRun(plan, System.out).run();
        System.out.println(report.markdown(baselineAccuracy));

        assertEquals(List.of(0, 0, 0), List.copyOf(report.exitCodes().values()), "every worker finished");
        assertTrue(report.identical(), "bit-identical parameters: " + report.hashes());
        assertTrue(report.rejoinRound() > 0, "worker 2 rejoined at round " + report.rejoinRound());
        assertTrue(report.detectedMs() >= 0 && report.detectedMs() < plan.roundTimeoutMs() + 5_000,
            "the dead worker was dropped within the round deadline (+ status line period): " + report.detectedMs() + " ms");
        assertTrue(report.garbageSent() > 100, "garbage was sent: " + report.garbageSent());
        assertEquals(report.garbageSent(), report.garbageRejected(), "every garbage frame rejected and counted");
        assertEquals(0L, report.finalServer().get("aborted"));
        final double accuracy = report.accuracies().get(0);
        assertTrue(Math.abs(accuracy - baselineAccuracy) < 0.04,
            "accuracy " + accuracy + " within noise of the undisturbed " + baselineAccuracy);
    }
}
