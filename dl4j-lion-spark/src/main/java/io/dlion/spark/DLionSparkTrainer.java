package io.dlion.spark;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

import io.dlion.job.Partition;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.ComputationGraphConfiguration;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import scala.Tuple2;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Trains a DL4J {@link MultiLayerNetwork} or {@link ComputationGraph} with Distributed Lion on a Spark cluster, the
 * way {@code SparkDl4jMultiLayer} / {@code SparkComputationGraph} do with a {@code TrainingMaster}:
 * <pre>{@code
 * DLionSparkTrainer<MultiLayerNetwork> trainer = new DLionSparkTrainer<>(sc, net, new DLionSparkOptions()
 *     .epochs(2).batchSizePerWorker(32).checkpoints("/shared/dlion-ckpt", 100));
 * MultiLayerNetwork trained = trainer.fit(trainingData);     // a JavaRDD<DataSet>, one worker per partition
 * }</pre>
 * Every partition of the RDD is one D-Lion worker, run as one task of a stage in Spark's <b>barrier execution
 * mode</b>: all tasks start together (D-Lion is synchronous) and a task that fails makes Spark run the whole stage
 * again. Task 0 also runs the job's aggregation server; every task votes over Aeron UDP from an embedded media
 * driver in its executor JVM. A task whose round result is lost rejoins inside the stage
 * ({@link DLionSparkOptions#rejoinAttempts(int)}, {@link DLionSparkOptions#minVoters(int)}). With
 * {@link DLionSparkOptions#checkpoints(String, int) checkpoints} a retried stage resumes from the newest round every
 * task checkpointed, instead of starting over.
 * <p>
 * {@link #fit} returns this trainer's network with the trained parameters and task 0's updater state (its Lion
 * momentum), after checking that every task ended with bit-identical parameters. {@link #reports()} tells what every
 * task did (stage attempt, the round it started from, bytes on the wire, SHA-256 of its parameters).
 * <p>
 * The model must have {@link io.dlion.Lion} on every trainable layer (as for any D-Lion job), and the partitions at
 * most {@value DLionSparkOptions#MAX_WORKERS}; the cluster needs a free slot for every partition at once
 * ({@code rdd.repartition(n)} to fit it). Spark on Java 17 needs JVM flags on the driver and the executors: see
 * {@link #JAVA_17_FLAGS}.
 *
 * @param <M> MultiLayerNetwork or ComputationGraph.
 */
public final class DLionSparkTrainer<M extends Model> {
    private static final System.Logger LOG = System.getLogger(DLionSparkTrainer.class.getName());
    /**
     * JVM flags the driver and every executor need on Java 17: the {@code --add-opens} Spark documents, and the export
     * of {@code jdk.internal.misc} that Aeron's Agrona needs. Give them to {@code spark.driver.extraJavaOptions} (or the
     * driver's command line) and {@code spark.executor.extraJavaOptions}.
     */
    public static final String JAVA_17_FLAGS = String.join(" ",
        "--add-exports java.base/jdk.internal.misc=ALL-UNNAMED",
        "--add-opens java.base/java.lang=ALL-UNNAMED",
        "--add-opens java.base/java.lang.invoke=ALL-UNNAMED",
        "--add-opens java.base/java.lang.reflect=ALL-UNNAMED",
        "--add-opens java.base/java.io=ALL-UNNAMED",
        "--add-opens java.base/java.net=ALL-UNNAMED",
        "--add-opens java.base/java.nio=ALL-UNNAMED",
        "--add-opens java.base/java.util=ALL-UNNAMED",
        "--add-opens java.base/java.util.concurrent=ALL-UNNAMED",
        "--add-opens java.base/java.util.concurrent.atomic=ALL-UNNAMED",
        "--add-opens java.base/jdk.internal.ref=ALL-UNNAMED",
        "--add-opens java.base/sun.nio.ch=ALL-UNNAMED",
        "--add-opens java.base/sun.nio.cs=ALL-UNNAMED",
        "--add-opens java.base/sun.security.action=ALL-UNNAMED",
        "--add-opens java.base/sun.util.calendar=ALL-UNNAMED",
        "--add-opens java.security.jgss/sun.security.krb5=ALL-UNNAMED",
        "-Djdk.reflect.useDirectMethodHandle=false");

    private static final AtomicInteger FITS = new AtomicInteger();

    private final JavaSparkContext sc;
    private final M network;
    private final DLionSparkOptions options;
    private List<TaskReport> reports = List.of();

    /**
     * @param sc      the Spark context.
     * @param network an initialised MultiLayerNetwork or ComputationGraph with Lion; every task starts from its
     *                parameters, and {@link #fit} writes the trained ones back into it.
     * @param options the job's settings (validated here).
     */
    public DLionSparkTrainer(final JavaSparkContext sc, final M network, final DLionSparkOptions options) {
        this.sc = Objects.requireNonNull(sc, "sc");
        this.network = Objects.requireNonNull(network, "network");
        if (!(network instanceof MultiLayerNetwork || network instanceof ComputationGraph)) {
            throw new IllegalArgumentException("network must be a MultiLayerNetwork or a ComputationGraph, got " + network.getClass().getName());
        }
        if (network.params() == null || network.numParams() == 0) {
            throw new IllegalArgumentException("network must be initialised (init()) and have parameters");
        }
        this.options = Objects.requireNonNull(options, "options").conclude();
    }

    /**
     * @param sc      the Spark context.
     * @param conf    the network's configuration; the network is built and initialised here.
     * @param options the job's settings.
     * @return a trainer of a new MultiLayerNetwork.
     */
    public static DLionSparkTrainer<MultiLayerNetwork> of(final JavaSparkContext sc, final MultiLayerConfiguration conf, final DLionSparkOptions options) {
        final MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        return new DLionSparkTrainer<>(sc, net, options);
    }

    /**
     * @param sc      the Spark context.
     * @param conf    the graph's configuration; the graph is built and initialised here.
     * @param options the job's settings.
     * @return a trainer of a new ComputationGraph.
     */
    public static DLionSparkTrainer<ComputationGraph> of(final JavaSparkContext sc, final ComputationGraphConfiguration conf,
        final DLionSparkOptions options) {
        final ComputationGraph net = new ComputationGraph(conf);
        net.init();
        return new DLionSparkTrainer<>(sc, net, options);
    }

    /**
     * Train on the RDD, one D-Lion worker per partition, for {@link DLionSparkOptions#epochs()} epochs.
     *
     * @param given the training data: DataSets of any size, cut into batches of
     *              {@link DLionSparkOptions#batchSizePerWorker()} within each partition; with
     *              {@link DLionSparkOptions#partition(String, long)} first split again over as many workers as it has partitions.
     * @return this trainer's network, trained.
     * @throws IllegalStateException when the tasks did not end with bit-identical parameters.
     */
    public M fit(final JavaRDD<DataSet> given) {
        final JavaRDD<DataSet> data = options.partition() == null ? given
            : partition(given, given.getNumPartitions(), Partition.parse(options.partition(), "partition"), options.partitionSeed(),
                options.batchSizePerWorker());
        final int partitions = data.getNumPartitions();
        if (partitions < 1 || partitions > DLionSparkOptions.MAX_WORKERS) {
            throw new IllegalArgumentException("the RDD must have 1.." + DLionSparkOptions.MAX_WORKERS + " partitions (one D-Lion worker each), got "
                + partitions + "; repartition it");
        }
        options.checkMinVoters(partitions);
        final String run = sc.sc().applicationId() + "-fit" + FITS.incrementAndGet();
        final byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        final Broadcast<byte[]> initial = sc.broadcast(serialize(network));
        JobProgress progress = null;
        try {
            // the driver's progress line, fed by the tasks over UDP to the host Spark knows the driver by
            progress = options.progressMillis() > 0 ? new JobProgress(run, options.progressMillis(), System.out) : null;
            final BarrierTraining task = new BarrierTraining(initial, network instanceof ComputationGraph, options, run, secret,
                progress == null ? null : sc.getConf().get("spark.driver.host", "127.0.0.1"), progress == null ? 0 : progress.port());
            final ClassTag<TaskReport> tag = ClassTag$.MODULE$.apply(TaskReport.class);
            sc.setJobDescription("D-Lion: " + partitions + " workers, " + options.epochs() + " epoch(s), run " + run);
            // the barrier stage ends in a shuffle: Spark retries a failed barrier ShuffleMapStage as a whole, but aborts the
            // job when a barrier ResultStage fails
            final List<TaskReport> collected = new ArrayList<>(data.rdd().barrier().mapPartitions(task, false, tag).toJavaRDD()
                .mapToPair(r -> new Tuple2<>(r.worker(), r)).partitionBy(new HashPartitioner(1)).values().collect());
            collected.sort(Comparator.comparingInt(TaskReport::worker));
            reports = List.copyOf(collected);
        } catch (final java.net.SocketException ex) {
            throw new UncheckedIOException("cannot open the driver's progress socket", ex);
        } finally {
            if (progress != null) {
                progress.close();
            }
            sc.setJobDescription(null);
            initial.destroy();
        }
        adopt(check(reports, partitions));
        return network;
    }

    /**
     * Split examples over workers by label, as {@link Partition} says: every DataSet is cut into single examples, their
     * labels are collected on the driver, the split is drawn there from the seed, and each example goes to its worker's
     * partition, in the order of the examples (so the same data, seed and split give the same partitions).
     *
     * @param data        DataSets of any size with one-hot labels.
     * @param workers     partitions of the result (one D-Lion worker each).
     * @param partition   the split.
     * @param seed        its seed.
     * @param minExamples the fewest examples a worker may get (Dirichlet redraws until it holds).
     * @return an RDD of single examples with {@code workers} partitions; examples no worker holds are left out.
     */
    public static JavaRDD<DataSet> partition(final JavaRDD<DataSet> data, final int workers, final Partition partition, final long seed,
        final int minExamples) {
        final JavaRDD<DataSet> examples = data.flatMap(d -> d.asList().iterator());
        final List<Integer> labelList = examples.map(d -> d.getLabels().argMax(1).getInt(0)).collect();
        final int classes = (int) examples.first().getLabels().size(1);
        final int[] labels = labelList.stream().mapToInt(Integer::intValue).toArray();
        final int[][] split = partition.assign(labels, classes, workers, seed, minExamples);
        final int[] owner = new int[labels.length];
        java.util.Arrays.fill(owner, -1);
        for (int w = 0; w < split.length; w++) {
            for (final int i : split[w]) {
                owner[i] = w;
            }
        }
        LOG.log(System.Logger.Level.INFO, "partition " + partition + " (seed " + seed + "), examples per class per worker:\n"
            + Partition.table(Partition.counts(split, labels, classes)));
        return examples.zipWithIndex().filter(t -> owner[(int) (long) t._2()] >= 0).mapToPair(t -> new Tuple2<>(t._2(), t._1()))
            .repartitionAndSortWithinPartitions(new LabelPartitioner(owner, workers)).values();
    }

    /** @return the network this trainer trains (after {@link #fit}: trained). */
    public M network() {
        return network;
    }

    /** @return what every task of the last {@link #fit} reported, by worker id. */
    public List<TaskReport> reports() {
        return reports;
    }

    /** @return the settings. */
    public DLionSparkOptions options() {
        return options;
    }

    private static TaskReport check(final List<TaskReport> reports, final int partitions) {
        if (reports.size() != partitions) {
            throw new IllegalStateException("expected a report from each of " + partitions + " tasks, got " + reports.size());
        }
        final TaskReport first = reports.get(0);
        for (final TaskReport r : reports) {
            if (!r.paramsSha256().equals(first.paramsSha256()) || r.rounds() != first.rounds()) {
                throw new IllegalStateException("the workers ended with different parameters: " + reports);
            }
        }
        if (first.worker() != 0 || first.model() == null) {
            throw new IllegalStateException("worker 0 sent no model: " + reports);
        }
        return first;
    }

    private void adopt(final TaskReport zero) {
        final Model trained;
        try {
            trained = network instanceof ComputationGraph ? ModelSerializer.restoreComputationGraph(new ByteArrayInputStream(zero.model()), true)
                : ModelSerializer.restoreMultiLayerNetwork(new ByteArrayInputStream(zero.model()), true);
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot read the model worker 0 sent", e);
        }
        network.setParams(trained.params());
        final INDArray state = updaterState(trained);
        final INDArray mine = updaterState(network);
        if (state != null && mine != null) {
            mine.assign(state);
        }
        final String sha = BarrierTraining.sha256(network.params());
        if (!sha.equals(zero.paramsSha256())) {
            throw new IllegalStateException("the trained parameters changed on their way to the driver: " + sha + " vs " + zero.paramsSha256());
        }
    }

    private static INDArray updaterState(final Model m) {
        if (m instanceof MultiLayerNetwork) {
            return ((MultiLayerNetwork) m).getUpdater(true).getStateViewArray();
        }
        return ((ComputationGraph) m).getUpdater(true).getStateViewArray();
    }

    private static byte[] serialize(final Model m) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            ModelSerializer.writeModel(m, out, true);
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot serialize the network", e);
        }
        return out.toByteArray();
    }
}
