package io.dlion.aeron.server;

import io.dlion.aeron.wire.ChunkLayout;
import org.agrona.concurrent.Agent;

/**
 * The server of one slice of the parameters, whatever the payload: sign votes ({@link AggregationServer}, voted) or fp32
 * gradients ({@link DenseAggregationServer}, summed in double and averaged). Both take the same
 * {@link AggregationServer.Context}, so that who serves which slice ({@link AggregationServer.Context#slice}) is decided
 * in one place for both; a process runs either one as an {@link Agent}.
 */
public interface SliceServer extends Agent, AutoCloseable {
    /**
     * @param ctx   the slice's configuration.
     * @param dense true: fp32 gradients (the dense baseline); false: sign votes.
     * @return the server, its subscription, publication and counters added.
     */
    static SliceServer of(final AggregationServer.Context ctx, final boolean dense) {
        return dense ? new DenseAggregationServer(ctx) : new AggregationServer(ctx);
    }

    /** @return the counters of this server. */
    ServerCounters counters();

    /** @return the configuration. */
    AggregationServer.Context context();

    /** @return the chunk grid of this server's slice. */
    ChunkLayout layout();

    /** @return true when the result publication has at least one connected subscriber. */
    boolean isConnected();

    /** @return hand-over frames relayed, payload bytes, frames rejected (zeros where there is no hand-over). */
    long[] handOverCounts();

    @Override
    void close();
}
