package io.dlion.exchange;

import java.util.List;
import java.util.concurrent.TimeoutException;

import io.dlion.vote.RoundResult;

/**
 * One worker's end of the vote: it submits its packed sign vote for a round and waits for that round's
 * result. Implementations: {@link InProcessVoteHub} (N workers in one JVM) and the Aeron client in
 * {@code dl4j-lion-aeron}; training code does not know which one it has.
 * <p>
 * Call order, per worker: {@code submit(r, ...) -> await(r, ...)} for r = 0, 1, 2, ...; then
 * {@link #close()}. The words passed to {@code submit} may be reused by the caller as soon as it returns.
 */
public interface VoteExchange extends AutoCloseable {

    /** @return this worker's id, 0-based, below {@link #workers()}. */
    int workerId();

    /** @return the number of workers of the job. */
    int workers();

    /**
     * Send this worker's vote for a round.
     *
     * @param round      round number, starting at 0 and increasing by one.
     * @param signWords  packed signs (bit 1 = +1) in the packed layout of {@link RoundResult}.
     * @param paramCount number of parameters the words hold.
     */
    void submit(long round, long[] signWords, long paramCount);

    /**
     * Wait for the result of a round.
     *
     * @param round         the round submitted last.
     * @param timeoutMillis how long to wait at most.
     * @return the result every worker applies; valid until the next {@code submit} on this exchange, which may reuse
     *     its arrays (the Aeron client does): copy what must outlive it.
     * @throws TimeoutException     when no result arrived in time.
     * @throws InterruptedException when the waiting thread is interrupted.
     */
    RoundResult await(long round, long timeoutMillis) throws TimeoutException, InterruptedException;

    /**
     * Wait for the result of a round as {@link #await(long, long)} does, handing each part of the result to
     * {@code parts} as soon as that part is complete and checked, so that the caller can apply it while the rest is still
     * on the wire. The parts cover the parameters once, in no fixed order, and are given on the calling thread before
     * this method returns; a part's values are those of the whole result over its range. An exception leaves some parts
     * given and the others not. This default gives the whole result as one part once it is complete; the Aeron client
     * gives each slice of a sharded job as its server's last result chunk is read.
     *
     * @param round         the round submitted last.
     * @param timeoutMillis how long to wait at most.
     * @param parts         receives the parts.
     * @return the whole result, as {@link #await(long, long)}.
     * @throws TimeoutException     when no result arrived in time.
     * @throws InterruptedException when the waiting thread is interrupted.
     */
    default RoundResult await(final long round, final long timeoutMillis, final ResultParts parts)
        throws TimeoutException, InterruptedException {
        final RoundResult result = await(round, timeoutMillis);
        parts.onPart(result, 0, result.paramCount());
        return result;
    }

    /** Receives the parts of a round's result that are complete before the whole of it ({@link #await(long, long, ResultParts)}). */
    @FunctionalInterface
    interface ResultParts {
        /**
         * @param part      a result whose values over {@code [fromParam, toParam)} are the round's (its arrays may be the
         *                  whole result's buffers, valid as the whole result is).
         * @param fromParam first parameter of the part.
         * @param toParam   the parameter after its last.
         */
        void onPart(RoundResult part, long fromParam, long toParam);
    }

    /**
     * Workers the job's server announced as (re)joining since the last call, so that the donor among the
     * receivers can hand over its parameters; called between rounds on the training thread.
     *
     * @return the notices received, possibly empty; exchanges without rejoin support return an empty list.
     */
    default List<JoinNotice> takeJoinNotices() {
        return List.of();
    }

    /**
     * For the exchange of a worker that rejoins a running job (created to join, e.g. {@code join(true)} in the
     * Aeron client's context): wait until the server names this worker's first round and its donor.
     *
     * @param timeoutMillis how long to wait at most.
     * @return the notice naming this worker.
     * @throws TimeoutException      when no notice arrived in time.
     * @throws InterruptedException  when the waiting thread is interrupted.
     * @throws UnsupportedOperationException when this exchange cannot rejoin a running job (the in-process hub).
     */
    default JoinNotice awaitJoin(final long timeoutMillis) throws TimeoutException, InterruptedException {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot rejoin a running job");
    }

    /**
     * Start over as a worker that rejoins the running job, for a worker whose round result was lost
     * ({@link RejoinRequiredException}): leave the job under this worker's current session and ask the servers anew for
     * a first round and a donor, as an exchange created to join does; {@link #awaitJoin} follows.
     *
     * @throws UnsupportedOperationException when this exchange cannot rejoin a running job (the in-process hub).
     */
    default void rejoin() {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot rejoin a running job");
    }

    /**
     * Between rounds, while this worker does not vote (it waits for a hand-over): read and drop results it will not
     * vote in, so that it does not hold up the others. Exchanges that buffer nothing do nothing.
     *
     * @return work done (frames read), 0 when there was nothing to do.
     */
    default int pollIdle() {
        return 0;
    }

    /** @return counters of what went over the wire for this worker. */
    ExchangeCounters counters();

    @Override
    void close();
}
