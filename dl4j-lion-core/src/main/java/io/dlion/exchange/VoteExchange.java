package io.dlion.exchange;

import java.util.List;
import java.util.concurrent.TimeoutException;

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
     * Workers the job's server announced as (re)joining since the last call, so that the donor among the
     * receivers can hand over its parameters; called between rounds on the training thread.
     *
     * @return the notices received, possibly empty; exchanges without rejoin support return an empty list.
     */
    default List<JoinNotice> takeJoinNotices() {
        return List.of();
    }

    /** @return counters of what went over the wire for this worker. */
    ExchangeCounters counters();

    @Override
    void close();
}
