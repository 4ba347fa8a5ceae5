package io.dlion.exchange;

import java.util.concurrent.TimeoutException;

/**
 * One worker's end of dense data-parallel training (the baseline D-Lion is measured against): it submits its fp32
 * gradient for a round and waits for the mean of every worker's gradient, which every worker receives bit-identical.
 * The Aeron client is {@code AeronMeanExchange} in {@code dl4j-lion-aeron}.
 * <p>
 * Call order, per worker: {@code submit(r, ...) -> await(r, ...)} for r = 0, 1, 2, ...; then {@link #close()}. The
 * gradient passed to {@code submit} may be reused by the caller as soon as it returns.
 */
public interface MeanExchange extends AutoCloseable {

    /** @return this worker's id, 0-based, below {@link #workers()}. */
    int workerId();

    /** @return the number of workers of the job. */
    int workers();

    /** @return the number of parameters (gradient length). */
    long paramCount();

    /**
     * Send this worker's gradient for a round.
     *
     * @param round    round number, starting at 0 and increasing by one.
     * @param gradient {@link #paramCount()} values; copied.
     */
    void submit(long round, float[] gradient);

    /**
     * Wait for the mean of the round's gradients.
     *
     * @param round         the round submitted last.
     * @param timeoutMillis how long to wait at most.
     * @return the mean, {@link #paramCount()} values; the array is reused by the next round (valid until the next
     *     {@code submit}).
     * @throws TimeoutException     when the mean is not complete in time.
     * @throws InterruptedException when the waiting thread is interrupted.
     */
    float[] await(long round, long timeoutMillis) throws TimeoutException, InterruptedException;

    /** @return counters of what went over the wire for this worker. */
    ExchangeCounters counters();

    @Override
    void close();
}
