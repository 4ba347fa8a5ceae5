package io.dlion.spark;

import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.dlion.Lion;
import io.dlion.cli.data.FashionMnist;
import io.dlion.exchange.InProcessVoteHub;
import io.dlion.job.DLionJob;
import io.dlion.vote.VoteRule;
import org.apache.spark.SparkConf;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.lossfunctions.LossFunctions.LossFunction;

/** Data, models and the in-process reference run shared by the Spark tests. */
final class SparkTestSupport {
    private SparkTestSupport() {
    }

    /**
     * @param master the master URL, e.g. {@code local[3,4]} or a standalone master's.
     * @param app    the application's name.
     * @return the configuration of a test's driver: on loopback, no UI.
     */
    static SparkConf localConf(final String master, final String app) {
        return new SparkConf().setMaster(master).setAppName(app)
            .set("spark.driver.host", "127.0.0.1").set("spark.driver.bindAddress", "127.0.0.1").set("spark.ui.enabled", "false");
    }

    /** @return where Fashion-MNIST is ({@code scripts/install-data.sh}), or the system property's directory. */
    static Path fashionMnistDir() {
        final String dir = System.getProperty("dlion.fashionMnistDir");
        return dir == null || dir.isBlank() || dir.startsWith("$") ? FashionMnist.DEFAULT_DIR : Path.of(dir);
    }

    /**
     * @param examples the first this many training examples.
     * @param batch    examples per DataSet.
     * @return them in file order, {@code batch} examples per DataSet.
     * @throws Exception when the data are missing.
     */
    static List<DataSet> trainBatches(final int examples, final int batch) throws Exception {
        return FashionMnist.load(fashionMnistDir(), true, examples).batchBy(batch);
    }

    /**
     * @param hidden units of the hidden layer.
     * @return 784-hidden-10 with Lion, seed 42.
     */
    static MultiLayerNetwork mlp(final int hidden) {
        final MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder()
            .seed(42)
            .updater(new Lion(1e-3))
            .list()
            .layer(new DenseLayer.Builder().nIn(784).nOut(hidden).activation(Activation.RELU).build())
            .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(hidden).nOut(10).activation(Activation.SOFTMAX).build())
            .build());
        net.init();
        return net;
    }

    /**
     * @param hidden units of the hidden layer.
     * @return the same network as {@link #mlp(int)}, as a ComputationGraph.
     */
    static ComputationGraph graph(final int hidden) {
        final ComputationGraph net = new ComputationGraph(new NeuralNetConfiguration.Builder()
            .seed(42)
            .updater(new Lion(1e-3))
            .graphBuilder()
            .addInputs("in")
            .addLayer("hidden", new DenseLayer.Builder().nIn(784).nOut(hidden).activation(Activation.RELU).build(), "in")
            .addLayer("out", new OutputLayer.Builder(LossFunction.MCXENT).nIn(hidden).nOut(10).activation(Activation.SOFTMAX).build(), "hidden")
            .setOutputs("out")
            .build());
        net.init();
        return net;
    }

    /**
     * The same job in one JVM: one thread per worker, each a {@link DLionJob} over its shard (one batch a step, in
     * order, no shuffle),
     * votes through an {@link InProcessVoteHub}.
     *
     * @param shards   each worker's batches.
     * @param epochs   epochs.
     * @param networks makes each worker's (identical) initial model.
     * @return worker 0's trained model.
     * @throws Exception when a worker fails.
     */
    static Model inProcess(final List<List<DataSet>> shards, final int epochs, final Supplier<Model> networks) throws Exception {
        final int n = shards.size();
        final InProcessVoteHub hub = new InProcessVoteHub(n, VoteRule.MAJORITY, TimeUnit.MINUTES.toMillis(10));
        final ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            final List<Future<Model>> done = new ArrayList<>();
            for (int w = 0; w < n; w++) {
                final int id = w;
                done.add(pool.submit(() -> {
                    try (DLionJob job = DLionJob.builder(networks.get(), new ListDataSetIterator<>(shards.get(id), 1),
                        hub.exchange(id)).epochs(epochs).build()) {
                        return job.fit();
                    }
                }));
            }
            final List<Model> models = new ArrayList<>();
            for (final Future<Model> f : done) {
                models.add(f.get(10, TimeUnit.MINUTES));
            }
            return models.get(0);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * @param params parameters.
     * @return SHA-256 of their values.
     * @throws Exception when SHA-256 is missing.
     */
    static String sha256(final INDArray params) throws Exception {
        Nd4j.getExecutioner().commit();
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(params.dup().data().asBytes()));
    }

    /** Fails worker {@code worker} once, in the first attempt of the stage, after round {@code round}. */
    static final class FailOnce implements DLionSparkOptions.ListenerFactory {
        private static final long serialVersionUID = 1L;
        private final int worker;
        private final long round;

        FailOnce(final int worker, final long round) {
            this.worker = worker;
            this.round = round;
        }

        @Override
        public DLionJob.Listener create(final int id, final int stageAttempt) {
            return new DLionJob.Listener() {
                @Override
                public void onRound(final DLionJob job, final double score) {
                    if (id == worker && stageAttempt == 0 && job.round() == round) {
                        throw new IllegalStateException("injected failure of worker " + id + " after round " + round);
                    }
                }
            };
        }
    }
}
