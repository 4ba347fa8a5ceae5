package io.dlion.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import io.dlion.aeron.Topology;
import org.apache.spark.api.java.JavaSparkContext;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.dataset.DataSet;

/**
 * D-Lion through a real Spark scheduler in one JVM: {@code local[3]}, three barrier tasks, votes over Aeron UDP on
 * loopback, a small Fashion-MNIST subset; one task fails once and the retried stage resumes from the checkpoints.
 */
class SparkLocalTest {
    private static final int WORKERS = 3;
    private static final int BATCH = 32;
    private static final int ROUNDS_PER_EPOCH = 20;
    private static final int EPOCHS = 2;

    private static JavaSparkContext sc;

    @BeforeAll
    static void startSpark() {
        // local[N, maxFailures]: a failed barrier task makes the scheduler retry the whole stage
        sc = new JavaSparkContext(SparkTestSupport.localConf("local[" + WORKERS + ",4]", "dlion-spark-local"));
    }

    @AfterAll
    static void stopSpark() {
        if (sc != null) {
            sc.stop();
        }
    }

    @Test
    @Timeout(300)
    void shouldResumeFromCheckpointAfterATaskFailsAndEndBitIdenticalToTheInProcessRun() throws Exception {
        // under the module's build directory, where no other test's clean-up of the shared temporary directory reaches
        final Path checkpoints = Files.createDirectories(Path.of("target", "spark-local-" + System.currentTimeMillis()).toAbsolutePath());
        final List<DataSet> batches = SparkTestSupport.trainBatches(WORKERS * ROUNDS_PER_EPOCH * BATCH, BATCH);
        // worker 1 fails after round 13 of the first attempt; checkpoints every 8 rounds: the retry starts from round 8
        final DLionSparkTrainer<MultiLayerNetwork> trainer = new DLionSparkTrainer<>(sc, SparkTestSupport.mlp(64), new DLionSparkOptions()
            .epochs(EPOCHS).batchSizePerWorker(BATCH).checkpoints(checkpoints.toString(), 8)
            .roundTimeoutMillis(120_000).serverRoundTimeoutMillis(20_000)
            .listener(new SparkTestSupport.FailOnce(1, 13)));
        final String before = SparkTestSupport.sha256(trainer.network().params());

        final MultiLayerNetwork trained = trainer.fit(sc.parallelize(batches, WORKERS));

        final List<TaskReport> reports = trainer.reports();
        assertEquals(WORKERS, reports.size());
        for (final TaskReport r : reports) {
            assertEquals(1, r.stageAttempt(), "the stage ran again after the failure: " + r);
            assertEquals(8, r.startRound(), "resumed from the checkpoint of round 8, not from the start: " + r);
            assertEquals((long) EPOCHS * ROUNDS_PER_EPOCH, r.rounds(), r.toString());
            assertEquals(reports.get(0).paramsSha256(), r.paramsSha256(), "bit-identical parameters on every task: " + reports);
            assertTrue(r.bytesUp() > 0 && r.bytesDown() > 0, r.toString());
        }
        final String sha = SparkTestSupport.sha256(trained.params());
        assertNotEquals(before, sha);
        assertEquals(reports.get(0).paramsSha256(), sha, "the driver's network holds the trained parameters");

        // the same shards (parallelize splits the list in contiguous thirds), the same seed, in one JVM
        final List<List<DataSet>> shards = shards(batches);
        final String reference = SparkTestSupport.sha256(SparkTestSupport.inProcess(shards, EPOCHS, () -> SparkTestSupport.mlp(64)).params());
        assertEquals(reference, sha, "Spark run (failed once, resumed) and uninterrupted in-process run end bit-identical");
        try (Stream<Path> files = Files.walk(checkpoints)) {
            final List<Path> all = files.sorted(Comparator.reverseOrder()).toList();
            assertTrue(all.stream().anyMatch(f -> f.toString().endsWith("worker-1.zip")), "checkpoints were written: " + all);
            all.forEach(f -> f.toFile().delete());
        }
    }

