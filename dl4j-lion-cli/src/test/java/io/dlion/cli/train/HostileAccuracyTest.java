package io.dlion.cli.train;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 6 item 7 on real training (full Fashion-MNIST, MLP, 5 workers, MaVo, 2 epochs): with k = 1 and k = 2 of the 5
 * workers sending random votes the job reaches the undisturbed accuracy within noise; with k = 1 inverted voter it still
 * converges (the majority bounds the damage) but loses accuracy, as docs/reliability.md reports.
 */
@Tag("slow")
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class HostileAccuracyTest {

    @TempDir
    Path dir;

    @Test
    void shouldReachTheUndisturbedAccuracyWithARandomMinorityAndStayBoundedWithAnInvertedOne() throws Exception {
        final double undisturbed = accuracy(0, "random");
        final double random1 = accuracy(1, "random");
        final double random2 = accuracy(2, "random");
        final double inverted1 = accuracy(1, "invert");
        System.out.printf("HostileAccuracyTest: undisturbed %.4f, k=1 random %.4f, k=2 random %.4f, k=1 inverted %.4f%n", undisturbed,
            random1, random2, inverted1);
        // the undisturbed job's spread over seeds is about 0.7 points (docs/reliability.md)
        assertTrue(Math.abs(random1 - undisturbed) < 0.01, "k=1 random within noise: " + random1 + " vs " + undisturbed);
        assertTrue(Math.abs(random2 - undisturbed) < 0.01, "k=2 random within noise: " + random2 + " vs " + undisturbed);
        assertTrue(inverted1 > 0.80 && inverted1 < undisturbed, "k=1 inverted converges, below the undisturbed job: " + inverted1);
    }

    private double accuracy(final int hostile, final String mode) throws Exception {
        final TrainConfig config = TrainConfigs.of("fashion-mnist", null, "mlp", "lion", Sharing.DLION_MAVO, 5, "inproc", 2, 125, 3e-4, 0, 42, 0,
            0, 600, dir.resolve(hostile + mode));
        TrainConfigs.hostile(config, hostile, mode);
        final List<EpochMetrics> metrics = new Trainer(config, new PrintStream(OutputStream.nullOutputStream())).run();
        return metrics.get(metrics.size() - 1).testAccuracy();
    }
}
