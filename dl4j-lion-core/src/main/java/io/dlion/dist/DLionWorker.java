package io.dlion.dist;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeoutException;

import io.dlion.LionUpdater;
import io.dlion.codec.DeltaApplier;
import io.dlion.codec.SignPacker;
import io.dlion.exchange.RoundResult;
import io.dlion.exchange.VoteExchange;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.updater.BaseMultiLayerUpdater;
import org.deeplearning4j.nn.updater.UpdaterBlock;
import org.deeplearning4j.optimize.api.StepFunction;
import org.nd4j.linalg.api.buffer.DataBuffer;
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
 * Call order per step, on the replica's thread: {@link #store} (pack, submit, wait) then {@link #apply}.
 */
final class DLionWorker {
    private final VoteExchange exchange;
    private final long roundTimeoutMillis;
    private final List<Block> blocks = new ArrayList<>();
    private final DLionStats stats;

    private DataBuffer gradientBuffer;
    private boolean explicitModel;
    private INDArray votes;
    private long[] words;
    private SignPacker packer;
    private DeltaApplier applier;
    private long round;
    private RoundResult pending;
    private int epoch;
    private boolean skipStep;

    DLionWorker(final VoteExchange exchange, final long roundTimeoutMillis) {
        this.exchange = exchange;
        this.roundTimeoutMillis = roundTimeoutMillis;
        this.stats = new DLionStats(exchange.workerId(), exchange.counters());
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
    }

    /** Explicit binding for a model D-Lion is given directly (one model per process). */
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
        gradientBuffer = rootBuffer(gradients);
        explicitModel = true;
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
            lion.bindVoteTarget(votes.get(NDArrayIndex.interval(block.getParamOffsetStart(), block.getParamOffsetEnd())));
            blocks.add(new Block(block.getParamOffsetStart(), block.getParamOffsetEnd(), lion));
        }
    }

    private static String refusal(final String updater, final long from, final long to) {
        return "D-Lion needs the Lion updater (io.dlion.Lion) on every layer with trainable parameters, but parameters ["
            + from + ", " + to + ") use " + updater + ": set .updater(new Lion(...)) on the network or those layers";
    }

    /**
     * Binding through {@link ReplicaBinder}: the block's offset is its view's offset in the flat gradient
     * buffer. An updater instance DL4J created anew for a block already bound replaces the old one.
     *
     * @return the vote target, or null when the view belongs to another model's gradients.
     */
    INDArray bindFromUpdater(final LionUpdater updater, final INDArray gradientView) {
        final DataBuffer original = rootBuffer(gradientView);
        if (gradientBuffer == null) {
            allocate(original.length(), gradientView);
            gradientBuffer = original;
        } else if (gradientBuffer != original) {
            return null;
        }
        final long start = gradientView.offset();
        final long end = start + gradientView.length();
        final Iterator<Block> it = blocks.iterator();
        while (it.hasNext()) {
            final Block b = it.next();
            if (b.start < end && start < b.end) {
                b.updater.bindVoteTarget(null);
                it.remove();
            }
        }
        final INDArray target = votes.get(NDArrayIndex.interval(start, end));
        updater.bindVoteTarget(target);
        blocks.add(new Block(start, end, updater));
        return target;
    }

    /** @return the buffer a (possibly view) array's data lives in. */
    static DataBuffer rootBuffer(final INDArray array) {
        final DataBuffer original = array.data().originalDataBuffer();
        return original != null ? original : array.data();
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
        gradientBuffer = null;
        explicitModel = false;
        pending = null;
    }

    private void allocate(final long n, final INDArray like) {
        if (votes != null && votes.length() == n) {
            return;
        }
        // called from inside DL4J's workspaces: everything D-Lion keeps lives outside them
        try (MemoryWorkspace outside = Nd4j.getMemoryManager().scopeOutOfWorkspaces()) {
            votes = Nd4j.create(like.dataType(), n);
            packer = new SignPacker(n, like.dataType());
            applier = new DeltaApplier();
        }
        words = new long[(int) ((n + 63) >>> 6)];
    }

    /** Step 1: pack the vote, exchange it, keep the result for {@link #apply}. */
    void store(final INDArray update, final int epoch, final boolean fullGroup) {
        this.epoch = epoch;
        this.skipStep = !fullGroup;
        if (votes == null || blocks.isEmpty()) {
            throw new IllegalStateException("D-Lion found no Lion updater on this model: " + refusal("another updater", 0, update.length()));
        }
        if (update.length() != votes.length()) {
            throw new IllegalStateException("update length " + update.length() + " != bound model length " + votes.length());
        }
        long covered = 0;
        for (final Block b : blocks) {
            covered += b.end - b.start;
        }
        if (covered != votes.length() && !explicitModel) {
            throw new IllegalStateException(refusal("another updater", 0, votes.length()) + " (Lion covers " + covered + " of " + votes.length() + ")");
        }
        if (skipStep) {
            stats.onSkippedStep();
            return;
        }
        final long start = System.nanoTime();
        try (MemoryWorkspace outside = Nd4j.getMemoryManager().scopeOutOfWorkspaces()) {
            packer.pack(votes, round, words);
        }
        exchange.submit(round, words, votes.length());
        try {
            pending = exchange.await(round, roundTimeoutMillis);
        } catch (final TimeoutException e) {
            throw new IllegalStateException("D-Lion worker " + exchange.workerId() + ": no result for round " + round
                + " within " + roundTimeoutMillis + " ms", e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for round " + round, e);
        }
        stats.onRound(pending, words, System.nanoTime() - start);
    }

    /**
     * Step 2: update += lr_block * Delta over each block, then the step function applies it. Learning-rate
     * schedules are evaluated at the round number as the iteration (replicas' own iteration counts can
     * differ by one, rounds cannot) and at this worker's epoch.
     */
    void apply(final StepFunction function, final INDArray params, final INDArray update) {
        if (skipStep) {
            return;
        }
        if (pending == null) {
            throw new IllegalStateException("applyUpdate without storeUpdate for round " + round);
        }
        try (MemoryWorkspace outside = Nd4j.getMemoryManager().scopeOutOfWorkspaces()) {
            for (final Block b : blocks) {
                final double lr = b.updater.getConfig().getLearningRate((int) round, epoch);
                applier.addScaled(pending, update, b.start, b.end, lr);
            }
        }
        function.step(params, update);
        pending = null;
        round++;
    }
}
