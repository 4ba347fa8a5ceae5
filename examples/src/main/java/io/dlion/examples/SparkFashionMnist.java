package io.dlion.examples;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.dlion.cli.data.FashionMnist;
import io.dlion.spark.DLionSparkOptions;
import io.dlion.spark.DLionSparkTrainer;
import io.dlion.spark.TaskReport;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.dataset.DataSet;

/**
 * D-Lion on a Spark cluster: the user's own 784-256-10 network trained on Fashion-MNIST by
 * {@link DLionSparkTrainer}, one worker per partition (Spark's barrier execution mode), checkpoints in a directory
 * every executor reaches. Every executor reads its own shard of the files, so they must be at the same path on every
 * node (on one host they are). See docs/cluster.md, "Spark".
 * <pre>
 * java $FLAGS -cp ... io.dlion.examples.SparkFashionMnist MASTER WORKERS CHECKPOINT_DIR [EPOCHS] [TRAIN_LIMIT]
 * spark-submit --class io.dlion.examples.SparkFashionMnist ... app.jar - WORKERS CHECKPOINT_DIR
 * </pre>
 */
public final class SparkFashionMnist {
    private SparkFashionMnist() {
    }

    /**
     * @param args the master URL ({@code -} for the one spark-submit gives), the number of workers (partitions; the
     *             cluster needs that many free cores at once), a checkpoint directory every executor reaches, epochs
     *             (default 2) and training examples to use (default 0: all 60,000).
     * @throws Exception when training fails.
     */
    public static void main(final String[] args) throws Exception {
        final String master = args[0];
        final int workers = Integer.parseInt(args[1]);
        final String checkpoints = args[2];
        final int epochs = args.length > 3 ? Integer.parseInt(args[3]) : 2;
        final int trainLimit = args.length > 4 ? Integer.parseInt(args[4]) : 0;
        final String dataDir = FashionMnist.DEFAULT_DIR.toString();

        final SparkConf conf = new SparkConf().setAppName("dlion-fashion-mnist");
        if (!"-".equals(master)) {
            conf.setMaster(master);
        }
        // one core per executor, one executor per worker; the Java 17 flags on every executor
        conf.setIfMissing("spark.executor.cores", "1").setIfMissing("spark.cores.max", Integer.toString(workers));
        conf.setIfMissing("spark.executor.extraJavaOptions", DLionSparkTrainer.JAVA_17_FLAGS);
        // without an application jar (java -cp on one host): executors load the classes from this JVM's classpath
        conf.setIfMissing("spark.executor.extraClassPath", System.getProperty("java.class.path"));
        try (JavaSparkContext sc = new JavaSparkContext(conf)) {
            final List<Integer> ids = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                ids.add(w);
            }
            // README:spark:begin
            final JavaRDD<DataSet> data = sc.parallelize(ids, workers)                      // one partition per worker
                .flatMap(w -> shard(Path.of(dataDir), trainLimit, w, workers).iterator());    // each executor reads its shard
            final DLionSparkTrainer<MultiLayerNetwork> trainer = new DLionSparkTrainer<>(sc, OneModelPerProcess.twoLayerNetwork(),
                new DLionSparkOptions().epochs(epochs).batchSizePerWorker(40)
                    .checkpoints(checkpoints, 100));                                          // a retried stage resumes from here
            final MultiLayerNetwork trained = trainer.fit(data);                              // bit-identical on every task
            // README:spark:end
            for (final TaskReport r : trainer.reports()) {
                System.out.println(r);
            }
            final DataSet test = FashionMnist.load(Path.of(dataDir), false, 0);
            System.out.printf("Test accuracy after %d epochs: %.2f%%%n", epochs,
                100 * trained.evaluate(new ListDataSetIterator<>(test.batchBy(1000), 1)).accuracy());
            System.out.println("params-sha256 " + OneModelPerProcess.sha256(trained.params()));
        }
    }

    /**
     * @param dir   the Fashion-MNIST files.
     * @param limit training examples to use (0: all).
     * @param w     a worker.
     * @param n     workers.
     * @return worker w's examples (every n-th, from w), in one DataSet; the trainer cuts it into batches.
     * @throws Exception when the files cannot be read.
     */
    static List<DataSet> shard(final Path dir, final int limit, final int w, final int n) throws Exception {
        final DataSet all = FashionMnist.load(dir, true, limit);
        final List<DataSet> mine = new ArrayList<>();
        for (int i = w; i < all.numExamples(); i += n) {
            mine.add(all.get(i));
        }
        return List.of(DataSet.merge(mine));
    }
}
