package io.dlion.aeron.server;

import java.util.Arrays;

import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.GradientChunkFlyweight;
import io.dlion.aeron.wire.MessageType;
import org.agrona.DirectBuffer;

/**
 * fp32 gradients ({@link Payload#FP32}), the dense baseline: every worker's gradient of a chunk, and its mean
 * {@code (float) (sum_i (double) g_i / voters)}, summed in worker order, so that N identical gradients give back the
 * gradient exactly. Allocated once: {@code slots * workers} chunks of gradients, never N full vectors.
 */
final class MeanAggregation implements Aggregation {
    private final float[][][] gradients;
    private final float[][] mean;
    private final double[] sum;
    private final GradientChunkFlyweight gradient = new GradientChunkFlyweight();

    /**
     * @param workers    of the job.
     * @param chunkWords words of a chunk ({@link GradientChunkFlyweight#CHUNK_WORDS} at most).
     * @param slots      chunks held at once.
     */
    MeanAggregation(final int workers, final int chunkWords, final int slots) {
        final int chunkParams = chunkWords * Long.SIZE;
        this.gradients = new float[slots][workers][chunkParams];
        this.mean = new float[slots][chunkParams];
        this.sum = new double[chunkParams];
    }

    @Override
    public int frameType() {
        return MessageType.GRADIENT_CHUNK;
    }

    @Override
    public int encoding() {
        return Encoding.FP32;
    }

    @Override
    public int frameLength(final long chunkParams) {
        return GradientChunkFlyweight.length(chunkParams);
    }

    @Override
    public void store(final DirectBuffer buffer, final int offset, final ChunkSlot slot, final int worker, final long chunkParams) {
        gradient.wrapForRead(buffer, offset).decode((int) chunkParams, gradients[slot.index][worker], 0);
    }

    @Override
    public void aggregate(final ChunkSlot slot, final int words, final long chunkParams) {
        final int params = (int) chunkParams;
        Arrays.fill(sum, 0, params, 0.0);
        for (int w = slot.voters.next(0); w >= 0; w = slot.voters.next(w + 1)) {
            final float[] g = gradients[slot.index][w];
            for (int j = 0; j < params; j++) {
                sum[j] += g[j];
            }
        }
        final double voters = slot.voters.count();
        final float[] m = mean[slot.index];
        for (int j = 0; j < params; j++) {
            m[j] = (float) (sum[j] / voters);
        }
    }

    @Override
    public boolean publish(final ResultPublisher publisher, final long round, final ChunkSlot slot) {
        return publisher.publishMean(round, slot.chunk, slot.voters, mean[slot.index]);
    }
}
