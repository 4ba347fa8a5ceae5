package io.dlion.dist;

import java.lang.reflect.Field;

import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.WorkspaceMode;
import org.deeplearning4j.parallelism.ParallelWrapper;
import org.deeplearning4j.parallelism.factory.SymmetricTrainerContext;
import org.deeplearning4j.parallelism.trainer.SymmetricTrainer;
import org.deeplearning4j.parallelism.trainer.Trainer;

/**
 * ParallelWrapper's trainer factory for D-Lion: DL4J's symmetric trainer (the one of {@code TrainingMode.CUSTOM}),
 * whose replica, once built on its thread, is bound to the D-Lion worker {@link DLionAccumulator#touch()} gave that
 * thread. The binding is explicit: no registry outside the accumulator knows about replicas.
 */
final class ReplicaTrainerContext extends SymmetricTrainerContext {
    private final DLionAccumulator accumulator;

    ReplicaTrainerContext(final DLionAccumulator accumulator) {
        this.accumulator = accumulator;
    }

    /**
     * Install this factory in a wrapper built for {@code TrainingMode.CUSTOM}. DL4J's builder sets the factory of
     * that mode itself and offers no way to change it afterwards; the wrapper creates its trainers only at the first
     * {@code fit}, so replacing the field before then is safe.
     *
     * @param wrapper a wrapper that has not trained yet.
     */
    void installIn(final ParallelWrapper wrapper) {
        try {
            final Field field = ParallelWrapper.class.getDeclaredField("trainerContext");
            field.setAccessible(true);
            field.set(wrapper, this);
        } catch (final ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot install D-Lion's replica trainer in this DL4J version's ParallelWrapper", e);
        }
    }

    @Override
    public Trainer create(final String uuid, final int threadId, final Model model, final int rootDevice, final boolean useMDS,
        final ParallelWrapper wrapper, final WorkspaceMode mode, final int averagingFrequency) {
        final ReplicaTrainer trainer = new ReplicaTrainer(model, uuid, threadId, mode, wrapper, useMDS, accumulator);
        trainer.setName("D-Lion replica trainer " + threadId);
        trainer.setDaemon(true);
        return trainer;
    }

    /** DL4J's symmetric trainer, binding its replica to D-Lion after {@code touch()}. */
    private static final class ReplicaTrainer extends SymmetricTrainer {
        private final DLionAccumulator dlion;

        ReplicaTrainer(final Model originalModel, final String uuid, final int threadIdx, final WorkspaceMode mode,
            final ParallelWrapper wrapper, final boolean useMDS, final DLionAccumulator dlion) {
            super(originalModel, uuid, threadIdx, mode, wrapper, useMDS);
            this.dlion = dlion;
        }

        @Override
        protected void postInit() {
            super.postInit();
            dlion.bindReplica(replicatedModel);
        }
    }
}