    @Test
    @Timeout(300)
    void shouldTrainAComputationGraphBitIdenticalToTheInProcessRun() throws Exception {
        final List<DataSet> batches = SparkTestSupport.trainBatches(WORKERS * ROUNDS_PER_EPOCH * BATCH, BATCH);
        final DLionSparkTrainer<ComputationGraph> trainer = new DLionSparkTrainer<>(sc, SparkTestSupport.graph(32),
            new DLionSparkOptions().epochs(1).batchSizePerWorker(BATCH).topology(Topology.Kind.STAR));

        final ComputationGraph trained = trainer.fit(sc.parallelize(batches, WORKERS));

        for (final TaskReport r : trainer.reports()) {
            assertEquals(0, r.stageAttempt(), r.toString());
            assertEquals(0, r.startRound(), r.toString());
            assertEquals(ROUNDS_PER_EPOCH, r.rounds(), r.toString());
        }
        final List<List<DataSet>> shards = shards(batches);
        assertEquals(SparkTestSupport.sha256(SparkTestSupport.inProcess(shards, 1, () -> SparkTestSupport.graph(32)).params()),
            SparkTestSupport.sha256(trained.params()));
    }

    /** Every barrier task serves one slice (no server in task 0): the same parameters as the in-process run. */
    @Test
    @Timeout(300)
    void shouldTrainBitIdenticalWhenEveryTaskServesASlice() throws Exception {
        final List<DataSet> batches = SparkTestSupport.trainBatches(WORKERS * ROUNDS_PER_EPOCH * BATCH, BATCH);
        final DLionSparkTrainer<MultiLayerNetwork> trainer = new DLionSparkTrainer<>(sc, SparkTestSupport.mlp(64),
            // every task also serves its metrics (worker, slice server, driver): the parameters are the same without them
            new DLionSparkOptions().epochs(1).batchSizePerWorker(BATCH).topology(Topology.Kind.SHARDED).metricsPort(0).progressMillis(100));

        final MultiLayerNetwork trained = trainer.fit(sc.parallelize(batches, WORKERS));

        for (final TaskReport r : trainer.reports()) {
            assertEquals(ROUNDS_PER_EPOCH, r.rounds(), r.toString());
        }
        final List<List<DataSet>> shards = shards(batches);
        assertEquals(SparkTestSupport.sha256(SparkTestSupport.inProcess(shards, 1, () -> SparkTestSupport.mlp(64)).params()),
            SparkTestSupport.sha256(trained.params()));
    }

    /**
     * Local steps (H = 4) through Spark with a Dirichlet label split drawn by the trainer: every task ends bit-identical,
     * with one vote per 4 steps, and the split gives each task the examples {@link io.dlion.job.Partition} assigns it.
     */
    @Test
    @Timeout(300)
    void shouldTrainLocalStepsOnALabelSkewedSplit() throws Exception {
        final List<DataSet> batches = SparkTestSupport.trainBatches(WORKERS * ROUNDS_PER_EPOCH * BATCH, BATCH);
        final io.dlion.job.Partition skew = io.dlion.job.Partition.parse("dirichlet:0.5", "partition");
        final List<DataSet> split = DLionSparkTrainer.partition(sc.parallelize(batches, 2), WORKERS, skew, 5, BATCH).glom().collect()
            .stream().map(DataSet::merge).toList();
        final DataSet all = DataSet.merge(batches);
        final int[] labels = all.getLabels().argMax(1).toIntVector();
        final int[][] expected = io.dlion.job.Partition.counts(skew.assign(labels, 10, WORKERS, 5, BATCH), labels, 10);
        for (int w = 0; w < WORKERS; w++) {
            final int[] got = new int[10];
            for (final int l : split.get(w).getLabels().argMax(1).toIntVector()) {
                got[l]++;
            }
            org.junit.jupiter.api.Assertions.assertArrayEquals(expected[w], got, "worker " + w + "'s examples per class");
        }

        final DLionSparkTrainer<MultiLayerNetwork> trainer = new DLionSparkTrainer<>(sc, SparkTestSupport.mlp(32), new DLionSparkOptions()
            .epochs(1).batchSizePerWorker(BATCH).topology(Topology.Kind.STAR).partition("dirichlet:0.5", 5)
            .localSteps(new io.dlion.dist.LocalSteps().steps(4)));
        trainer.fit(sc.parallelize(batches, WORKERS));
        final int steps = Math.min(split.get(0).numExamples(), Math.min(split.get(1).numExamples(), split.get(2).numExamples())) / BATCH;
        for (final TaskReport r : trainer.reports()) {
            assertEquals(trainer.reports().get(0).paramsSha256(), r.paramsSha256(), "bit-identical parameters on every task");
            assertEquals((steps + 3) / 4, r.rounds(), "one vote per 4 steps (the last outer step shorter): " + r);
        }
    }

