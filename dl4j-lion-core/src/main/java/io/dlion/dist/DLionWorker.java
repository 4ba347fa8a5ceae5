package io.dlion.dist;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;

import io.dlion.LionUpdater;
import io.dlion.codec.DeltaApplier;
import io.dlion.codec.SignPacker;
import io.dlion.exchange.RoundTimes;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.RoundResult;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.updater.BaseMultiLayerUpdater;
import org.deeplearning4j.nn.updater.UpdaterBlock;
import org.deeplearning4j.optimize.api.StepFunction;
import org.nd4j.linalg.api.memory.MemoryWorkspace;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;
import org.nd4j.linalg.learning.GradientUpdater;
import org.nd4j.linalg.learning.NoOpUpdater;

/**
 * The worker side of Distributed Lion (Liu et al. 2024, Algorithm 1) for one model replica:
 * <pre>
 *   round t:  delta_i = sign(c_i),  c_i = beta1 * m_i + (1 - beta1) * g_i     (LionUpdater, vote target)
 *             m_i     = beta2 * m_i + (1 - beta2) * g_i                       (local, never sent)
 *             Delta_t = exchange(delta_i)                                    (MaVo or Avg, every worker the same)
 *             theta_i = theta_i - (lr_block * Delta_t + weight decay term)
 * </pre>
 * Call order per step, on the replica's thread: {@link #store} (pack, submit, wait) then {@link #apply}. The
 * {@code update += lr_block * Delta} part is done in {@link #store}, on each part of the result as the exchange hands it
 * over ({@link VoteExchange#await(long, long, VoteExchange.ResultParts)}: with the Aeron client, each slice as soon as it
 * is complete, while the others are still on the wire); {@link #apply} then steps. Every parameter gets the same
 * {@code lr_block * Delta} added to the same update value as when the whole result is applied at once.
 */
final class DLionWorker {
    private final VoteExchange exchange;
    private final long roundTimeoutMillis;
    private final List<Block> blocks = new ArrayList<>();
    private final DLionStats stats;
    private final LocalSteps local;

    private Model boundModel;
    private Object boundUpdater;
    private INDArray votes;
    private long[] words;
    private SignPacker packer;
    private DeltaApplier applier;
    private long round;
    private RoundResult pending;
    private int epoch;
    private boolean skipStep;
    private RoundObserver observer;
    /** This round: the update the parts of the result are added into, each block's learning rate, time spent adding. */
    private INDArray partsUpdate;
    private double[] partsLr = new double[0];
    private long partsNs;
    /** Local steps taken since the last outer step (H > 1 only). */
    private int inner;
    /** theta at the start of the outer step, the outer momentum and the pseudo-gradient (H > 1 only). */
    private INDArray theta0;
    private INDArray outerM;
    private INDArray pseudo;

    DLionWorker(final VoteExchange exchange, final long roundTimeoutMillis, final LocalSteps local) {
        this.exchange = exchange;
        this.roundTimeoutMillis = roundTimeoutMillis;
        this.stats = new DLionStats(exchange.workerId(), exchange.counters());
        this.local = local;
    }

    private static final class Block {
        final long start;
        final long end;
        final LionUpdater updater;

        Block(final long start, final long end, final LionUpdater updater) {
            this.start = start;
            this.end = end;
            this.updater = updater;
        }
    }

    DLionStats stats() {
        return stats;
    }

    VoteExchange exchange() {
        return exchange;
    }

    long round() {
        return round;
    }

    /** @param observer told of every round applied from now on, or null for none. */
    void observe(final RoundObserver observer) {
        this.observer = observer;
    }

    /** @return the local steps per vote and the outer settings. */
    LocalSteps local() {
        return local;
    }

    /** @return the steps taken so far: round * H + the local steps of the outer step under way. */
    long step() {
        return round * local.steps() + inner;
    }

    /** @return true between outer steps (always with H = 1): a checkpoint or hand-over may be taken. */
    boolean atOuterBoundary() {
        return inner == 0 && pending == null;
    }

