package io.dlion.dist;

import io.dlion.vote.RoundResult;

/**
 * Told of every round a {@link DLionAccumulator#forModel} accumulator's model applied, on the training thread, right after
 * the step function applied the round's result and before the next round starts. For histories and audits (e.g.
 * {@link io.dlion.job.RoundHistory}); none is installed by default, so the round loop pays one null check.
 */
@FunctionalInterface
public interface RoundObserver {
    /**
     * @param result the round's result, as applied; valid only during the call (the exchange may reuse its arrays).
     */
    void applied(RoundResult result);
}
