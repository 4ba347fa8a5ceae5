package io.dlion.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.dlion.cli.data.FashionMnist;
import io.dlion.job.DLionJob;
import org.apache.spark.api.java.JavaSparkContext;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;

/**
 * A real standalone Spark cluster on localhost: a Master and a Worker started as separate JVMs from the Maven
 * classpath, three executors in their own JVMs (one core each), the driver in this JVM. The Fashion-MNIST MLP trains
 * with D-Lion; one executor JVM is killed (SIGKILL) mid-training, Spark runs the barrier stage again, and the job
 * resumes from its checkpoints. It must end bit-identical on every executor, bit-identical to the uninterrupted
 * in-process run of the same shards, and within one point of its test accuracy.
 */
@Tag("slow")
class SparkStandaloneClusterTest {
    private static final int WORKERS = 3;
    private static final int EXAMPLES = 24_000;
    private static final int BATCH = 40;
    private static final int ROUNDS_PER_EPOCH = EXAMPLES / WORKERS / BATCH;
    private static final int EPOCHS = 2;
    private static final int CHECKPOINT_EVERY = 50;
    private static final long KILL_AFTER_ROUND = 120;

    /**
     * Aeron's client and driver give up on each other after 10 s without a heartbeat; on a machine shared by several
     * builds (load far above the core count) an executor's threads can stall that long (docs/cluster.md).
     */
    private static final String AERON_PATIENCE =
        " -Daeron.driver.timeout=60000 -Daeron.client.liveness.timeout=60000000000 -Daeron.publication.unblock.timeout=90000000000";

    private final List<Process> cluster = new ArrayList<>();
    private JavaSparkContext sc;
    private Path tmp;