    /** @return each worker's batches as {@code parallelize} splits the list: contiguous parts, one per worker. */
    private static List<List<DataSet>> shards(final List<DataSet> batches) {
        final List<List<DataSet>> shards = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++) {
            shards.add(batches.subList(w * ROUNDS_PER_EPOCH, (w + 1) * ROUNDS_PER_EPOCH));
        }
        return shards;
    }

    @Test
    void shouldRejectAWrongOptionNamingIt() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> new DLionSparkTrainer<>(sc, SparkTestSupport.mlp(8), new DLionSparkOptions().epochs(1)));
        assertTrue(e.getMessage().contains("batchSizePerWorker"), e.getMessage());
        final IllegalArgumentException every = assertThrows(IllegalArgumentException.class,
            () -> new DLionSparkOptions().batchSizePerWorker(8).checkpoints(null, 5).conclude());
        assertTrue(every.getMessage().contains("checkpointDir"), every.getMessage());
        final IllegalArgumentException port = assertThrows(IllegalArgumentException.class,
            () -> new DLionSparkOptions().batchSizePerWorker(8).votePort(65535).conclude());
        assertTrue(port.getMessage().contains("votePort"), port.getMessage());
        final IllegalArgumentException topology = assertThrows(IllegalArgumentException.class,
            () -> new DLionSparkOptions().batchSizePerWorker(8).topology(Topology.Kind.SERVERS).conclude());
        assertTrue(topology.getMessage().contains("topology"), topology.getMessage());
        final IllegalArgumentException metrics = assertThrows(IllegalArgumentException.class,
            () -> new DLionSparkOptions().batchSizePerWorker(8).metricsPort(-2).conclude());
        assertTrue(metrics.getMessage().contains("metricsPort"), metrics.getMessage());
        final IllegalArgumentException ui = assertThrows(IllegalArgumentException.class,
            () -> new DLionSparkOptions().batchSizePerWorker(8).ui("uihost:9000").conclude());
        assertTrue(ui.getMessage().contains("ui"), ui.getMessage());
        final IllegalArgumentException progress = assertThrows(IllegalArgumentException.class,
            () -> new DLionSparkOptions().batchSizePerWorker(8).progressMillis(-1).conclude());
        assertTrue(progress.getMessage().contains("progressMillis"), progress.getMessage());
    }

    @Test
    void shouldRunWithTheDocumentedJava17Flags() {
        final List<String> args = ManagementFactory.getRuntimeMXBean().getInputArguments();
        final String line = String.join(" ", args).replace('=', ' ');
        for (final String flag : DLionSparkTrainer.JAVA_17_FLAGS.split(" (?=--|-D|-XX)")) {
            assertTrue(line.contains(flag.replace('=', ' ')), "the test JVM (the driver) lacks " + flag + " of JAVA_17_FLAGS: " + args);
        }
    }
}
