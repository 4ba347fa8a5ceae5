package io.dlion.cli.train;

import io.dlion.testkit.HostileExchange;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;

import io.dlion.Lion;
import io.dlion.dist.DLionAccumulator;
import io.dlion.dist.DLionCheckpoint;
import io.dlion.cli.Models;
import io.dlion.cli.data.Cifar10;
import io.dlion.cli.data.Cifar10Augment;
import io.dlion.cli.data.FashionMnist;
import io.dlion.cli.vit.ViT;
import io.dlion.cli.vit.ViTConfig;
import io.dlion.exchange.ExchangeCounters;
import io.dlion.exchange.JoinNotice;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.VoteRule;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.solvers.accumulation.EncodedGradientsAccumulator;
import org.deeplearning4j.optimize.solvers.accumulation.encoding.residual.ResidualClippingPostProcessor;
import org.deeplearning4j.optimize.solvers.accumulation.encoding.threshold.AdaptiveThresholdAlgorithm;
import org.deeplearning4j.parallelism.ParallelWrapper;
import org.nd4j.evaluation.classification.Evaluation;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.learning.config.IUpdater;

/**
 * Runs one training configuration end to end: data, model(s), sharing, evaluation after every epoch,
 * and the outputs ({@code metrics.csv}, plots, the {@code params-sha256} lines).
 */
public final class Trainer {
    private final TrainConfig config;
    private final PrintStream out;

    public Trainer(final TrainConfig config, final PrintStream out) {
        this.config = config.validate();
        this.out = out;
    }

    /** @return the number of parameters of the configured model. */
    public long parameterCount() {
        return newModel().numParams();
    }

    /**
     * Run only some workers of the job in this process, against a transport to a remote server.
     *
     * @param localWorkers worker ids trained here.
     * @param remote       opens the transport.
     * @return the metrics of every epoch.
     */
    public List<EpochMetrics> runAs(final int[] localWorkers, final java.util.function.Supplier<VoteTransport> remote) throws Exception {
        return runAs(localWorkers, remote, null);
    }

    /**
     * Run one worker of the job in this process against a remote server, with rejoin, hand-over and checkpoints.
     *
     * @param localWorkers worker ids trained here.
     * @param remote       opens the transport.
     * @param recovery     how this worker survives faults, or null.
     * @return the metrics of every epoch.
     */
    public List<EpochMetrics> runAs(final int[] localWorkers, final java.util.function.Supplier<VoteTransport> remote, final Recovery recovery)
        throws Exception {
        if (recovery != null && localWorkers.length != 1) {
            throw new IllegalArgumentException("rejoin and checkpoints are for one worker per process");
        }
        config.localWorkers = localWorkers.clone();
        config.remote = remote;
        config.recovery = recovery == null ? null : recovery.validate();
        return run();
    }

    /** @return the metrics of every epoch; the files are written to the configured output directory. */
    public List<EpochMetrics> run() throws Exception {
        final DataSet train = loadData(true);
        final DataSet test = loadData(false);
        Files.createDirectories(config.out);
        final List<EpochMetrics> metrics;
        switch (config.sharing) {
            case NONE:
                metrics = runGlobal(train, test);
                break;
            case DL4J_THRESHOLD:
                metrics = runThreshold(train, test);
                break;
            default:
                metrics = runDLion(train, test);
                break;
        }
        Reports.writeCsv(config.out.resolve("metrics.csv"), metrics);
        Reports.plotRun(config.out, config.label(), metrics);
        return metrics;
    }

    private DataSet loadData(final boolean train) throws IOException {
        final int limit = train ? config.trainLimit : config.testLimit;
        if (config.dataset == TrainConfig.Dataset.CIFAR10) {
            return Cifar10.load(config.dataDir, train, limit);
        }
        return FashionMnist.load(config.dataDir != null ? config.dataDir : FashionMnist.DEFAULT_DIR, train, limit);
    }

    /** @return per-batch training augmentation: random crop and flip for CIFAR-10, none for Fashion-MNIST. */
    private UnaryOperator<DataSet> augmentation(final int worker) {
        if (config.dataset != TrainConfig.Dataset.CIFAR10) {
            return UnaryOperator.identity();
        }
        final Cifar10Augment augment = Cifar10Augment.standard(config.seed * 31 + worker);
        return batch -> new DataSet(augment.apply(batch.getFeatures()), batch.getLabels());
    }

