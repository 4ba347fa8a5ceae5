package io.dlion.dist;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

import io.dlion.exchange.VoteExchange;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.api.StepFunction;
import org.deeplearning4j.optimize.solvers.accumulation.GradientsAccumulator;
import org.deeplearning4j.optimize.solvers.accumulation.IndexedTail;
import org.deeplearning4j.optimize.solvers.accumulation.Registerable;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Distributed Lion as DL4J's gradient sharing: a {@link GradientsAccumulator} that replaces DL4J's
 * threshold-encoded sharing with 1-bit sign votes (Liu et al., <i>Communication Efficient Distributed
 * Training with Distributed Lion</i>, arXiv 2404.00438, Algorithm 1).
 * <p>
 * DL4J calls, per training step of each replica: {@code storeUpdate(update, iteration, epoch)} with the
 * post-updater update, then {@code applyUpdate(stepFunction, params, update, true)}. By then each
 * {@link io.dlion.LionUpdater} bound to this accumulator has written its vote argument {@code c} into the
 * worker's vote buffer and left only the weight-decay term in the update; {@code storeUpdate} packs
 * sign(c) into bits, exchanges them and waits (bounded) for the result, adding {@code lr_block * Delta} into the update
 * as each part of the result arrives (a slice of a sharded job while the other slices are still on the wire);
 * {@code applyUpdate} steps.
 * <p>
 * Two ways in:
 * <ul>
 *   <li>one model per process or thread: {@link #forModel(Model, VoteExchange, long)} (or {@link DLion#attach});</li>
 *   <li>several replicas in one JVM with {@code ParallelWrapper} ({@code TrainingMode.CUSTOM},
 *       {@code .gradientsAccumulator(acc)}): {@link #forReplicas(int, IntFunction, long)}; each replica
 *       thread gets the next worker id when DL4J calls {@link #touch()} on it, and the trainer that
 *       {@link DLion#parallelWrapper} installs binds the replica it built to that worker ({@link #bindReplica}).</li>
 * </ul>
 * Replicas' momentum stays local; ParallelWrapper rebuilds the non-root replicas at every {@code fit} from
 * the root model, so each {@code fit} starts all replicas from the root replica's momentum.
 * <p>
 * ParallelWrapper feeds batches in groups of one per worker; a last group with fewer batches than workers
 * (end of the data) is dropped on every worker, as PyTorch's {@code DistributedSampler(drop_last=True)}
 * does, so every worker takes part in every round and parameters stay bit-identical. Rounds wait at most
 * the given time for a result and then fail with a clear message instead of hanging.
 */
public final class DLionAccumulator implements GradientsAccumulator, Registerable {
    private static final long serialVersionUID = 1L;

    private final int workers;
    private final transient IntFunction<VoteExchange> exchanges;
    private final long roundTimeoutMillis;
    private final transient LocalSteps local;
    private final transient DLionWorker single;
    private final transient Model model;
    private final transient Map<Thread, DLionWorker> byThread = new ConcurrentHashMap<>();
    private final transient List<DLionWorker> all = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger nextWorker = new AtomicInteger();
    private transient volatile CountDownLatch allTouched;
    private volatile int consumers;

    private DLionAccumulator(final int workers, final IntFunction<VoteExchange> exchanges, final long roundTimeoutMillis, final Model model,
        final VoteExchange exchange, final LocalSteps local) {
        if (roundTimeoutMillis <= 0) {
            throw new IllegalArgumentException("roundTimeoutMillis must be > 0, got " + roundTimeoutMillis);
        }
        this.workers = workers;
        this.exchanges = exchanges;
        this.roundTimeoutMillis = roundTimeoutMillis;
        this.local = Objects.requireNonNull(local, "localSteps").copy().conclude();
        this.consumers = workers;
        this.allTouched = new CountDownLatch(workers);
        this.model = model;
        if (model != null) {
            single = new DLionWorker(exchange, roundTimeoutMillis, this.local);
            single.bindModel(model);
            all.add(single);
        } else {
            single = null;
        }
    }

    /**
     * D-Lion for one model, which this call binds and plugs in ({@code setGradientsAccumulator}).
     *
     * @param model              a MultiLayerNetwork or ComputationGraph whose layers all use {@link io.dlion.Lion}.
     * @param exchange           this worker's end of the vote (in-process or Aeron).
     * @param roundTimeoutMillis the longest a step waits for a round's result before it fails.
     * @return the accumulator, already set on the model.
     */
    public static DLionAccumulator forModel(final Model model, final VoteExchange exchange, final long roundTimeoutMillis) {
        return forModel(model, exchange, roundTimeoutMillis, LocalSteps.none());
    }

    /**
     * D-Lion for one model with local steps between votes ({@link LocalSteps}), which this call binds and plugs in.
     *
     * @param model              a MultiLayerNetwork or ComputationGraph whose layers all use {@link io.dlion.Lion}.
     * @param exchange           this worker's end of the vote (in-process or Aeron).
     * @param roundTimeoutMillis the longest a step waits for a round's result before it fails.
     * @param local              H and the outer step's settings (validated here, copied).
     * @return the accumulator, already set on the model.
     */
    public static DLionAccumulator forModel(final Model model, final VoteExchange exchange, final long roundTimeoutMillis,
        final LocalSteps local) {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(exchange, "exchange");
        final DLionAccumulator acc = new DLionAccumulator(1, null, roundTimeoutMillis, model, exchange, local);
        if (model instanceof MultiLayerNetwork) {
            ((MultiLayerNetwork) model).setGradientsAccumulator(acc);
        } else {
            ((ComputationGraph) model).setGradientsAccumulator(acc);
        }
        return acc;
    }

    /**
     * D-Lion for the replicas of a {@code ParallelWrapper}: pass it to {@code .gradientsAccumulator(...)}
     * with {@code TrainingMode.CUSTOM}.
     *
     * @param workers            number of replicas (the wrapper's {@code workers(n)}).
     * @param exchanges          the exchange of worker i, created when replica i first touches the accumulator.
     * @param roundTimeoutMillis the longest a step waits for a round's result before it fails.
     * @return the accumulator.
     */
    public static DLionAccumulator forReplicas(final int workers, final IntFunction<VoteExchange> exchanges, final long roundTimeoutMillis) {
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be >= 1, got " + workers);
        }
        return new DLionAccumulator(workers, Objects.requireNonNull(exchanges, "exchanges"), roundTimeoutMillis, null, null, LocalSteps.none());
    }

    private DLionWorker worker() {
        if (single != null) {
            return single;
        }
        final DLionWorker w = byThread.get(Thread.currentThread());
        if (w == null) {
            throw new IllegalStateException("thread " + Thread.currentThread().getName()
                + " trains through D-Lion without touch(): use ParallelWrapper's TrainingMode.CUSTOM or DLionAccumulator.forModel");
        }
        return w;
    }

    /**
     * @return the round the next step of the single model votes in (= the rounds it has completed, counting
     *     those it resumed past); for {@link #forModel} accumulators only.
     */
    public long round() {
        return singleWorker("round").round();
    }

    /**
     * @return the steps the single model has taken (= {@code round() * H} plus the local steps of the outer step under
     *     way; = {@link #round()} with H = 1); for {@link #forModel} accumulators only.
     */
    public long step() {
        return singleWorker("step").step();
    }

    /**
     * @return true when the single model is between outer steps (always true with H = 1 between steps): where
     *     checkpoints and hand-overs are taken.
     */
    public boolean atOuterBoundary() {
        return singleWorker("atOuterBoundary").atOuterBoundary();
    }

    /**
     * End the outer step under way early, with a vote on the pseudo-gradient of the local steps taken so far (lr_out
     * scaled by their count instead of H), so that every worker holds the same parameters: at the end of training, on
     * every worker at the same step. Nothing happens between outer steps (always with H = 1). Single model only.
     */
    public void finishOuterStep() {
        singleWorker("finishOuterStep").finishOuterStep();
    }

    /** @return the local steps per vote and the outer step's settings of this accumulator. */
    public LocalSteps localSteps() {
        return local.copy();
    }

    /**
     * Let the single model vote next in {@code round}: for a worker that resumes a job from a checkpoint or
     * rejoins it after being resynced to the job's parameters ({@link DLionCheckpoint}). Call between steps,
     * after the model holds the parameters the job had when {@code round} started; the exchange must accept
     * that round (in-process hub: any round not yet completed; Aeron: {@code firstRound(round)}). With local steps
     * the model starts the local steps of that outer round (a step number of {@code round * H}).
     *
     * @param round the next round, >= 0.
     */
    public void resumeAt(final long round) {
        singleWorker("resumeAt").resumeAt(round);
    }

    /**
     * Tell an observer of every round the single model applies from now on ({@link #forModel} accumulators only).
     *
     * @param observer the observer, or null to stop.
     */
    public void observeRounds(final RoundObserver observer) {
        singleWorker("observeRounds").observe(observer);
    }

    /** @return the model of a {@link #forModel} accumulator (null for ParallelWrapper replicas). */
    public Model model() {
        return model;
    }

    DLionWorker single() {
        return singleWorker("a checkpoint");
    }

    private DLionWorker singleWorker(final String what) {
        if (single == null) {
            throw new IllegalStateException(what + " applies to accumulators made by forModel, not to ParallelWrapper replicas");
        }
        return single;
    }

    /** @return the statistics of every worker created so far, in worker-id order of creation. */
    public List<DLionStats> stats() {
        final List<DLionStats> out = new ArrayList<>();
        synchronized (all) {
            for (final DLionWorker w : all) {
                out.add(w.stats());
            }
        }
        return out;
    }

    /** @return the statistics of the worker training on the calling thread (or the single worker). */
    public DLionStats currentStats() {
        return worker().stats();
    }

    @Override
    public void touch() {
        if (single != null || byThread.containsKey(Thread.currentThread())) {
            return;
        }
        final int id = nextWorker.getAndIncrement();
        if (id >= workers) {
            throw new IllegalStateException("more replica threads than the " + workers + " workers this accumulator was built for");
        }
        final DLionWorker w;
        synchronized (all) {
            if (id < all.size()) {
                w = all.get(id);
            } else {
                w = new DLionWorker(exchanges.apply(id), roundTimeoutMillis, local);
                all.add(w);
            }
        }
        byThread.put(Thread.currentThread(), w);
        awaitAllReplicas();
    }

    /**
     * Bind the replica the calling ParallelWrapper thread trains, after {@link #touch()} gave the thread its worker:
     * each Lion updater block of the replica then writes its vote into that worker's buffer. Called by the trainer
     * {@link DLion#parallelWrapper} installs, once per replica and {@code fit}.
     *
     * @param replica the replica model built on this thread.
     */
    void bindReplica(final Model replica) {
        worker().bindModel(replica);
    }

    /**
     * The root replica trains the wrapper's own model and holds its lock during {@code fit}, while the other
     * replicas still need that lock to copy its parameters: if the root voted first it would wait for votes
     * that cannot come (the deadlock DL4J's own accumulator shows). Every replica thread therefore waits here,
     * outside any model lock, until all have been built, bounded by the round timeout.
     */
    private void awaitAllReplicas() {
        final CountDownLatch latch = allTouched;
        latch.countDown();
        try {
            if (!latch.await(roundTimeoutMillis, TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("only " + (workers - latch.getCount()) + " of " + workers
                    + " ParallelWrapper replicas started within " + roundTimeoutMillis + " ms");
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the other replicas", e);
        }
    }

    @Override
    public void registerConsumers(final int numConsumers) {
        this.consumers = numConsumers;
    }

    @Override
    public void fallbackToSingleConsumerMode(final boolean reallyFallback) {
        // one consumer per worker by construction: nothing to fall back to
    }

    @Override
    public void storeUpdate(final INDArray array, final int iterationNumber, final int epochNumber) {
        worker().store(array, epochNumber, single != null || consumers >= workers);
    }

    @Override
    public void applyUpdate(final StepFunction function, final INDArray params, final INDArray updates, final boolean isFinalStep) {
        worker().apply(function, params, updates);
    }

    @Override
    public void applyUpdate(final StepFunction function, final INDArray params, final INDArray updates, final double alpha) {
        throw new UnsupportedOperationException("D-Lion applies only its own rounds' results");
    }

    @Override
    public void receiveUpdate(final INDArray array) {
        throw new UnsupportedOperationException("D-Lion does not take external dense updates");
    }

    @Override
    public void setExternalSource(final IndexedTail source) {
        throw new UnsupportedOperationException("D-Lion does not take external update sources");
    }

    @Override
    public IndexedTail getExternalSource() {
        return null;
    }

    @Override
    public void markExternalUpdates(final boolean updatesAvailable) {
        // D-Lion never has external updates pending
    }

    /**
     * Called by ParallelWrapper when a {@code fit} ends: its replica threads are gone, and the next
     * {@code fit} builds new replicas (from the root model's parameters and updater state) on new threads.
     * Workers keep their exchanges, round numbers and statistics and are bound again on first use.
     */
    @Override
    public void reset() {
        consumers = workers;
        if (single != null) {
            return;
        }
        synchronized (all) {
            for (final DLionWorker w : all) {
                w.unbindAll();
            }
        }
        byThread.clear();
        nextWorker.set(0);
        allTouched = new CountDownLatch(workers);
    }

    @Override
    public boolean hasAnything() {
        return false;
    }

    /** Unbind every model (its updaters return to plain Lion) and close every worker's exchange. */
    public void close() {
        synchronized (all) {
            for (final DLionWorker w : all) {
                w.unbindAll();
                w.exchange().close();
            }
        }
    }
}
