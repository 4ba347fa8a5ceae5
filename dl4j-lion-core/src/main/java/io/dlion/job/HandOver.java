package io.dlion.job;

import java.io.IOException;
import java.util.concurrent.TimeoutException;

import io.dlion.dist.DLionAccumulator;
import io.dlion.dist.DLionCheckpoint;
import io.dlion.exchange.JoinNotice;
import io.dlion.exchange.VoteExchange;

/**
 * How a worker that (re)joins a running job gets the job's parameters from a live worker, its donor.
 * <p>
 * Call order: the server names the joining worker's first round R and a donor ({@link JoinNotice}); the donor's
 * {@link DLionJob} calls {@link #give} between the steps of rounds R − 1 and R, while the joining worker's job
 * waits in {@link #take} for exactly that hand-over; a hand-over that cannot be sent at once goes on in
 * {@link #doWork()}. A worker whose round result was lost mid-job calls {@link #prepareTake()} before its
 * exchange rejoins, then {@link #take}. Implementations: {@link DirectoryHandOver} (a directory every worker can reach) and the Aeron
 * module's network hand-over (relayed by the server). Both carry the job's {@link io.dlion.dist.JobRun} and refuse
 * another's.
 */
public interface HandOver {

    /**
     * Check, once, that this hand-over can work with the job's exchange; {@link DLionJob.Builder#build()} calls it before
     * anything else, so that a set-up that could never hand over fails at once rather than at a rejoin's timeout.
     *
     * @param exchange the job's exchange.
     * @throws IllegalArgumentException naming the setting that is missing or wrong.
     */
    default void bind(final VoteExchange exchange) {
    }

    /**
     * Joining side: get ready to receive before the exchange asks to join ({@link VoteExchange#rejoin()}), so that
     * nothing the donor sends can go out before this worker listens.
     */
    default void prepareTake() {
    }

    /**
     * Donor side: hand over the parameters the donor holds at the start of {@code notice.round()}.
     *
     * @param notice      the joining worker, its first round (the donor's current round) and this donor.
     * @param accumulator the donor's accumulator; its model holds the parameters.
     * @return where the hand-over went, for the log.
     * @throws IOException when it could not be written.
     */
    String give(JoinNotice notice, DLionAccumulator accumulator) throws IOException;

    /**
     * Donor side: go on with hand-overs given and not yet sent, as far as possible without blocking. Called between
     * rounds by the job (and by a network hand-over's exchange while it waits for a result); hand-overs that complete
     * inside {@link #give} do nothing here.
     *
     * @return work done, 0 when there was nothing to do.
     */
    default int doWork() {
        return 0;
    }

    /**
     * Joining side: wait for the donor's hand-over.
     *
     * @param notice        the server's notice naming this worker, its first round and its donor.
     * @param timeoutMillis longest wait.
     * @param idle          run while waiting (keeps the exchange polled so the others are not held up).
     * @return the donor's parameters as of the start of {@code notice.round()}.
     * @throws IOException          when it could not be read.
     * @throws TimeoutException     when the donor's hand-over did not come in time.
     * @throws InterruptedException when interrupted.
     */
    DLionCheckpoint take(JoinNotice notice, long timeoutMillis, Runnable idle)
        throws IOException, TimeoutException, InterruptedException;
}