    IUpdater updater() {
        return "lion".equals(config.optimizer) ? new Lion(config.learningRate()) : new Adam(config.learningRate());
    }

    Model newModel() {
        final MultiLayerConfiguration conf;
        switch (config.model) {
            case "mlp":
                conf = Models.mlp(updater(), config.weightDecay, config.seed);
                break;
            case "cnn":
                conf = Models.cnn(updater(), config.weightDecay, config.seed);
                break;
            case "vit-tiny":
                return ViT.build(ViTConfig.tinyFashionMnist().toBuilder().updater(updater()).weightDecay(config.weightDecay).seed(config.seed).build());
            default:
                return ViT.build(ViTConfig.paper().toBuilder().updater(updater()).weightDecay(config.weightDecay).seed(config.seed).build());
        }
        final MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        return net;
    }

    private List<EpochMetrics> runGlobal(final DataSet train, final DataSet test) {
        final Model model = newModel();
        header(model);
        final UnaryOperator<DataSet> augment = augmentation(0);
        final List<EpochMetrics> metrics = new ArrayList<>();
        final long start = System.nanoTime();
        long steps = 0;
        for (int epoch = 1; epoch <= config.epochs; epoch++) {
            train.shuffle(config.seed + epoch);
            final List<DataSet> batches = train.batchBy(config.batch);
            final Progress progress = new Progress(out, epoch, batches.size(), config.quiet);
            double lossSum = 0;
            for (final DataSet b : batches) {
                fit(model, augment.apply(b));
                lossSum += model.score();
                steps++;
                progress.step(model.score(), 0, 0);
            }
            metrics.add(epochDone(epoch, steps, model, test, lossSum / batches.size(), 0, 0, 1, start));
        }
        printHash(0, model);
        return metrics;
    }

