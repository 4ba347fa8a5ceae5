package io.dlion.aeron.client;

import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.GradientChunkFlyweight;
import io.dlion.aeron.wire.MeanChunkFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.vote.VoterSet;
import org.agrona.MutableDirectBuffer;

/**
 * fp32 gradients on a slice's link (the dense baseline): this worker's gradient goes up as
 * {@link GradientChunkFlyweight GRADIENT_CHUNK}s of {@link GradientChunkFlyweight#CHUNK_WORDS} words, the server's
 * {@link MeanChunkFlyweight MEAN_CHUNK}s are copied into the mean vector at their offset. A restarted server sends the
 * whole slice again, which overwrites it: nothing to drop.
 */
final class MeanSliceCodec implements SliceCodec {
    private final int jobId;
    private final int workerId;
    private final int slice;
    private final float[] gradient;
    private final float[] mean;
    private final GradientChunkFlyweight gradientOut = new GradientChunkFlyweight();
    private final MeanChunkFlyweight meanIn = new MeanChunkFlyweight();

    /**
     * @param slice    the slice's number, carried in every header.
     * @param ctx      the exchange's concluded configuration.
     * @param gradient the worker's gradient, read when chunks are sent.
     * @param mean     where the means go, the whole vector.
     */
    MeanSliceCodec(final int slice, final ExchangeContext<?> ctx, final float[] gradient, final float[] mean) {
        this.jobId = ctx.jobId();
        this.workerId = ctx.workerId();
        this.slice = slice;
        this.gradient = gradient;
        this.mean = mean;
    }

    @Override
    public int chunkWords() {
        return GradientChunkFlyweight.CHUNK_WORDS;
    }

    @Override
    public int resultType() {
        return MessageType.MEAN_CHUNK;
    }

    @Override
    public int chunkLength(final long params) {
        return GradientChunkFlyweight.length(params);
    }

    @Override
    public void encodeChunk(final MutableDirectBuffer buffer, final int offset, final long round, final int wordOffset, final int words,
        final long params) {
        gradientOut.wrap(buffer, offset).encode(jobId, round, wordOffset, words, workerId, slice, gradient, (int) params);
    }

    /** Check the encoding and the length (header, voter set, one float per parameter), and copy the mean. */
    @Override
    public boolean decode(final MessageHeaderFlyweight msg, final int length, final long params, final int wordOffset, final int words,
        final VoterSet voters) {
        if (msg.encoding() != Encoding.FP32 || words > GradientChunkFlyweight.CHUNK_WORDS
            || length != MeanChunkFlyweight.length(voters.wordCount(), params)) {
            return false;
        }
        meanIn.wrapForRead(msg.buffer(), msg.offset()).decode((int) params, mean, wordOffset << 6);
        return true;
    }

    @Override
    public void restart(final int fromWord, final int toWord) {
        // the restarted server's mean chunks overwrite the slice
    }

    @Override
    public String payloadName() {
        return "gradient";
    }

    @Override
    public String resultName() {
        return "mean";
    }
}