    @AfterEach
    void tearDown() {
        if (sc != null) {
            sc.stop();
        }
        // the Worker's children are the executors: kill them first, then the Worker and the Master
        for (int i = cluster.size() - 1; i >= 0; i--) {
            final Process p = cluster.get(i);
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            try {
                p.waitFor(30, TimeUnit.SECONDS);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (tmp != null) {
            try (Stream<Path> files = Files.walk(tmp)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (final IOException e) {
                System.out.println("spark standalone: could not delete " + tmp + ": " + e);
            }
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES)
    void shouldSurviveAKilledExecutorAndEndBitIdenticalToTheInProcessRun() throws Exception {
        // under the module's build directory: executors, logs and checkpoints of a run that takes minutes stay out of
        // the shared temporary directory
        tmp = Files.createDirectories(Path.of("target", "spark-cluster-" + System.currentTimeMillis()).toAbsolutePath());
        final String master = startCluster(tmp);
        final Path progress = Files.createDirectories(tmp.resolve("progress"));
        sc = new JavaSparkContext(SparkTestSupport.localConf(master, "dlion-spark-standalone")
            .set("spark.executor.cores", "1").set("spark.cores.max", Integer.toString(WORKERS)).set("spark.executor.memory", "1g")
            .set("spark.executor.extraClassPath", testClassPath())
            .set("spark.executor.extraJavaOptions", System.getProperty("dlion.executorJvmFlags", DLionSparkTrainer.JAVA_17_FLAGS)
                + " -Dorg.bytedeco.javacpp.maxbytes=2g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.log.io.dlion=info"
                + AERON_PATIENCE)
            // Spark gives executors OMP_NUM_THREADS = spark.executor.cores; ND4J's results depend on its thread count, so
            // the executors get this JVM's (where the in-process reference runs)
            .set("spark.executorEnv.OMP_NUM_THREADS", ompThreads())
            .set("spark.stage.maxConsecutiveAttempts", "4"));
        awaitExecutors(WORKERS);

        final DLionSparkTrainer<MultiLayerNetwork> trainer = new DLionSparkTrainer<>(sc, SparkTestSupport.mlp(256), new DLionSparkOptions()
            .epochs(EPOCHS).batchSizePerWorker(BATCH).checkpoints(tmp.resolve("checkpoints").toString(), CHECKPOINT_EVERY)
            .roundTimeoutMillis(180_000).serverRoundTimeoutMillis(60_000)
            .listener(new ProgressFiles(progress.toString())));
        final String dataDir = SparkTestSupport.fashionMnistDir().toString();
        // every executor reads its own shard of the files (as a job reads its input), the driver sends no data
        final Thread killer = new Thread(() -> killWorkerOneExecutor(progress), "kill-executor");
        killer.setDaemon(true);
        killer.start();
        final MultiLayerNetwork trained = trainer.fit(sc.parallelize(List.of(0, 1, 2), WORKERS)
            .flatMap(w -> shard(Path.of(dataDir), w).iterator()));
        killer.join(TimeUnit.SECONDS.toMillis(30));

        final List<TaskReport> reports = trainer.reports();
        final Optional<Long> killed = killedPid(progress);
        assertTrue(killed.isPresent(), "an executor JVM was killed during the run");
        final Set<Long> pids = new HashSet<>();
        for (final TaskReport r : reports) {
            System.out.println("spark standalone: " + r);
            assertTrue(r.stageAttempt() >= 1, "the barrier stage ran again after the executor died: " + r);
            assertTrue(r.startRound() >= CHECKPOINT_EVERY && r.startRound() % CHECKPOINT_EVERY == 0,
                "resumed from a checkpoint, not from the start: " + r);
            assertEquals((long) EPOCHS * ROUNDS_PER_EPOCH, r.rounds(), r.toString());
            assertEquals(reports.get(0).paramsSha256(), r.paramsSha256(), "bit-identical on every executor: " + reports);
            assertNotEquals(killed.get(), r.executorPid(), "the killed executor cannot have finished: " + r);
            assertNotEquals(ProcessHandle.current().pid(), r.executorPid(), "tasks run in executor JVMs, not in the driver");
            pids.add(r.executorPid());
        }
        assertEquals(WORKERS, pids.size(), "one executor JVM per task: " + reports);

        final List<List<DataSet>> shards = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++) {
            shards.add(shard(SparkTestSupport.fashionMnistDir(), w));
        }
        final MultiLayerNetwork reference = (MultiLayerNetwork) SparkTestSupport.inProcess(shards, EPOCHS, () -> SparkTestSupport.mlp(256));
        final DataSet test = FashionMnist.load(SparkTestSupport.fashionMnistDir(), false, 0);
        final double sparkAccuracy = accuracy(trained, test);
        final double referenceAccuracy = accuracy(reference, test);
        System.out.printf("spark standalone: test accuracy %.2f%% (Spark, executor killed, resumed from round %d) vs %.2f%% (in-process)%n",
            100 * sparkAccuracy, reports.get(0).startRound(), 100 * referenceAccuracy);
        assertTrue(Math.abs(sparkAccuracy - referenceAccuracy) <= 0.01, "within one point of the in-process run");
        assertEquals(SparkTestSupport.sha256(reference.params()), SparkTestSupport.sha256(trained.params()),
            "bit-identical to the uninterrupted in-process run");
    }

    /** Worker {@code w}'s examples: the w-th third of the first {@link #EXAMPLES}, in batches of {@link #BATCH}. */
    private static List<DataSet> shard(final Path dataDir, final int w) throws IOException {
        final DataSet all = FashionMnist.load(dataDir, true, EXAMPLES);
        final int per = EXAMPLES / WORKERS;
        final List<DataSet> examples = new ArrayList<>();
        for (int i = w * per; i < (w + 1) * per; i++) {
            examples.add(all.get(i));
        }
        return DataSet.merge(examples).batchBy(BATCH);
    }

    private static double accuracy(final MultiLayerNetwork net, final DataSet test) {
        final DataSetIterator it = new ListDataSetIterator<>(test.batchBy(1000), 1);
        return net.evaluate(it).accuracy();
    }

    /** Waits until worker 1's executor has passed {@link #KILL_AFTER_ROUND} in the first attempt, then SIGKILLs its JVM. */
    private static void killWorkerOneExecutor(final Path progress) {
        final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(20);
        while (System.nanoTime() < deadline) {
            try (Stream<Path> files = Files.list(progress)) {
                final Optional<Path> past = files.filter(f -> f.getFileName().toString().startsWith("worker-1-attempt-0-pid-")
                    && !f.toString().endsWith(".tmp")).findFirst();
                if (past.isPresent()) {
                    final String[] f = past.get().getFileName().toString().split("-");
                    final long round = Long.parseLong(Files.readString(past.get()).trim().isEmpty() ? "0" : Files.readString(past.get()).trim());
                    if (round >= KILL_AFTER_ROUND) {
                        final long pid = Long.parseLong(f[5]);
                        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
                        Files.writeString(progress.resolve("killed"), Long.toString(pid));
                        System.out.println("spark standalone: killed executor JVM " + pid + " (worker 1) after round " + round);
                        return;
                    }
                }
                Thread.sleep(100);
            } catch (final IOException | NumberFormatException e) {
                continue;
            } catch (final InterruptedException e) {
                return;
            }
        }
    }

    private static Optional<Long> killedPid(final Path progress) throws IOException {
        final Path f = progress.resolve("killed");
        return Files.exists(f) ? Optional.of(Long.parseLong(Files.readString(f).trim())) : Optional.empty();
    }

    /** Every task writes its round to {@code <dir>/worker-W-attempt-A-pid-P}; the test kills by the pid it reads. */
    static final class ProgressFiles implements DLionSparkOptions.ListenerFactory {
        private static final long serialVersionUID = 1L;
        private final String dir;

        ProgressFiles(final String dir) {
            this.dir = dir;
        }

        @Override
        public DLionJob.Listener create(final int worker, final int stageAttempt) {
            final Path file = Path.of(dir, "worker-" + worker + "-attempt-" + stageAttempt + "-pid-" + ProcessHandle.current().pid());
            return new DLionJob.Listener() {
                @Override
                public void onRound(final DLionJob job, final double score) {
                    if (job.round() % 10 == 0) {
                        try {
                            final Path tmp = Files.writeString(Path.of(file + ".tmp"), Long.toString(job.round()));
                            Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                        } catch (final IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    }
                }
            };
        }
    }

    /** Starts the Master and the Worker JVMs; returns the master URL. */
    private String startCluster(final Path tmp) throws Exception {
        // the Worker builds each executor's classpath from SPARK_HOME/jars (empty here) plus spark.executor.extraClassPath
        final Path sparkHome = Files.createDirectories(tmp.resolve("spark-home"));
        Files.createDirectories(sparkHome.resolve("jars"));
        final int masterPort = freeTcpPort();
        final String url = "spark://127.0.0.1:" + masterPort;
        cluster.add(launch(tmp.resolve("master.log"), sparkHome, "org.apache.spark.deploy.master.Master",
            "--host", "127.0.0.1", "--port", Integer.toString(masterPort), "--webui-port", Integer.toString(freeTcpPort())));
        awaitPort(masterPort, tmp.resolve("master.log"));
        cluster.add(launch(tmp.resolve("worker.log"), sparkHome, "org.apache.spark.deploy.worker.Worker",
            "--host", "127.0.0.1", "--cores", Integer.toString(WORKERS), "--memory", "6g", "--webui-port", Integer.toString(freeTcpPort()),
            "--work-dir", Files.createDirectories(tmp.resolve("work")).toString(), url));
        return url;
    }

    private Process launch(final Path log, final Path sparkHome, final String mainClass, final String... args) throws IOException {
        final List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (final String flag : System.getProperty("dlion.executorJvmFlags", DLionSparkTrainer.JAVA_17_FLAGS).split("\\s+")) {
            if (!flag.isBlank()) {
                cmd.add(flag);
            }
        }
        cmd.add("-Xmx512m");
        cmd.add("-cp");
        cmd.add(testClassPath());
        cmd.add(mainClass);
        cmd.addAll(List.of(args));
        final ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        final Map<String, String> env = pb.environment();
        env.put("SPARK_HOME", sparkHome.toString());
        env.put("SPARK_SCALA_VERSION", "2.12");
        env.put("SPARK_LOCAL_IP", "127.0.0.1");
        return pb.start();
    }

    /** @return the OpenMP thread count ND4J uses in this JVM: its OMP_NUM_THREADS, else one per core. */
    private static String ompThreads() {
        final String env = System.getenv("OMP_NUM_THREADS");
        return env != null && !env.isBlank() ? env : Integer.toString(Runtime.getRuntime().availableProcessors());
    }

    /** @return the test's classpath (surefire hands it over in a property; java.class.path is its booter jar). */
    private static String testClassPath() {
        final String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        return String.join(File.pathSeparator, cp.split(File.pathSeparator));
    }

    private void awaitExecutors(final int n) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (sc.sc().statusTracker().getExecutorInfos().length < n + 1) {       // the driver counts as one
            if (System.nanoTime() > deadline) {
                fail("only " + (sc.sc().statusTracker().getExecutorInfos().length - 1) + " of " + n + " executors registered");
            }
            Thread.sleep(200);
        }
    }

    private static void awaitPort(final int port, final Path log) throws Exception {
        final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        while (System.nanoTime() < deadline) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                return;
            } catch (final IOException notYet) {
                Thread.sleep(200);
            }
        }
        fail("the Spark master did not listen on " + port + ":\n" + Files.readString(log));
    }

    private static int freeTcpPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