    /** @return the outer momentum (H > 1; null before the first bind or with H = 1). */
    INDArray outerMomentum() {
        return outerM;
    }

    /** Zero the outer momentum: a worker that takes another worker's parameters (rejoin). */
    void zeroOuterMomentum() {
        if (outerM != null) {
            outerM.assign(0);
        }
    }

    /**
     * Continue at {@code round}: the next {@link #store} votes in that round. Only between steps (no round
     * pending); the model must already hold the job's parameters as of the start of that round.
     */
    void resumeAt(final long round) {
        if (round < 0) {
            throw new IllegalArgumentException("round must be >= 0, got " + round);
        }
        if (pending != null) {
            throw new IllegalStateException("worker " + exchange.workerId() + " is inside round " + this.round + ": resume between steps only");
        }
        this.round = round;
        this.inner = 0;
    }

    /**
     * Bind a model: each Lion updater block writes its vote into this worker's vote buffer. A model given
     * directly (one model per process) is bound once; a ParallelWrapper replica when its thread starts.
     */
    void bindModel(final Model model) {
        final BaseMultiLayerUpdater<?> updater;
        final INDArray gradients;
        if (model instanceof MultiLayerNetwork) {
            final MultiLayerNetwork net = (MultiLayerNetwork) model;
            updater = (BaseMultiLayerUpdater<?>) net.getUpdater(true);
            gradients = net.getGradientsViewArray();
        } else if (model instanceof ComputationGraph) {
            final ComputationGraph graph = (ComputationGraph) model;
            updater = graph.getUpdater(true);
            gradients = graph.getGradientsViewArray();
        } else {
            throw new IllegalArgumentException("D-Lion trains a MultiLayerNetwork or a ComputationGraph, got " + model.getClass().getName());
        }
        allocate(gradients.length(), gradients);
        boundModel = model;
        boundUpdater = updater;
        blocks.clear();
        for (final UpdaterBlock block : updater.getUpdaterBlocks()) {
            final GradientUpdater<?> gu = block.getGradientUpdater();
            if (gu instanceof NoOpUpdater || block.getParamOffsetEnd() == block.getParamOffsetStart()) {
                continue;
            }
            if (!(gu instanceof LionUpdater)) {
                throw new IllegalArgumentException(refusal(gu.getConfig().getClass().getSimpleName(), block.getParamOffsetStart(), block.getParamOffsetEnd()));
            }
            final LionUpdater lion = (LionUpdater) gu;
            if (!local.enabled()) {
                lion.bindVoteTarget(votes.get(NDArrayIndex.interval(block.getParamOffsetStart(), block.getParamOffsetEnd())));
            }
            blocks.add(new Block(block.getParamOffsetStart(), block.getParamOffsetEnd(), lion));
        }
    }

    private static Object currentUpdater(final Model model) {
        if (model instanceof MultiLayerNetwork) {
            return ((MultiLayerNetwork) model).getUpdater(false);
        }
        return ((ComputationGraph) model).getUpdater(false);
    }

    private static String refusal(final String updater, final long from, final long to) {
        return "D-Lion needs the Lion updater (io.dlion.Lion) on every layer with trainable parameters, but parameters ["
            + from + ", " + to + ") use " + updater + ": set .updater(new Lion(...)) on the network or those layers";
    }

    /**
     * Forget the model: unbind its updaters (they return to plain Lion) so that this worker can be bound to
     * a new replica. ParallelWrapper builds new replicas, on new threads, at every {@code fit}.
     */
    void unbindAll() {
        for (final Block b : blocks) {
            b.updater.bindVoteTarget(null);
        }
        blocks.clear();
        boundModel = null;
        boundUpdater = null;
        pending = null;
    }

