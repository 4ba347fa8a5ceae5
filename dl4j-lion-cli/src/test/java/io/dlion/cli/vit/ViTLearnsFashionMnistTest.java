package io.dlion.cli.vit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import io.dlion.Lion;
import io.dlion.cli.data.FashionMnist;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.dataset.DataSet;

/**
 * The ViT learns with Lion on real Fashion-MNIST images (Debian package dataset-fashion-mnist), seeded. The loss of
 * an untrained 10-class model is about ln 10 = 2.3; the mean loss of the last 10 steps must be below 0.8× the mean
 * of the first 10. Measured here: tiny preset, 100 steps of 32, Lion(1e-3): 2.21 → 0.81 (ratio 0.37);
 * the fast variant (hidden 32, 1 block, 40 steps): see {@link #shouldReduceTheLossOfASmallerViTQuickly()}.
 */
class ViTLearnsFashionMnistTest {

    private static final int BATCH = 32;

    @Test
    @Tag("slow")
    void shouldReduceTheLossOverTheFirstHundredStepsWithLion() throws Exception {
        final double[] losses = train(ViTConfig.tinyFashionMnist().toBuilder().updater(new Lion(1e-3)).build(), 100);
        assertLearns(losses, 0.8);
    }

    @Test
    void shouldReduceTheLossOfASmallerViTQuickly() throws Exception {
        final ViTConfig small = ViTConfig.tinyFashionMnist().toBuilder()
            .hidden(32).heads(2).depth(1).updater(new Lion(2e-3)).build();
        assertLearns(train(small, 40), 0.8);
    }

    private static double[] train(final ViTConfig config, final int steps) throws Exception {
        final DataSet data = FashionMnist.load(FashionMnist.DEFAULT_DIR, true, steps * BATCH);
        final List<DataSet> batches = data.batchBy(BATCH);
        final MultiLayerNetwork net = ViT.build(config);
        final double[] losses = new double[steps];
        for (int i = 0; i < steps; i++) {
            net.fit(batches.get(i));
            losses[i] = net.score();
        }
        return losses;
    }

    private static void assertLearns(final double[] losses, final double ratio) {
        double first = 0;
        double last = 0;
        for (int i = 0; i < 10; i++) {
            first += losses[i] / 10;
            last += losses[losses.length - 1 - i] / 10;
        }
        System.out.printf("ViT loss over %d steps: first 10 %.4f, last 10 %.4f, ratio %.3f%n",
            losses.length, first, last, last / first);
        assertTrue(first > 1.8, "untrained loss " + first);
        assertTrue(last < ratio * first, "loss did not fall: first 10 " + first + ", last 10 " + last);
    }
}