    private List<EpochMetrics> runDLion(final DataSet train, final DataSet test) throws Exception {
        final int n = config.workers;
        final int[] local = config.localWorkers != null ? config.localWorkers : java.util.stream.IntStream.range(0, n).toArray();
        final int k = local.length;
        final VoteRule rule = config.sharing == Sharing.DLION_MAVO ? VoteRule.MAJORITY : VoteRule.AVERAGE;
        final List<Model> models = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            models.add(newModel());
        }
        header(models.get(0));
        final List<DataSet> allShards = shard(train, n);
        final List<DataSet> shards = new ArrayList<>();
        final List<UnaryOperator<DataSet>> augmentations = new ArrayList<>();
        for (final int id : local) {
            shards.add(allShards.get(id));
            augmentations.add(augmentation(id));
        }
        final List<EpochMetrics> metrics = new ArrayList<>();
        final ExecutorService pool = Executors.newFixedThreadPool(k);
        try (VoteTransport transport = config.remote != null ? config.remote.get()
            : VoteTransport.open(config.transport, n, rule, models.get(0).numParams())) {
            final List<ExchangeCounters> counters = new ArrayList<>();
            final List<DLionAccumulator> accumulators = new ArrayList<>();
            final List<VoteExchange> reals = new ArrayList<>();
            long startRound = 0;
            final List<Future<VoteExchange>> connecting = new ArrayList<>();
            for (final int id : local) {
                connecting.add(pool.submit(() -> transport.exchange(id)));
            }
            for (int i = 0; i < k; i++) {
                final VoteExchange real = connecting.get(i).get(120, TimeUnit.SECONDS);
                final VoteExchange exchange = local[i] < config.hostile
                    ? new HostileExchange(real, config.hostileMode, config.seed * 7919 + local[i]) : real;
                counters.add(exchange.counters());
                reals.add(real);
                final long timeoutMs = TimeUnit.SECONDS.toMillis(config.epochTimeoutSeconds);
                final Recovery recovery = config.recovery;
                if (recovery != null && recovery.rejoin()) {
                    final DLionAccumulator acc = rejoin(transport, local[i], exchange, timeoutMs);
                    models.set(i, acc.model());
                    accumulators.add(acc);
                    startRound = acc.round();
                } else if (recovery != null && recovery.resume()) {
                    final DLionCheckpoint own = DLionCheckpoint.read(recovery.checkpointOf(local[i]));
                    final DLionAccumulator acc = own.resume(exchange, timeoutMs);
                    models.set(i, acc.model());
                    accumulators.add(acc);
                    startRound = acc.round();
                    out.printf("worker %d resumed from %s at round %d%n", local[i], own.file(), startRound);
                } else {
                    accumulators.add(DLionAccumulator.forModel(models.get(i), exchange, timeoutMs));
                }
            }
            final long start = System.nanoTime();
            long rounds = 0;
            // every worker runs the same number of rounds: the smallest shard decides (all workers know all shard sizes)
            int shortest = Integer.MAX_VALUE;
            for (final DataSet s : allShards) {
                shortest = Math.min(shortest, s.numExamples() / config.workerBatch());
            }
            final int stepsPerEpoch = shortest;
            final int startEpoch = (int) (startRound / stepsPerEpoch) + 1;
            final int startStep = (int) (startRound % stepsPerEpoch);
            for (int epoch = 1; epoch < startEpoch; epoch++) {
                // a worker that resumes later in the job shuffles its shard as it would have: the same batches from here on
                for (int i = 0; i < k; i++) {
                    shards.get(i).shuffle(config.seed + 1000L * epoch + local[i]);
                }
            }
            final List<List<JoinNotice>> notices = new ArrayList<>();
            for (int i = 0; i < k; i++) {
                notices.add(new ArrayList<>());
            }
            for (int epoch = startEpoch; epoch <= config.epochs; epoch++) {
                final List<List<DataSet>> batches = new ArrayList<>();
                for (int i = 0; i < k; i++) {
                    shards.get(i).shuffle(config.seed + 1000L * epoch + local[i]);
                    batches.add(shards.get(i).batchBy(config.workerBatch()));
                }
                final int firstStep = epoch == startEpoch ? startStep : 0;
                final Progress progress = new Progress(out, epoch, stepsPerEpoch, config.quiet).startAt(firstStep);
                final double[] loss = new double[k];
                final List<Future<?>> running = new ArrayList<>();
                for (int i = 0; i < k; i++) {
                    final int w = i;
                    final UnaryOperator<DataSet> augment = augmentations.get(w);
                    running.add(pool.submit(() -> {
                        for (int s = firstStep; s < stepsPerEpoch; s++) {
                            fit(models.get(w), augment.apply(batches.get(w).get(s)));
                            loss[w] += models.get(w).score();
                            if (config.recovery != null) {
                                afterStep(local[w], reals.get(w), accumulators.get(w), notices.get(w));
                            }
                            if (w == 0) {
                                progress.step(models.get(0).score(), sum(counters, true), sum(counters, false));
                            }
                        }
                        return null;
                    }));
                }
                awaitAll(running, epoch);
                rounds = (long) epoch * stepsPerEpoch;
                double meanLoss = 0;
                for (final double l : loss) {
                    meanLoss += l / (stepsPerEpoch - firstStep) / k;
                }
                metrics.add(epochDone(epoch, rounds, models.get(0), test, meanLoss, sum(counters, true), sum(counters, false), k, start));
            }
            for (final DLionAccumulator acc : accumulators) {
                acc.close();
            }
        } finally {
            pool.shutdownNow();
        }
        for (int i = 0; i < k; i++) {
            printHash(local[i], models.get(i));
        }
        return metrics;
    }

    /**
     * This worker restarts in a running job: the server names its first round R and a donor, the donor writes its
     * parameters as of the start of round R to the sync directory, and this worker continues from them with zero
     * momentum (a fresh worker's; its old momentum belonged to parameters the job has left).
     */
    private DLionAccumulator rejoin(final VoteTransport transport, final int id, final VoteExchange exchange, final long timeoutMs)
        throws Exception {
        final JoinNotice notice = transport.awaitJoin(timeoutMs);
        if (notice.donor() < 0) {
            throw new IllegalStateException("worker " + id + ": the server named no live worker to take the parameters from");
        }
        final Path file = config.recovery.handoverOf(id, notice.round());
        out.printf("worker %d rejoins at round %d: waiting for worker %d's parameters in %s%n", id, notice.round(), notice.donor(), file);
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!Files.exists(file)) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("worker " + id + ": donor worker " + notice.donor() + " did not write " + file + " within "
                    + timeoutMs + " ms (is --sync-dir the same directory on every worker?)");
            }
            transport.pollIdle();
            Thread.sleep(1);
        }
        final DLionAccumulator acc = DLionCheckpoint.read(file).rejoin(DLionCheckpoint.Momentum.ZERO, null, exchange, timeoutMs);
        out.printf("worker %d took worker %d's parameters of round %d (momentum zero)%n", id, notice.donor(), acc.round());
        return acc;
    }

    /** Between steps: hand the job's parameters to a rejoining worker when this worker is its donor; write checkpoints. */
    private void afterStep(final int id, final VoteExchange exchange, final DLionAccumulator acc, final List<JoinNotice> pending) {
        final Recovery recovery = config.recovery;
        final long round = acc.round();
        pending.addAll(exchange.takeJoinNotices());
        for (final java.util.Iterator<JoinNotice> it = pending.iterator(); it.hasNext();) {
            final JoinNotice n = it.next();
            if (n.donor() != id) {
                it.remove();
            } else if (recovery.syncDir() == null) {
                out.printf("worker %d: worker %d rejoins and this worker is its donor, but has no --sync-dir%n", id, n.worker());
                it.remove();
            } else if (n.round() == round) {
                final Path file = recovery.handoverOf(n.worker(), round);
                DLionCheckpoint.write(file, acc.model(), acc);
                out.printf("worker %d handed worker %d the parameters of round %d: %s%n", id, n.worker(), round, file);
                it.remove();
            } else if (n.round() < round) {
                out.printf("worker %d: missed the hand-over to worker %d at round %d (now at %d)%n", id, n.worker(), n.round(), round);
                it.remove();
            }
        }
        if (recovery.checkpointEvery() > 0 && round % recovery.checkpointEvery() == 0) {
            DLionCheckpoint.write(recovery.checkpointOf(id), acc.model(), acc);
        }
    }

    private List<EpochMetrics> runThreshold(final DataSet train, final DataSet test) throws Exception {
        final int n = config.workers;
        final Model model = newModel();
        header(model);
        final int boundary = (int) (model.numParams() / 16 + 5);
        final CountingEncodingHandler handler = new CountingEncodingHandler(new AdaptiveThresholdAlgorithm(),
            new ResidualClippingPostProcessor(5.0, 5), boundary, n);
        final EncodedGradientsAccumulator accumulator = new EncodedGradientsAccumulator(n, handler,
            (long) boundary * 4 * (n + 3), n + 2, Integer.MAX_VALUE, false);
        final ParallelWrapper wrapper = new ParallelWrapper.Builder<>(model)
            .workers(n)
            .prefetchBuffer(2)
            .trainingMode(ParallelWrapper.TrainingMode.CUSTOM)
            .gradientsAccumulator(accumulator)
            .build();
        final List<EpochMetrics> metrics = new ArrayList<>();
        final ExecutorService runner = Executors.newSingleThreadExecutor();
        boolean hung = false;
        try {
            final long start = System.nanoTime();
            long steps = 0;
            for (int epoch = 1; epoch <= config.epochs; epoch++) {
                train.shuffle(config.seed + epoch);
                final UnaryOperator<DataSet> augment = augmentation(epoch);
                final List<DataSet> batches = new ArrayList<>();
                for (final DataSet b : train.batchBy(config.workerBatch())) {
                    batches.add(augment.apply(b));
                }
                final int e = epoch;
                if (!config.quiet) {
                    out.printf("epoch %d: %d batches of %d over %d ParallelWrapper workers (DL4J threshold sharing)%n", e, batches.size(),
                        config.workerBatch(), n);
                }
                final Future<?> fit = runner.submit(() -> wrapper.fit(new ListDataSetIterator<>(batches, 1)));
                try {
                    fit.get(config.epochTimeoutSeconds, TimeUnit.SECONDS);
                } catch (final TimeoutException hang) {
                    out.printf("HANG: DL4J threshold sharing made no progress for %d s in epoch %d (a known DL4J accumulator deadlock); stopping%n",
                        config.epochTimeoutSeconds, e);
                    hung = true;
                    break;
                }
                steps += batches.size() / n;
                metrics.add(epochDone(epoch, steps, model, test, model.score(), handler.bytesUp(), handler.bytesDown(), n, start));
            }
        } finally {
            runner.shutdownNow();
            if (!hung) {
                // a hung fit holds the wrapper's lock for good: shutdown() would block; the process exit ends its threads
                wrapper.shutdown();
            }
        }
        printHash(0, model);
        return metrics;
    }

    private void header(final Model model) {
        if (!config.quiet) {
            out.printf("%s: model %s, %d parameters, %s, global batch %d, %d worker(s), lr %g, weight decay %g%n", config.label(), config.model,
                model.numParams(), config.optimizer, config.batch, config.workers, config.learningRate(), config.weightDecay);
        }
    }

    private EpochMetrics epochDone(final int epoch, final long rounds, final Model model, final DataSet test, final double loss, final long up,
        final long down, final int workers, final long start) {
        final double accuracy = evaluate(model, test);
        final EpochMetrics m = new EpochMetrics(epoch, rounds, accuracy, loss, up, down, model.numParams(), workers,
            (System.nanoTime() - start) / 1e9);
        out.printf("epoch %d  test accuracy %.4f  train loss %.4f  bytes up %,d  down %,d  %.1f s%n", epoch, accuracy, loss, up, down,
            m.wallSeconds);
        return m;
    }

    private static void awaitAll(final List<Future<?>> futures, final int epoch) throws InterruptedException {
        for (final Future<?> f : futures) {
            try {
                f.get();
            } catch (final ExecutionException e) {
                throw new IllegalStateException("a worker failed in epoch " + epoch + ": " + e.getCause().getMessage(), e.getCause());
            }
        }
    }

    private static long sum(final List<ExchangeCounters> counters, final boolean up) {
        long total = 0;
        for (final ExchangeCounters c : counters) {
            total += up ? c.bytesUp() : c.bytesDown();
        }
        return total;
    }

    /** Worker i gets examples i, i + n, i + 2n, ... (equal shards up to one example). */
    static List<DataSet> shard(final DataSet data, final int n) {
        final List<DataSet> shards = new ArrayList<>();
        if (n == 1) {
            shards.add(data);
            return shards;
        }
        final int total = data.numExamples();
        for (int i = 0; i < n; i++) {
            final int count = (total - i + n - 1) / n;
            final long[] rows = new long[count];
            for (int k = 0; k < count; k++) {
                rows[k] = i + (long) k * n;
            }
            final INDArray f = data.getFeatures().getRows(toInt(rows));
            final INDArray l = data.getLabels().getRows(toInt(rows));
            shards.add(new DataSet(f, l));
        }
        return shards;
    }

    private static int[] toInt(final long[] rows) {
        final int[] r = new int[rows.length];
        for (int i = 0; i < rows.length; i++) {
            r[i] = (int) rows[i];
        }
        return r;
    }

    static void fit(final Model model, final DataSet batch) {
        if (model instanceof MultiLayerNetwork) {
            ((MultiLayerNetwork) model).fit(batch);
        } else {
            ((ComputationGraph) model).fit(batch);
        }
    }

    static double evaluate(final Model model, final DataSet test) {
        final ListDataSetIterator<DataSet> it = new ListDataSetIterator<>(test.batchBy(500));
        final Evaluation eval = model instanceof MultiLayerNetwork
            ? ((MultiLayerNetwork) model).evaluate(it) : ((ComputationGraph) model).evaluate(it);
        return eval.accuracy();
    }

    private void printHash(final int worker, final Model model) {
        out.println("params-sha256 worker=" + worker + " " + sha256(model.params()));
    }

    /** @return SHA-256 of the array's values (as stored, in order). */
    static String sha256(final INDArray params) {
        try {
            final MessageDigest digest = MessageDigest.getInstance("SHA-256");
            Nd4j.getExecutioner().commit();
            digest.update(params.dup().data().asBytes());
            return HexFormat.of().formatHex(digest.digest());
        } catch (final NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