    @SuppressWarnings("try") // the scope-out-of-workspaces resource is held for its scope, not referenced
    private void allocate(final long n, final INDArray like) {
        if (votes != null && votes.length() == n) {
            return;
        }
        // called from inside DL4J's workspaces: everything D-Lion keeps lives outside them
        try (MemoryWorkspace outside = Nd4j.getMemoryManager().scopeOutOfWorkspaces()) {
            votes = Nd4j.create(like.dataType(), n);
            packer = new SignPacker(n, like.dataType());
            applier = new DeltaApplier();
            if (local.enabled()) {
                theta0 = Nd4j.create(like.dataType(), n);
                outerM = Nd4j.create(like.dataType(), n);
                pseudo = Nd4j.create(like.dataType(), n);
            }
        }
        words = new long[(int) ((n + 63) >>> 6)];
    }

    /** Step 1: pack the vote, exchange it, keep the result for {@link #apply}. */
    @SuppressWarnings("try") // the scope-out-of-workspaces resource is held for its scope, not referenced
    void store(final INDArray update, final int epoch, final boolean fullGroup) {
        this.epoch = epoch;
        this.skipStep = !fullGroup;
        if (votes == null || blocks.isEmpty()) {
            throw new IllegalStateException("D-Lion worker " + exchange.workerId() + " has no model bound: build ParallelWrapper replicas with"
                + " DLion.parallelWrapper(...) (it installs the trainer that binds them), or use DLion.attach for one model");
        }
        if (update.length() != votes.length()) {
            throw new IllegalStateException("update length " + update.length() + " != bound model length " + votes.length());
        }
        if (currentUpdater(boundModel) != boundUpdater) {
            throw new IllegalStateException("the model's updater was replaced after D-Lion bound it (its new Lion updaters do not vote):"
                + " attach D-Lion to the model again");
        }
        if (skipStep) {
            stats.onSkippedStep();
            return;
        }
        if (local.enabled()) {
            if (inner == 0) {
                try (MemoryWorkspace outside = Nd4j.getMemoryManager().scopeOutOfWorkspaces()) {
                    theta0.assign(boundModel.params());
                }
            }
            return;
        }
        exchange(votes, update);
    }

