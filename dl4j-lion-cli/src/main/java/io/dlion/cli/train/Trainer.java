package io.dlion.cli.train;

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
import io.dlion.cli.Models;
import io.dlion.cli.data.Cifar10;
import io.dlion.cli.data.Cifar10Augment;
import io.dlion.cli.data.Cifar10Iterator;
import io.dlion.cli.data.FashionMnist;
import io.dlion.cli.vit.ViT;
import io.dlion.cli.vit.ViTConfig;
import io.dlion.dense.DenseWorker;
import io.dlion.exchange.ExchangeCounters;
import io.dlion.exchange.MeanExchange;
import io.dlion.exchange.RoundTimes;
import io.dlion.exchange.VoteExchange;
import io.dlion.job.DLionJob;
import io.dlion.job.DirectoryHandOver;
import io.dlion.job.RoundHistory;
import io.dlion.monitor.WorkerProbe;
import io.dlion.testkit.HostileExchange;
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
    /** DL4J threshold sharing: how long the first batch of every epoch is held back (the deadlock workaround). */
    static final long THRESHOLD_EPOCH_START_DELAY_MS = 3000;

    private final TrainConfig config;
    private final PrintStream out;
    private Progress progress;
    private int progressEpoch;
    /** Time spent evaluating after epochs (and every {@code --eval-every} steps) so far, left out of {@code train_s}. */
    private long evaluationNanos;
    /** When training started ({@link System#nanoTime()}), for the evaluations every {@code --eval-every} steps. */
    private long trainStart;

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
        if (config.sharing.isDense()) {
            throw new IllegalArgumentException("--sharing " + config.sharing.cliName() + " runs against a dense server: use runDenseAs");
        }
        if (recovery != null && localWorkers.length != 1) {
            throw new IllegalArgumentException("rejoin and checkpoints are for one worker per process");
        }
        config.localWorkers = localWorkers.clone();
        config.remote = remote;
        config.recovery = recovery == null ? null : recovery.validate();
        return run();
    }

    /**
     * Run some workers of a dense data-parallel job in this process, against a dense server on another host.
     *
     * @param localWorkers worker ids trained here.
     * @param remote       opens the transport.
     * @return the metrics of every epoch.
     */
    public List<EpochMetrics> runDenseAs(final int[] localWorkers, final java.util.function.Supplier<DenseTransport> remote) throws Exception {
        if (!config.sharing.isDense()) {
            throw new IllegalArgumentException("runDenseAs needs --sharing dense-lion or dense-adamw, got " + config.sharing.cliName());
        }
        config.localWorkers = localWorkers.clone();
        config.denseRemote = remote;
        return run();
    }

    /** @return the metrics of every epoch; the files are written to the configured output directory. */
    public List<EpochMetrics> run() throws Exception {
        DataSet train = loadData(true);
        final DataSet test;
        if (config.validation > 0) {
            final int total = train.numExamples();
            if (config.validation >= total) {
                throw new IllegalArgumentException("--validation must be below the training examples (" + total + "), got " + config.validation);
            }
            test = new DataSet(rows(train.getFeatures(), total - config.validation, total), rows(train.getLabels(), total - config.validation, total));
            train = new DataSet(rows(train.getFeatures(), 0, total - config.validation), rows(train.getLabels(), 0, total - config.validation));
            out.printf("validation split: the last %d training examples (the test set is not read); %d left to train on%n", config.validation,
                train.numExamples());
        } else {
            test = loadData(false);
        }
        Files.createDirectories(config.out);
        Files.deleteIfExists(config.out.resolve("evals.csv"));   // --eval-every appends to it as the run goes
        final List<EpochMetrics> metrics;
        switch (config.sharing) {
            case NONE:
                metrics = runGlobal(train, test);
                break;
            case DL4J_THRESHOLD:
                metrics = runThreshold(train, test);
                break;
            case DENSE_LION:
            case DENSE_ADAMW:
                metrics = runDense(train, test);
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
                conf = Models.mlp(updater(), config.layerWeightDecay(), config.seed);
                break;
            case "cnn":
                conf = Models.cnn(updater(), config.layerWeightDecay(), config.seed);
                break;
            case "vit-tiny":
                return ViT.build(ViTConfig.tinyFashionMnist().toBuilder().updater(updater()).weightDecay(config.layerWeightDecay()).seed(config.seed).build());
            default:
                ViTConfig.Builder vit = ViTConfig.paper().toBuilder();
                if (config.vitShape != null) {
                    vit = vit.hidden(config.vitShape[0]).depth(config.vitShape[1]).heads(config.vitShape[2]).mlpRatio(config.vitShape[3]);
                }
                return ViT.build(vit.updater(updater()).weightDecay(config.layerWeightDecay()).seed(config.seed).build());
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
        // CIFAR-10: a new seeded order every epoch and the standard crop and flip, from Cifar10Iterator
        final Cifar10Iterator cifar = config.dataset == TrainConfig.Dataset.CIFAR10
            ? new Cifar10Iterator(train, config.batch, Cifar10Augment.standard(config.seed), config.seed) : null;
        for (int epoch = 1; epoch <= config.epochs; epoch++) {
            final java.util.Iterator<DataSet> batches;
            final int count;
            if (cifar != null) {
                cifar.reset();
                batches = cifar;
                count = (train.numExamples() + config.batch - 1) / config.batch;
            } else {
                train.shuffle(config.seed + epoch);
                final List<DataSet> list = train.batchBy(config.batch);
                batches = list.iterator();
                count = list.size();
            }
            final Progress progress = new Progress(out, epoch, count, config.quiet);
            double lossSum = 0;
            while (batches.hasNext()) {
                final DataSet b = batches.next();
                fit(model, cifar != null ? b : augment.apply(b));
                lossSum += model.score();
                steps++;
                progress.step(model.score(), 0, 0);
            }
            metrics.add(epochDone(epoch, steps, model, test, lossSum / count, 0, 0, 1, start));
        }
        printHash(0, model);
        return metrics;
    }

    @SuppressWarnings("try") // the probes are closed by hand before the jobs, and by the try when a round throws
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
        final List<DataSet> allShards = partition(train, n);
        // every worker runs the same number of rounds (all workers know all shard sizes)
        final int stepsPerEpoch = stepsPerEpoch(train, allShards);
        final List<EpochMetrics> metrics = new ArrayList<>();
        final ExecutorService pool = Executors.newFixedThreadPool(k);
        final List<DLionJob> jobs = new ArrayList<>();
        final List<RoundHistory> histories = new ArrayList<>();
        try (VoteTransport transport = config.remote != null ? config.remote.get()
            : VoteTransport.open(config.transport, config.topology, n, rule, models.get(0).numParams());
             // closed first: the probes read the exchanges' and the driver's counters
             Monitor.Probes probesClosed = config.monitor.probes()) {
            final List<ExchangeCounters> counters = new ArrayList<>();
            final List<Future<VoteExchange>> connecting = new ArrayList<>();
            for (final int id : local) {
                connecting.add(pool.submit(() -> transport.exchange(id)));
            }
            final double[] loss = new double[k];
            final long timeoutMs = TimeUnit.SECONDS.toMillis(config.epochTimeoutSeconds);
            final Monitor monitor = config.monitor;
            final List<VoteExchange> connected = new ArrayList<>();
            for (final Future<VoteExchange> exchange : connecting) {
                connected.add(exchange.get(120, TimeUnit.SECONDS));
            }
            transport.monitor(monitor); // once connected: in a sharded job over UDP the workers' exchanges start the servers
            final List<WorkerProbe> probes = new ArrayList<>();
            for (int i = 0; i < k; i++) {
                final VoteExchange real = connected.get(i);
                final VoteExchange exchange = local[i] < config.hostile
                    ? new HostileExchange(real, config.hostileMode, config.seed * 7919 + local[i]) : real;
                counters.add(exchange.counters());
                final ShardIterator shard = new ShardIterator(allShards.get(local[i]), config.workerBatch(), config.seed, local[i],
                    augmentation(local[i]), stepsPerEpoch);
                final int w = i;
                final WorkerProbe probe = monitor.worker(local[i]);
                probes.add(probe);
                final DLionJob.Builder builder = DLionJob.builder(models.get(i), shard, exchange)
                    .epochs(config.epochs).roundsPerEpoch(stepsPerEpoch).roundTimeoutMillis(timeoutMs).localSteps(config.localSteps)
                    .listener(new DLionJob.Listener() {
                        @Override
                        public void onRound(final DLionJob job, final double score) {
                            loss[w] += score;
                            if (probe != null) {
                                probe.onRound(job, score);
                            }
                            if (w == 0) {
                                progress(job, stepsPerEpoch).step(score, sum(counters, true), sum(counters, false),
                                    job.accumulator().currentStats().times());
                                if (job.accumulator().atOuterBoundary()) {
                                    evaluateAtStep(job.step(), stepsPerEpoch, job.model(), test, sum(counters, true), sum(counters, false));
                                }
                            }
                        }

                        @Override
                        public void onEvent(final String message) {
                            out.println(message);
                        }
                    });
                if (config.history != null) {
                    histories.add(RoundHistory.open(config.history, local[i]));
                    builder.history(histories.get(histories.size() - 1));
                }
                final Recovery recovery = config.recovery;
                if (recovery != null) {
                    builder.rejoin(recovery.rejoin()).resume(recovery.resume()).run(recovery.run());
                    if (recovery.syncDir() != null) {
                        builder.handOver(new DirectoryHandOver(recovery.syncDir(), recovery.run()));
                    } else if (transport.handOver() != null) {
                        builder.handOver(transport.handOver());
                    }
                    if (recovery.checkpointDir() != null) {
                        builder.checkpoints(recovery.checkpointDir(), recovery.checkpointEvery());
                    }
                }
                final DLionJob job = builder.build();
                jobs.add(job);
                models.set(i, job.model());
                if (probe != null) {
                    probe.bind(job);
                }
                monitor.attachUi(job.model(), local[i]);
            }
            final long start = System.nanoTime();
            trainStart = start;
            while (!jobs.get(0).done()) {
                final int epoch = jobs.get(0).epoch();
                final long firstRound = jobs.get(0).round();
                java.util.Arrays.fill(loss, 0);
                final List<Future<?>> running = new ArrayList<>();
                for (final DLionJob job : jobs) {
                    running.add(pool.submit(() -> {
                        if (config.device >= 0) {
                            Nd4j.getAffinityManager().unsafeSetDevice(config.device);
                        }
                        return job.fitEpoch();
                    }));
                }
                awaitAll(running, epoch);
                final long rounds = (long) epoch * stepsPerEpoch;
                double meanLoss = 0;
                for (final double l : loss) {
                    meanLoss += l / (rounds - firstRound) / k;
                }
                final RoundTimes times = new RoundTimes();
                for (final DLionJob job : jobs) {
                    times.add(job.accumulator().currentStats().times());
                    job.accumulator().currentStats().times().reset();
                }
                final EpochMetrics done = epochDone(epoch, rounds, models.get(0), test, meanLoss, sum(counters, true), sum(counters, false), k,
                    start, times);
                metrics.add(done);
                for (final WorkerProbe probe : probes) {
                    if (probe != null) {
                        probe.testAccuracy(epoch, done.testAccuracy);
                    }
                }
            }
            probesClosed.close();
            for (final DLionJob job : jobs) {
                job.close();
            }
        } finally {
            pool.shutdownNow();
            histories.forEach(RoundHistory::close);
        }
        for (int i = 0; i < k; i++) {
            printHash(local[i], models.get(i));
        }
        return metrics;
    }

    /**
     * Dense data-parallel training (G-Lion, G-AdamW): every worker's model has its own updater and a {@link DenseWorker}
     * that replaces its gradient by the mean of all workers' gradients, through a dense server.
     */
    private List<EpochMetrics> runDense(final DataSet train, final DataSet test) throws Exception {
        final int n = config.workers;
        final int[] local = config.localWorkers != null ? config.localWorkers : java.util.stream.IntStream.range(0, n).toArray();
        final int k = local.length;
        final List<Model> models = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            models.add(newModel());
        }
        header(models.get(0));
        final List<DataSet> allShards = partition(train, n);
        final int stepsPerEpoch = stepsPerEpoch(train, allShards);
        final List<EpochMetrics> metrics = new ArrayList<>();
        final ExecutorService pool = Executors.newFixedThreadPool(k);
        try (DenseTransport transport = config.denseRemote != null ? config.denseRemote.get()
            : DenseTransport.local(config.transport == TrainConfig.Transport.AERON_UDP, config.topology, n,
                models.get(0).numParams())) {
            final List<Future<MeanExchange>> connecting = new ArrayList<>();
            for (final int id : local) {
                connecting.add(pool.submit(() -> transport.exchange(id)));
            }
            final long timeoutMs = TimeUnit.SECONDS.toMillis(config.epochTimeoutSeconds);
            final List<DenseWorker> workers = new ArrayList<>();
            final List<ExchangeCounters> counters = new ArrayList<>();
            final List<ShardIterator> shards = new ArrayList<>();
            final List<MeanExchange> exchanges = new ArrayList<>();
            for (int i = 0; i < k; i++) {
                final MeanExchange exchange = connecting.get(i).get(120, TimeUnit.SECONDS);
                exchanges.add(exchange);
                workers.add(DenseWorker.attach(models.get(i), exchange, timeoutMs, 0));
                counters.add(exchange.counters());
                shards.add(new ShardIterator(allShards.get(local[i]), config.workerBatch(), config.seed, local[i], augmentation(local[i]),
                    stepsPerEpoch));
            }
            try {
                final long start = System.nanoTime();
                trainStart = start;
                final double[] loss = new double[k];
                for (int epoch = 1; epoch <= config.epochs; epoch++) {
                    final long stepsBefore = (long) (epoch - 1) * stepsPerEpoch;
                    java.util.Arrays.fill(loss, 0);
                    final Progress progress = new Progress(out, epoch, stepsPerEpoch, config.quiet);
                    final List<Future<?>> running = new ArrayList<>();
                    for (int i = 0; i < k; i++) {
                        final int w = i;
                        running.add(pool.submit(() -> {
                            if (config.device >= 0) {
                                Nd4j.getAffinityManager().unsafeSetDevice(config.device);
                            }
                            final ShardIterator shard = shards.get(w);
                            final Model model = models.get(w);
                            shard.reset();
                            for (int s = 0; s < stepsPerEpoch; s++) {
                                fit(model, shard.next());
                                loss[w] += model.score();
                                if (w == 0) {
                                    progress.step(model.score(), sum(counters, true), sum(counters, false), workers.get(0).times());
                                    evaluateAtStep(stepsBefore + s + 1, stepsPerEpoch, model, test, sum(counters, true), sum(counters, false));
                                }
                            }
                            if (model instanceof MultiLayerNetwork) {
                                ((MultiLayerNetwork) model).incrementEpochCount();
                            } else {
                                ((ComputationGraph) model).incrementEpochCount();
                            }
                            return null;
                        }));
                    }
                    awaitAll(running, epoch);
                    double meanLoss = 0;
                    for (final double l : loss) {
                        meanLoss += l / stepsPerEpoch / k;
                    }
                    final RoundTimes times = new RoundTimes();
                    for (final DenseWorker worker : workers) {
                        times.add(worker.times());
                        worker.times().reset();
                    }
                    metrics.add(epochDone(epoch, (long) epoch * stepsPerEpoch, models.get(0), test, meanLoss, sum(counters, true),
                        sum(counters, false), k, start, times));
                }
            } finally {
                for (final MeanExchange exchange : exchanges) {
                    exchange.close();
                }
            }
        } finally {
            pool.shutdownNow();
        }
        for (int i = 0; i < k; i++) {
            printHash(local[i], models.get(i));
        }
        return metrics;
    }

    /** @return the progress line of the epoch the job is in (one per epoch, started at the round it resumed from). */
    private Progress progress(final DLionJob job, final int stepsPerEpoch) {
        if (progress == null || progressEpoch != job.epoch()) {
            progressEpoch = job.epoch();
            progress = new Progress(out, job.epoch(), stepsPerEpoch, config.quiet).startAt((int) (job.round() - 1) % stepsPerEpoch);
        }
        return progress;
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
                // DL4J deadlock workaround: a ParallelWrapper fit builds its replicas anew, and a replica copies the root model
                // under the model's lock, which worker 0 holds while it waits at the accumulator's barrier for those same
                // replicas. Holding back the epoch's first batch lets every replica finish its copy before training starts.
                final Future<?> fit = runner.submit(() -> wrapper.fit(new DelayedStartIterator(batches, THRESHOLD_EPOCH_START_DELAY_MS)));
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
            if (config.localSteps.enabled()) {
                out.printf("local steps: %s (weight decay on the outer step)%n", config.localSteps);
            }
        }
    }

    private EpochMetrics epochDone(final int epoch, final long rounds, final Model model, final DataSet test, final double loss, final long up,
        final long down, final int workers, final long start) {
        return epochDone(epoch, rounds, model, test, loss, up, down, workers, start, null);
    }

    private EpochMetrics epochDone(final int epoch, final long rounds, final Model model, final DataSet test, final double loss, final long up,
        final long down, final int workers, final long start, final RoundTimes times) {
        final long evaluationStart = System.nanoTime();
        final double accuracy = evaluate(model, test);
        final long now = System.nanoTime();
        evaluationNanos += now - evaluationStart;
        final EpochMetrics m = new EpochMetrics(epoch, rounds, accuracy, loss, up, down, model.numParams(), workers,
            (now - start) / 1e9, (now - start - evaluationNanos) / 1e9, times == null ? null : EpochMetrics.timesOf(times));
        out.printf("epoch %d  test accuracy %.4f  train loss %.4f  bytes up %,d  down %,d  %.1f s%s%n", epoch, accuracy, loss, up, down,
            m.wallSeconds, times == null ? "" : "  " + times.summary());
        appendEvaluation(rounds, accuracy, m.trainSeconds, m.wallSeconds, up, down);
        return m;
    }

    /**
     * {@code --eval-every K}: after step S of worker 0 (S a multiple of K, at an outer boundary, not the last step of an epoch,
     * whose own evaluation follows), evaluate its model on the test set: one line of the log and of {@code evals.csv}. It
     * only reads the parameters; its time is left out of {@code train_s} like the epochs' evaluations.
     */
    private void evaluateAtStep(final long step, final int stepsPerEpoch, final Model model, final DataSet test, final long up,
        final long down) {
        if (config.evalEvery == 0 || step % config.evalEvery != 0 || step % stepsPerEpoch == 0) {
            return;
        }
        final long begin = System.nanoTime();
        final double accuracy = evaluate(model, test);
        final long end = System.nanoTime();
        final double trainSeconds = (begin - trainStart - evaluationNanos) / 1e9;
        evaluationNanos += end - begin;
        out.printf("step %d  test accuracy %.4f  train %.2f s  bytes up %,d  down %,d%n", step, accuracy, trainSeconds, up, down);
        appendEvaluation(step, accuracy, trainSeconds, (begin - trainStart) / 1e9, up, down);
    }

    /** With {@code --eval-every}: one row of {@code evals.csv} (written as it goes, so a run stopped early keeps its rows). */
    private void appendEvaluation(final long step, final double accuracy, final double trainSeconds, final double wallSeconds, final long up,
        final long down) {
        if (config.evalEvery == 0) {
            return;
        }
        final Path csv = config.out.resolve("evals.csv");
        try {
            if (!Files.exists(csv)) {
                Files.writeString(csv, "step,test_accuracy,train_s,wall_s,bytes_up,bytes_down\n");
            }
            Files.writeString(csv, String.format(java.util.Locale.ROOT, "%d,%.4f,%.3f,%.3f,%d,%d%n", step, accuracy, trainSeconds, wallSeconds,
                up, down), java.nio.file.StandardOpenOption.APPEND);
        } catch (final IOException e) {
            throw new java.io.UncheckedIOException("cannot write " + csv, e);
        }
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

    /**
     * The shards of the configured {@link io.dlion.job.Partition}, drawn from the seed (the same on every worker), logged as
     * examples per class per worker; iid is {@link #shard}.
     */
    private List<DataSet> partition(final DataSet data, final int n) {
        if (config.partition.kind() == io.dlion.job.Partition.Kind.IID) {
            return shard(data, n);
        }
        final int[] labels = data.getLabels().argMax(1).toIntVector();
        final int classes = (int) data.getLabels().size(1);
        final int[][] split = config.partition.assign(labels, classes, n, config.seed, config.workerBatch());
        if (!config.quiet) {
            out.printf("partition %s (seed %d), examples per class per worker:%n%s", config.partition, config.seed,
                io.dlion.job.Partition.table(io.dlion.job.Partition.counts(split, labels, classes)));
        }
        final List<DataSet> shards = new ArrayList<>();
        for (final int[] rows : split) {
            shards.add(new DataSet(data.getFeatures().getRows(rows), data.getLabels().getRows(rows)));
        }
        return shards;
    }

    /**
     * @return steps per epoch: i.i.d., the smallest shard's full batches (as always); skewed splits, whose shards differ in
     *     size, the batches of an equal share of the data (a smaller shard goes round again within the epoch).
     */
    private int stepsPerEpoch(final DataSet train, final List<DataSet> shards) {
        if (config.partition.kind() != io.dlion.job.Partition.Kind.IID) {
            return Math.max(1, train.numExamples() / shards.size() / config.workerBatch());
        }
        int shortest = Integer.MAX_VALUE;
        for (final DataSet s : shards) {
            shortest = Math.min(shortest, s.numExamples() / config.workerBatch());
        }
        return shortest;
    }

    private static INDArray rows(final INDArray a, final int from, final int to) {
        return a.get(org.nd4j.linalg.indexing.NDArrayIndex.interval(from, to), org.nd4j.linalg.indexing.NDArrayIndex.all()).dup();
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
