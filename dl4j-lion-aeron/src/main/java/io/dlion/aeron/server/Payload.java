package io.dlion.aeron.server;

/**
 * What the workers of a job send a slice server, and so what it aggregates: one {@link AggregationServer} serves either.
 */
public enum Payload {
    /** Sign votes, 1 bit per parameter ({@code VOTE_CHUNK}), voted by majority or counted ({@code RESULT_CHUNK}): D-Lion. */
    SIGNS,
    /**
     * fp32 gradients, 32 bits per parameter ({@code GRADIENT_CHUNK}), summed in double and averaged ({@code MEAN_CHUNK}):
     * the dense data-parallel baseline (G-Lion, G-AdamW). Its chunks are
     * {@link io.dlion.aeron.wire.GradientChunkFlyweight#CHUNK_WORDS} words.
     */
    FP32
}