    /**
     * Pack the signs of {@code c}, submit them for this round and wait (bounded) for the result; with a {@code target},
     * add {@code lr_block * Delta} into it part by part as the result's parts arrive.
     */
    @SuppressWarnings("try") // the scope is the resource: arrays made inside it live outside every workspace
    private void exchange(final INDArray c, final INDArray target) {
        final long start = System.nanoTime();
        final RoundTimes times = stats.times();
        times.packStarted(start);
        try (MemoryWorkspace outside = Nd4j.getMemoryManager().scopeOutOfWorkspaces()) {
            packer.pack(c, round, words);
        }
        final long packed = System.nanoTime();
        times.record(RoundTimes.Phase.PACK, packed - start);
        partsNs = 0;
        partsUpdate = target;
        if (target != null) {
            if (partsLr.length != blocks.size()) {
                partsLr = new double[blocks.size()];
            }
            for (int i = 0; i < partsLr.length; i++) {
                partsLr[i] = blocks.get(i).updater.getConfig().getLearningRate((int) round, epoch);
            }
        }
        exchange.submit(round, words, votes.length());
        try {
            pending = target == null ? exchange.await(round, roundTimeoutMillis) : exchange.await(round, roundTimeoutMillis, this::addPart);
        } catch (final TimeoutException e) {
            throw new IllegalStateException("D-Lion worker " + exchange.workerId() + ": no result for round " + round
                + " within " + roundTimeoutMillis + " ms", e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for round " + round, e);
        }
        final long received = System.nanoTime();
        times.record(RoundTimes.Phase.WAIT, received - packed - partsNs);
        stats.onRound(pending, words, received - start);
    }

    /** {@code update += lr_block * Delta} over a part of the result, block by block. */
    @SuppressWarnings("try") // the scope-out-of-workspaces resource is held for its scope, not referenced
    private void addPart(final RoundResult part, final long from, final long to) {
        final long start = System.nanoTime();
        try (MemoryWorkspace outside = Nd4j.getMemoryManager().scopeOutOfWorkspaces()) {
            for (int i = 0; i < partsLr.length; i++) {
                final Block b = blocks.get(i);
                final long lo = Math.max(from, b.start);
                final long hi = Math.min(to, b.end);
                if (lo < hi) {
                    applier.addScaled(part, partsUpdate, lo, hi, partsLr[i]);
                }
            }
        }
        partsNs += System.nanoTime() - start;
    }

    /**
     * Step 2: the step function applies the update, which {@link #store} completed with lr_block * Delta over each block.
     * Learning-rate schedules are evaluated at the round number as the iteration (replicas' own iteration counts can
     * differ by one, rounds cannot) and at this worker's epoch.
     */
    void apply(final StepFunction function, final INDArray params, final INDArray update) {
        if (skipStep) {
            return;
        }
        if (local.enabled()) {
            function.step(params, update);
            inner++;
            if (inner == local.steps()) {
                outerStep(params, inner);
            }
            return;
        }
        if (pending == null) {
            throw new IllegalStateException("applyUpdate without storeUpdate for round " + round);
        }
        if (update != partsUpdate) {
            throw new IllegalStateException("applyUpdate for round " + round + " with another update array than storeUpdate's");
        }
        final long start = System.nanoTime();
        function.step(params, update);
        Nd4j.getExecutioner().commit();
        final long end = System.nanoTime();
        stats.times().record(RoundTimes.Phase.APPLY, partsNs + end - start);
        stats.times().roundDone(end);
        if (observer != null) {
            observer.applied(pending);
        }
        pending = null;
        partsUpdate = null;
        round++;
    }

    /**
     * End the outer step under way after fewer than H local steps (the end of a job, the same step on every worker):
     * vote on the pseudo-gradient of the steps taken, lr_out scaled by their count. Nothing happens at a boundary.
     */
    void finishOuterStep() {
        if (local.enabled() && inner > 0) {
            outerStep(boundModel.params(), inner);
        }
    }

    /**
     * The outer step after H local steps: vote on the pseudo-gradient with the outer momentum, then every worker sets
     * theta = theta0 - lr_out * (Delta + lambda * theta0) over each Lion block (parameters outside them keep theta0).
     */
    @SuppressWarnings("try") // the scope is the resource: arrays made inside it live outside every workspace
    private void outerStep(final INDArray params, final int taken) {
        final double b1 = local.outerBeta1();
        final double b2 = local.outerBeta2();
        try (MemoryWorkspace outside = Nd4j.getMemoryManager().scopeOutOfWorkspaces()) {
            pseudo.assign(theta0).subi(params);                               // g = theta - theta_i
            votes.assign(outerM).muli(b1).addi(pseudo.mul(1.0 - b1));         // c = b1 m + (1 - b1) g
            outerM.muli(b2).addi(pseudo.mul(1.0 - b2));                       // m = b2 m + (1 - b2) g
        }
        exchange(votes, null);
        final long start = System.nanoTime();
        final long lastStep = round * local.steps() + taken - 1;
        try (MemoryWorkspace outside = Nd4j.getMemoryManager().scopeOutOfWorkspaces()) {
            pseudo.assign(0);
            for (final Block b : blocks) {
                final double lr = local.outerLrScale() * taken * b.updater.getConfig().getLearningRate((int) lastStep, epoch);
                applier.addScaled(pending, pseudo, b.start, b.end, 1.0);                      // Delta
                final INDArray range = pseudo.get(NDArrayIndex.interval(b.start, b.end));
                if (local.outerWeightDecay() > 0) {
                    range.addi(theta0.get(NDArrayIndex.interval(b.start, b.end)).mul(local.outerWeightDecay()));
                }
                range.muli(lr);                                                              // lr_out (Delta + lambda theta)
            }
            params.assign(theta0).subi(pseudo);
        }
        Nd4j.getExecutioner().commit();
        final long end = System.nanoTime();
        stats.times().record(RoundTimes.Phase.APPLY, end - start);
        stats.times().roundDone(end);
        if (observer != null) {
            observer.applied(pending);
        }
        pending = null;
        inner = 0;
        round++;
    }
}
