package io.dlion.aeron.client;

import java.util.List;
import java.util.concurrent.TimeoutException;

import io.aeron.Aeron;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.JobContext;
import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.wire.GradientChunkFlyweight;
import io.dlion.aeron.wire.MeanChunkFlyweight;
import io.dlion.exchange.ExchangeCounters;
import io.dlion.exchange.MeanExchange;

/**
 * A worker's end of dense data-parallel training over Aeron, against one {@code AggregationServer} of fp32 gradients per
 * slice ({@code Payload.FP32}; one for the star, one in every worker for the sharded topology, a reduce-scatter then an
 * all-gather). It is the vote client with another payload: the same {@link RoundLoop} over one {@link SliceLink} per
 * slice as {@link AeronVoteExchange}'s (channels, HELLO with the job's secret, the server's proof by HELLO_ACK, the header
 * checks, unproven images refused, HELLO again after the server's silence, a restarted server's round sent again), with a
 * {@link MeanPayload} (the gradient copy and the mean vector, through each link's {@link MeanSliceCodec}).
 * <p>
 * {@link #submit} copies the gradient and sends the {@link GradientChunkFlyweight GRADIENT_CHUNK}s the publications take,
 * starting with the slice after this worker's own (worker i starts with slice i + 1, so that no server gets every
 * worker's first chunks at once); {@link #await} sends the rest while it reads every slice server's
 * {@link MeanChunkFlyweight MEAN_CHUNK}s in word order (means of early chunks arrive while late chunks are still going
 * up), and gives up at the deadline with a {@link TimeoutException}; a ROUND_ABORT of the round throws
 * {@link QuorumLostException}, a frame of a later round while the mean is incomplete (the rest of it will never come) or
 * a server's demand to rejoin throws {@link RejoinRequiredException} (the baseline does not rejoin). Bytes are counted
 * as the vote client counts them: Aeron's data header, the message header and the body, padded to 32 bytes.
 * <p>
 * The gradient copy and the mean are allocated once, with the exchange; the mean returned by {@link #await} is
 * overwritten by the next round. Frame tags ({@link JobContext#frameMac(boolean)}) are not supported with this payload.
 * Not thread-safe: one training thread calls {@code submit -> await} per round.
 */
public final class AeronMeanExchange implements MeanExchange {
    private final Context ctx;
    private final MeanPayload payload;
    private final RoundLoop<float[]> loop;
    private final ExchangeCounters exchangeCounters = new ExchangeCounters();

    /**
     * Connect to every slice's server: says HELLO (repeated until answered) and waits up to the connect timeout for
     * every server's HELLO_ACK, which proves the server and the session its means come on.
     *
     * @param ctx configuration, concluded here.
     * @throws IllegalStateException when a server does not connect in time.
     */
    public AeronMeanExchange(final Context ctx) {
        this.ctx = ctx.conclude();
        this.payload = new MeanPayload(ctx);
        this.loop = new RoundLoop<>(ctx, payload, false, exchangeCounters);
        try {
            loop.connect(RoundLoop.NO_WORK);
        } catch (final RuntimeException ex) {
            close();
            throw ex;
        }
    }

    @Override
    public int workerId() {
        return ctx.workerId;
    }

    @Override
    public int workers() {
        return ctx.workers();
    }

    @Override
    public long paramCount() {
        return ctx.paramCount();
    }

    @Override
    public void submit(final long round, final float[] values) {
        loop.checkSubmit(round);
        payload.copy(values);
        loop.submit(round);
    }

    /**
     * Wait for the round's mean, sending the gradient chunks that {@link #submit} could not send yet.
     *
     * @return the mean; overwritten by the next round, valid until the next {@link #submit}.
     * @throws TimeoutException        when the mean is not complete in time.
     * @throws QuorumLostException     when a slice's server aborted the round.
     * @throws RejoinRequiredException when a server tells this worker to rejoin, or a frame of a later round arrives while
     *                                 this round's mean is incomplete.
     */
    @Override
    public float[] await(final long round, final long timeoutMillis) throws TimeoutException, InterruptedException {
        return loop.await(round, timeoutMillis, RoundLoop.NO_WORK);
    }

    @Override
    public ExchangeCounters counters() {
        return exchangeCounters;
    }

    /** @return this worker's Aeron counters. */
    public WorkerCounters workerCounters() {
        return loop.counters();
    }

    @Override
    public void close() {
        loop.close();
    }

    /**
     * Configuration of one worker's dense exchange. Required: {@link #aeron(Aeron)}, {@link #jobId(int)},
     * {@link #workerId(int)}, {@link #workers(int)}, {@link #paramCount(long)}; without {@link #slices(List)} one
     * server on the {@link Configuration} channels covers every parameter. The job's shared settings are
     * {@link JobContext}'s ({@code rule} and {@code chunkWords} do not apply: the slices' chunks are
     * {@link GradientChunkFlyweight#CHUNK_WORDS} words), the exchange's {@link ExchangeContext}'s.
     */
    public static final class Context extends ExchangeContext<Context> {
        /**
         * Validate the configuration once.
         *
         * @return this for a fluent API.
         * @throws IllegalArgumentException naming the field that is wrong.
         */
        @Override
        public Context conclude() {
            super.conclude();
            if (frameMac()) {
                throw new IllegalArgumentException("frameMac is not supported by the dense baseline (AeronMeanExchange)");
            }
            if (paramCount() > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("paramCount must be at most 2^31 - 9 for dense sharing, got " + paramCount());
            }
            SliceEndpoint.checkCover(slices(), paramCount(), GradientChunkFlyweight.CHUNK_WORDS);
            return this;
        }
    }
}
