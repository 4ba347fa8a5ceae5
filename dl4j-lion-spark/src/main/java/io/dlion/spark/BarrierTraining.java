package io.dlion.spark;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Channels;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.Topology;
import io.dlion.aeron.client.AeronHandOver;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.server.SliceServers;
import io.dlion.dist.JobRun;
import io.dlion.exchange.VoteExchange;
import io.dlion.job.DLionJob;
import org.agrona.CloseHelper;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.BarrierTaskInfo;
import org.apache.spark.TaskKilledException;
import org.apache.spark.broadcast.Broadcast;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.util.ModelSerializer;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import scala.collection.JavaConverters;
import scala.runtime.AbstractFunction1;

/**
 * The function every barrier task runs on its partition: one D-Lion worker, and the aggregation server of its slice
 * (the sharded topology, the default: task r serves slice r) or, in the star, task 0 the job's one server.
 * <ol>
 *   <li>Cut the partition into batches; list this task's checkpoints of the run; pick two free UDP ports of its host
 *       (or the configured ones) for the slice it serves.</li>
 *   <li>{@code allGather}: every task's host, batch count, checkpoint rounds and ports. Every task derives the same
 *       plan from them: rounds per epoch (the fewest batches), the round to resume from (the newest checkpoint round
 *       that every task has, or a fresh start) and the {@link io.dlion.aeron.Topology}.</li>
 *   <li>Train: an embedded Aeron media driver per executor JVM, {@link DLionJob} over the batches, checkpoints every K
 *       rounds. Sharded, the task's exchange serves its slice and takes over the slice of a task whose server died
 *       ({@code AeronVoteExchange.Context.topology}); in the star, task 0 starts the server.</li>
 *   <li>{@code barrier()}: every task has the last round's result before the servers stop; report the parameters'
 *       SHA-256 (and from task 0 the model) to the driver.</li>
 * </ol>
 * A task that stalls past the servers' round deadline is left out of that round (the others go on while at least
 * {@link DLionSparkOptions#minVoters(int)} vote) and reads its result late, as every task applies every round. A task
 * whose round result is lost for good ({@code RejoinRequiredException}: a later round's frame came first, or a server
 * told it to rejoin) rejoins inside the stage: its {@link DLionJob} takes a live task's parameters through the
 * network hand-over that slice 0's server relays, at most {@link DLionSparkOptions#rejoinAttempts(int)} attempts, each
 * logged; a task that cannot rejoin fails saying why. A task the scheduler kills (another task of the stage failed, or
 * its process died) is interrupted by a watcher, so it stops waiting for a round that will not come; Spark then runs
 * the whole stage again, which resumes from the checkpoints.
 */
