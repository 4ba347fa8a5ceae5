package io.dlion.dist;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.dlion.LionUpdater;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Binds the {@link LionUpdater}s of a model that D-Lion never sees directly: the replicas that DL4J's
 * {@code ParallelWrapper} builds on its own threads. {@link DLionAccumulator#touch()}, which the wrapper
 * calls on each replica thread before training, installs the thread's worker here; the first
 * {@link LionUpdater#applyUpdater} on that thread then asks for its vote target. Models bound directly are
 * registered too, so that an updater instance DL4J recreates for one of their blocks is bound again.
 */
public final class ReplicaBinder {
    private static final ThreadLocal<DLionWorker> CURRENT = new ThreadLocal<>();
    private static final List<DLionWorker> MODEL_WORKERS = new CopyOnWriteArrayList<>();

    private ReplicaBinder() {
    }

    static void install(final DLionWorker worker) {
        CURRENT.set(worker);
    }

    /** Watch for new updater instances of a model bound explicitly (DL4J may recreate them). */
    static void register(final DLionWorker worker) {
        MODEL_WORKERS.add(worker);
    }

    static void unregister(final DLionWorker worker) {
        MODEL_WORKERS.remove(worker);
    }

    /**
     * Called by an unbound {@link LionUpdater} on every step.
     *
     * @param updater      the updater of one updater block.
     * @param gradientView the block's gradient view (a view into the model's flat gradient array).
     * @return the vote target for the block, or null when this thread trains no D-Lion replica.
     */
    public static INDArray voteTargetFor(final LionUpdater updater, final INDArray gradientView) {
        final DLionWorker worker = CURRENT.get();
        if (worker != null) {
            return worker.bindFromUpdater(updater, gradientView);
        }
        for (final DLionWorker w : MODEL_WORKERS) {
            final INDArray target = w.bindFromUpdater(updater, gradientView);
            if (target != null) {
                return target;
            }
        }
        return null;
    }
}
