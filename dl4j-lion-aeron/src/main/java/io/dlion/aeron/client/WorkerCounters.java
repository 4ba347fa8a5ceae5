package io.dlion.aeron.client;

import io.aeron.Aeron;
import io.aeron.Counter;
import io.dlion.aeron.Configuration;
import org.agrona.CloseHelper;

/**
 * A worker's Aeron counters, labelled {@code dlion-worker job=J worker=W: name}, readable with {@code AeronStat}.
 * The same byte figures are in the worker's {@link io.dlion.exchange.ExchangeCounters}.
 */
public final class WorkerCounters implements AutoCloseable {
    private final Counter bytesUp;
    private final Counter bytesDown;
    private final Counter rounds;
    private final Counter rejectedResults;
    private final Counter staleResults;
    private final Counter offersNotAccepted;
    private final Counter serverReconnects;

    WorkerCounters(final Aeron aeron, final int jobId, final int workerId) {
        final String prefix = "dlion-worker job=" + jobId + " worker=" + workerId + ": ";
        final int type = Configuration.WORKER_COUNTER_TYPE_ID;
        try {
            bytesUp = aeron.addCounter(type, prefix + "bytes up (votes, incl. headers)");
            bytesDown = aeron.addCounter(type, prefix + "bytes down (results, incl. headers)");
            rounds = aeron.addCounter(type, prefix + "rounds");
            rejectedResults = aeron.addCounter(type, prefix + "rejected result frames");
            staleResults = aeron.addCounter(type, prefix + "result frames of another round");
            offersNotAccepted = aeron.addCounter(type, prefix + "vote offers not accepted");
            serverReconnects = aeron.addCounter(type, prefix + "server restarts seen (HELLO again)");
        } catch (final RuntimeException ex) {
            close();
            throw ex;
        }
    }

    public Counter bytesUp() {
        return bytesUp;
    }

    public Counter bytesDown() {
        return bytesDown;
    }

    public Counter rounds() {
        return rounds;
    }

    /** @return result frames refused (malformed, wrong job, shard or order). */
    public Counter rejectedResults() {
        return rejectedResults;
    }

    /** @return result frames of a round other than the one awaited. */
    public Counter staleResults() {
        return staleResults;
    }

    /** @return vote offers refused by the publication (back pressure, admin action, not connected). */
    public Counter offersNotAccepted() {
        return offersNotAccepted;
    }

    /** @return times a shard's server came back with a new session and this worker said HELLO again. */
    public Counter serverReconnects() {
        return serverReconnects;
    }

    @Override
    public void close() {
        CloseHelper.closeAll(bytesUp, bytesDown, rounds, rejectedResults, staleResults, offersNotAccepted, serverReconnects);
    }
}
