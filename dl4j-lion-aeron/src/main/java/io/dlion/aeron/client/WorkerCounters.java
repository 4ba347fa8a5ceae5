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
    private final Counter unprovenFrames;
    private final Counter refusedImages;
    private final Counter badMacFrames;
    private final Counter slicesMoved;

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
            serverReconnects = aeron.addCounter(type, prefix + "server restarts seen (a new session proven)");
            unprovenFrames = aeron.addCounter(type, prefix + "frames from unproven result images (dropped)");
            refusedImages = aeron.addCounter(type, prefix + "result images refused (not proven in time, or a forged HELLO_ACK)");
            badMacFrames = aeron.addCounter(type, prefix + "frames of the proven server with a wrong frame tag (dropped)");
            slicesMoved = aeron.addCounter(type, prefix + "slice servers found dead (their slices moved to the next live rank)");
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

    /** @return result frames refused (malformed, wrong job, slice or order). */
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

    /** @return times a slice's server came back with a new session and proved it (a restarted server). */
    public Counter serverReconnects() {
        return serverReconnects;
    }

    /** @return frames dropped because they came on a result image whose session no HELLO_ACK of the job's server proved. */
    public Counter unprovenFrames() {
        return unprovenFrames;
    }

    /**
     * @return result images refused: not proven within the timeout, or carrying a forged HELLO_ACK; a network image is
     *     rejected ({@code Image.reject}), an IPC image is ignored for good.
     */
    public Counter refusedImages() {
        return refusedImages;
    }

    /** @return frames on the proven server's image whose frame tag was wrong: forged or altered on the path (frameMac jobs). */
    public Counter badMacFrames() {
        return badMacFrames;
    }

    /** @return slice servers this worker found dead, whose slices moved to the next live rank ({@code SliceOwners}). */
    public Counter slicesMoved() {
        return slicesMoved;
    }

    @Override
    public void close() {
        CloseHelper.closeAll(bytesUp, bytesDown, rounds, rejectedResults, staleResults, offersNotAccepted, serverReconnects,
            unprovenFrames, refusedImages, badMacFrames, slicesMoved);
    }
}
