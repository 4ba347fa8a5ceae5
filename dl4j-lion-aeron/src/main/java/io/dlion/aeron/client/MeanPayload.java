package io.dlion.aeron.client;

import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.wire.ChunkLayout;

/**
 * fp32 gradients as the {@link RoundLoop}'s payload (the dense baseline): the worker's gradient, copied at submit and read
 * by every slice's {@link MeanSliceCodec} as it sends chunks, and the mean vector the slices' mean chunks are copied
 * into, which is the round's result. Both allocated once; the mean is overwritten by the next round.
 */
final class MeanPayload implements RoundPayload<float[]> {
    private final ExchangeContext<?> ctx;
    private final float[] gradient;
    private final float[] mean;

    /** @param ctx the exchange's concluded configuration. */
    MeanPayload(final ExchangeContext<?> ctx) {
        this.ctx = ctx;
        this.gradient = new float[(int) ctx.paramCount()];
        this.mean = new float[(int) ctx.paramCount()];
    }

    /**
     * Copy the round's gradient.
     *
     * @param values the gradient.
     * @throws IllegalArgumentException when it does not have one value per parameter.
     */
    void copy(final float[] values) {
        if (values.length != gradient.length) {
            throw new IllegalArgumentException("gradient must have " + gradient.length + " values, got " + values.length);
        }
        System.arraycopy(values, 0, gradient, 0, gradient.length);
    }

    @Override
    public SliceCodec sliceCodec(final int index, final SliceEndpoint endpoint) {
        return new MeanSliceCodec(endpoint.slice(), ctx, gradient, mean);
    }

    @Override
    public void startRound() {
        // every mean chunk overwrites its range: nothing to forget
    }

    @Override
    public int onSliceResult(final int index, final ChunkLayout slice, final long round) {
        return 0;
    }

    @Override
    public float[] result(final long round) {
        return mean;
    }
}