final class BarrierTraining extends AbstractFunction1<scala.collection.Iterator<DataSet>, scala.collection.Iterator<TaskReport>>
    implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final System.Logger LOG = System.getLogger(BarrierTraining.class.getName());
    private static final String SEP = "|";

    private final Broadcast<byte[]> model;
    private final boolean graph;
    private final DLionSparkOptions options;
    private final String run;
    private final byte[] secret;
    private final String progressHost;
    private final int progressPort;

    /**
     * @param model   the initial model as DL4J's model zip, broadcast to the executors.
     * @param graph   true for a ComputationGraph, false for a MultiLayerNetwork.
     * @param options the job's settings, concluded.
     * @param run     the name of this {@code fit} (its checkpoint sub-directory).
     * @param secret  the job's secret: every HELLO to the server is authenticated with it.
     */
    BarrierTraining(final Broadcast<byte[]> model, final boolean graph, final DLionSparkOptions options, final String run, final byte[] secret) {
        this(model, graph, options, run, secret, null, 0);
    }

    /**
     * @param progressHost the driver's host, where the progress reports go, or null for none.
     * @param progressPort the driver's progress port.
     */
    BarrierTraining(final Broadcast<byte[]> model, final boolean graph, final DLionSparkOptions options, final String run, final byte[] secret,
        final String progressHost, final int progressPort) {
        this.model = model;
        this.graph = graph;
        this.options = options;
        this.run = run;
        this.secret = secret.clone();
        this.progressHost = progressHost;
        this.progressPort = progressPort;
    }

    @Override
    public scala.collection.Iterator<TaskReport> apply(final scala.collection.Iterator<DataSet> partition) {
        final BarrierTaskContext ctx = BarrierTaskContext.get();
        try {
            return JavaConverters.asScalaIterator(List.of(train(ctx, JavaConverters.asJavaIterator(partition))).iterator());
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw killedOr(ctx, new IllegalStateException("worker " + ctx.partitionId() + " interrupted", e));
        } catch (final RuntimeException e) {
            throw killedOr(ctx, e);
        } catch (final Exception e) {
            throw killedOr(ctx, new IllegalStateException("worker " + ctx.partitionId() + ": " + e, e));
        }
    }

    private TaskReport train(final BarrierTaskContext ctx, final java.util.Iterator<DataSet> partition) throws Exception {
        final BarrierTaskInfo[] infos = ctx.getTaskInfos();
        final int workers = infos.length;
        final int worker = ctx.partitionId();
        final int attempt = ctx.stageAttemptNumber();
        final String host = hostOf(infos[worker].address());
        final PartitionBatches batches = new PartitionBatches(PartitionBatches.cut(partition, options.batchSizePerWorker()),
            options.shuffle(), options.seed(), worker);
        final JobRun jobRun = new JobRun(options.jobId(), run);
        final CheckpointStore store = options.checkpointDir() == null ? null
            : new CheckpointStore(Path.of(options.checkpointDir(), run), worker, jobRun);
        final TreeSet<Long> checkpoints = store == null ? new TreeSet<>() : store.rounds();
        final Model net = restore();

        final KillWatcher watcher = new KillWatcher(ctx);
        AeronRuntime aeron = null;
        AggregationServer server = null;
        AeronVoteExchange exchange = null;
        AeronHandOver handOver = null;
        DLionJob job = null;
        TaskMonitor monitor = null;
        JobProgress.Sender progress = null;
        try {
            aeron = AeronRuntime.launch(new AeronRuntime.Context());
            if (options.metricsPort() >= 0 || options.ui() != null) {
                monitor = TaskMonitor.open(options, worker, run, aeron);
            }
            if (progressHost != null) {
                progress = new JobProgress.Sender(run, worker, options.progressMillis(), new InetSocketAddress(progressHost, progressPort));
            }
            final boolean sharded = options.topology() == Topology.Kind.SHARDED;
            int votePort = -1;
            if (worker == 0 || sharded) {
                votePort = options.votePort() != 0 ? options.votePort() + (sharded ? 2 * worker : 0)
                    : Channels.freeUdpPorts(new InetSocketAddress(0).getAddress(), 2);
            }
            // every task learns every other's host, batches, checkpoints and slice server's ports
            final String mine = String.join(SEP, host, Integer.toString(batches.size()), join(checkpoints), Integer.toString(votePort));
            final String[] all = ctx.allGather(mine);
            final Plan plan = Plan.of(all);
            final Topology topology = sharded ? Topology.sharded(plan.hosts, plan.votePorts)
                : Topology.star(plan.hosts.get(0), plan.votePorts[0], plan.votePorts[0] + 1);
            final int chunkWords = topology.chunkWords(net.numParams(), Configuration.chunkWords());
            if (!sharded && worker == 0) {
                server = startServer(aeron, topology, workers, net.numParams(), chunkWords);
                if (monitor != null) {
                    monitor.server(server);
                }
            }
            if (plan.roundsPerEpoch < 1) {
                throw new IllegalArgumentException("worker " + plan.fewestBatchesWorker + "'s partition holds no full batch of batchSizePerWorker="
                    + options.batchSizePerWorker() + " examples");
            }
            final long resume = plan.resumeRound;
            if (store != null) {
                store.startFrom(resume);
            }
            LOG.log(System.Logger.Level.INFO, String.format("D-Lion worker %d of %d, stage attempt %d: %d rounds per epoch, %s; %s", worker,
                workers, attempt, plan.roundsPerEpoch, resume < 0 ? "fresh start" : "resuming from round " + resume, topology));

            // slice 0's result channel tagged: the hand-over's subscription to slice 0's relay shares its endpoint
            final List<SliceEndpoint> endpoints = topology.endpoints(net.numParams(), chunkWords, workers, host, aeron.aeron().nextCorrelationId());
            final AeronVoteExchange.Context exchangeCtx = new AeronVoteExchange.Context()
                .aeron(aeron.aeron()).jobId(options.jobId()).workerId(worker).workers(workers).paramCount(net.numParams())
                .rule(options.rule()).secret(secret).firstRound(Math.max(resume, 0)).chunkWords(chunkWords).slices(endpoints);
            if (sharded) {
                // the exchange serves this task's slice, takes over a dead task's, and stops them when it closes (after the
                // barrier: every task has the last result by then)
                final TaskMonitor metrics = monitor;
                exchangeCtx.topology(topology).sliceServers(new SliceServers.Context()
                    .roundTimeoutNs(TimeUnit.MILLISECONDS.toNanos(options.serverRoundTimeoutMillis())).minVoters(options.minVoters())
                    .lingerNs(TimeUnit.SECONDS.toNanos(10)).errorHandler(BarrierTraining::serverError)
                    .listener((s, takenOver) -> {
                        if (metrics != null && !takenOver) {
                            metrics.server(s);
                        }
                    }));
            }
            if (options.rejoinAttempts() > 0) {
                // a task that lost a round takes a live task's parameters, relayed by slice 0's server; every task can donate
                handOver = new AeronHandOver(new AeronHandOver.Context().aeron(aeron.aeron()).jobId(options.jobId()).workers(workers)
                    .workerId(worker).run(jobRun).secret(secret).slice(endpoints.get(0)));
                exchangeCtx.sideAgent(handOver);
            }
            exchange = new AeronVoteExchange(exchangeCtx);
            final DLionJob.Listener user = options.listener() == null ? null : options.listener().create(worker, attempt);
            final DLionJob.Builder builder = DLionJob.builder(net, batches, decorated(exchange, worker, attempt)).epochs(options.epochs())
                .roundsPerEpoch(plan.roundsPerEpoch).roundTimeoutMillis(options.roundTimeoutMillis()).run(jobRun)
                .handOver(handOver).rejoinAttempts(options.rejoinAttempts()).localSteps(options.localSteps())
                .listener(new TaskListener(ctx, store, options.checkpointEvery(), user, progress, monitor == null ? null : monitor.listener()));
            if (resume >= 0) {
                builder.checkpoints(store.dirOf(resume), 0).resume(true);
            }
            job = builder.build();
            if (monitor != null) {
                monitor.attach(job.model());
            }
            final long startRound = job.round();
            job.fit();
            // every task holds the last round's result before the servers stop
            ctx.barrier();
            final INDArray params = job.model().params();
            final String sha = sha256(params);
            final byte[] trained = worker == 0 ? serialize(job.model()) : null;
            return new TaskReport(worker, attempt, host, ProcessHandle.current().pid(), startRound, job.round(), sha,
                exchange.counters().bytesUp(), exchange.counters().bytesDown(), trained);
        } finally {
            // close with the interrupt flag clear (Aeron's close waits for its threads), then set it again
            final boolean interrupted = watcher.stop();
            // the monitor reads the exchange's and the driver's counters: closed before them
            CloseHelper.quietCloseAll(monitor, progress);
            if (job != null) {
                CloseHelper.quietClose(job);
            }
            CloseHelper.quietCloseAll(exchange, handOver, server, aeron);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private VoteExchange decorated(final VoteExchange exchange, final int worker, final int attempt) {
        return options.exchangeDecorator() == null ? exchange : options.exchangeDecorator().wrap(exchange, worker, attempt);
    }

    private Model restore() throws IOException {
        final ByteArrayInputStream in = new ByteArrayInputStream(model.value());
        return graph ? ModelSerializer.restoreComputationGraph(in, true) : ModelSerializer.restoreMultiLayerNetwork(in, true);
    }

    private AggregationServer startServer(final AeronRuntime aeron, final Topology topology, final int workers, final long params,
        final int chunkWords) {
        // bound to every interface of the task's host; the workers reach it at the host Spark knows the executor by
        return AggregationServer.launch(new AggregationServer.Context()
            .aeron(aeron.aeron()).jobId(options.jobId()).workers(workers).paramCount(params).rule(options.rule()).secret(secret)
            .chunkWords(chunkWords).slice(topology, 0)
            .voteStreamId(Configuration.VOTE_STREAM_ID_DEFAULT).resultStreamId(Configuration.RESULT_STREAM_ID_DEFAULT)
            .roundTimeoutNs(TimeUnit.MILLISECONDS.toNanos(options.serverRoundTimeoutMillis()))
            .minVoters(options.minVoters())            // 0: a majority; a late task is left out, a rejoining one not waited for
            .errorHandler(BarrierTraining::serverError));
    }

    private static void serverError(final Throwable ex) {
        LOG.log(System.Logger.Level.ERROR, "D-Lion aggregation server error", ex);
    }

    /**
     * Interrupts the training thread when the scheduler kills the task (another task of the barrier stage failed): a
     * task waiting for a round that will never complete stops at once instead of at its round timeout.
     */
    private static final class KillWatcher {
        private final Thread trainer = Thread.currentThread();
        private final Thread thread;

        KillWatcher(final BarrierTaskContext ctx) {
            thread = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    if (ctx.isInterrupted()) {
                        trainer.interrupt();
                        return;
                    }
                    try {
                        Thread.sleep(200);
                    } catch (final InterruptedException e) {
                        return;
                    }
                }
            }, "dlion-kill-watcher-" + ctx.partitionId());
            thread.setDaemon(true);
            thread.start();
        }

        /** @return whether the training thread was interrupted; its flag is cleared. */
        boolean stop() {
            thread.interrupt();
            try {
                thread.join();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Thread.interrupted();
        }
    }

    private static RuntimeException killedOr(final BarrierTaskContext ctx, final RuntimeException e) {
        if (ctx.isInterrupted() && ctx.getKillReason().isDefined()) {
            return new TaskKilledException(ctx.getKillReason().get());
        }
        return e;
    }

    private static String hostOf(final String address) {
        final int colon = address.lastIndexOf(':');
        return colon < 0 ? address : address.substring(0, colon);
    }

    private static String join(final TreeSet<Long> rounds) {
        final StringBuilder sb = new StringBuilder();
        for (final Long r : rounds) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(r);
        }
        return sb.toString();
    }

    private static byte[] serialize(final Model m) throws IOException {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        ModelSerializer.writeModel(m, out, true);
        return out.toByteArray();
    }

    /**
     * @param params parameters.
     * @return SHA-256 of their values in hex.
     */
    static String sha256(final INDArray params) {
        Nd4j.getExecutioner().commit();
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(params.dup().data().asBytes()));
        } catch (final NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** What every task derives, identically, from the gathered messages. */
    private static final class Plan {
        int roundsPerEpoch = Integer.MAX_VALUE;
        int fewestBatchesWorker;
        long resumeRound = -1;
        final List<String> hosts = new ArrayList<>();
        int[] votePorts;

        static Plan of(final String[] messages) {
            final Plan p = new Plan();
            p.votePorts = new int[messages.length];
            TreeSet<Long> common = null;
            for (int w = 0; w < messages.length; w++) {
                final String[] f = messages[w].split("\\|", -1);
                final int batches = Integer.parseInt(f[1]);
                if (batches < p.roundsPerEpoch) {
                    p.roundsPerEpoch = batches;
                    p.fewestBatchesWorker = w;
                }
                final TreeSet<Long> rounds = new TreeSet<>();
                if (!f[2].isEmpty()) {
                    for (final String r : f[2].split(",")) {
                        rounds.add(Long.parseLong(r));
                    }
                }
                if (common == null) {
                    common = rounds;
                } else {
                    common.retainAll(rounds);
                }
                p.hosts.add(f[0]);
                p.votePorts[w] = Integer.parseInt(f[3]);
            }
            if (common != null && !common.isEmpty()) {
                p.resumeRound = common.last();
            }
            return p;
        }
    }

    /**
     * Stops a killed task between rounds, writes the checkpoints, then calls the user's listener, then the progress
     * report and the metrics (each may be null).
     */
    private static final class TaskListener implements DLionJob.Listener {
        private final BarrierTaskContext ctx;
        private final CheckpointStore store;
        private final int every;
        private final DLionJob.Listener user;
        private final DLionJob.Listener progress;
        private final DLionJob.Listener metrics;

        TaskListener(final BarrierTaskContext ctx, final CheckpointStore store, final int every, final DLionJob.Listener user,
            final DLionJob.Listener progress, final DLionJob.Listener metrics) {
            this.ctx = ctx;
            this.store = store;
            this.every = every;
            this.user = user;
            this.progress = progress;
            this.metrics = metrics;
        }

        @Override
        public void onRound(final DLionJob job, final double score) {
            if (ctx.isInterrupted()) {
                throw new TaskKilledException(ctx.getKillReason().isDefined() ? ctx.getKillReason().get() : "killed");
            }
            if (every > 0 && job.round() % every == 0 && job.accumulator().atOuterBoundary()) {
                store.write(job, job.accumulator().currentStats().lastVoters() == job.exchange().workers());
            }
            if (user != null) {
                user.onRound(job, score);
            }
            if (progress != null) {
                progress.onRound(job, score);
            }
            if (metrics != null) {
                metrics.onRound(job, score);
            }
        }

        @Override
        public void onEpochEnd(final DLionJob job, final int epoch) {
            if (user != null) {
                user.onEpochEnd(job, epoch);
            }
            if (metrics != null) {
                metrics.onEpochEnd(job, epoch);
            }
        }

        /** Logged on the executor (a rejoin attempt, a hand-over, a resume), and given to the user's listener. */
        @Override
        public void onEvent(final String message) {
            LOG.log(System.Logger.Level.INFO, message);
            if (user != null) {
                user.onEvent(message);
            }
        }
    }
}
