package io.dlion.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlion.Lion;
import io.dlion.cli.data.FashionMnist;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.Test;
import org.nd4j.evaluation.classification.Evaluation;
import org.nd4j.linalg.dataset.DataSet;

/**
 * Lion trains a real network on real data: 10k Fashion-MNIST training images (the Debian package
 * dataset-fashion-mnist, installed by ./dlion and .ci/run), two epochs, seeded. An untrained network
 * scores about 10%; an MLP trained with a working optimizer passes 75% on the first 2k test images in
 * two epochs (Lion reaches 79% here), so a broken sign, momentum or learning rate fails this.
 */
class LionLearnsFashionMnistTest {

    @Test
    void shouldLearnFashionMnistWithLion() throws Exception {
        final DataSet train = FashionMnist.load(FashionMnist.DEFAULT_DIR, true, 10_000);
        final DataSet test = FashionMnist.load(FashionMnist.DEFAULT_DIR, false, 2_000);
        final MultiLayerNetwork net = new MultiLayerNetwork(Models.mlp(new Lion(5e-4), 0.0, 1));
        net.init();

        final double before = net.evaluate(new ListDataSetIterator<>(test.batchBy(500))).accuracy();
        net.setInput(test.getFeatures());
        net.setLabels(test.getLabels());
        final double lossBefore = net.score(test);

        for (int epoch = 0; epoch < 2; epoch++) {
            net.fit(new ListDataSetIterator<>(train.batchBy(64)));
        }

        final Evaluation eval = net.evaluate(new ListDataSetIterator<>(test.batchBy(500)));
        final double lossAfter = net.score(test);
        System.out.printf("Lion on 10k Fashion-MNIST, 2 epochs: accuracy %.4f -> %.4f, loss %.4f -> %.4f%n", before, eval.accuracy(), lossBefore, lossAfter);
        assertTrue(before < 0.3, "untrained accuracy " + before);
        assertTrue(eval.accuracy() > 0.75, "accuracy after two epochs with Lion: " + eval.accuracy());
        assertTrue(lossAfter < 0.5 * lossBefore, "loss " + lossBefore + " -> " + lossAfter);
    }
}
