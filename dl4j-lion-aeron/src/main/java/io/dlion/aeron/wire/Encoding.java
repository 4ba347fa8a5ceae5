package io.dlion.aeron.wire;

import io.dlion.vote.VoteRule;

/**
 * Body encodings named by the {@link MessageHeaderFlyweight#ENCODING_OFFSET} field: the codes of core's
 * {@link io.dlion.codec.DownlinkEncoding}s, which write and read every body. For a frame covering {@code p}
 * parameters (a whole number of 64-parameter words, fewer only at the end of the vector):
 * <ul>
 *   <li>{@link #SIGN_BITS}: {@link io.dlion.codec.SignEncoding}, {@code ceil(p / 8)} bytes, the packed layout of
 *       {@link io.dlion.vote.RoundResult} (1 bit per parameter; little-endian words, the last word cut to
 *       its bytes). Votes, and majority results with an odd number of voters.</li>
 *   <li>{@link #TERNARY}: {@link io.dlion.codec.TernaryEncoding}, majority results with an even number of voters
 *       (-1, 0, +1), three parameters in 5 bits, bit-sliced: 5 little-endian words per 3 words of the frame, and 2 per
 *       word of its last 1 or 2 words, {@code 8 (5 floor(w / 3) + 2 (w mod 3))} bytes for w words (1.67 bits per
 *       parameter). Code 2 was the base-3 layout of 5 parameters per byte of earlier builds; it is refused.</li>
 *   <li>{@link #COUNT_PLANES}: {@link io.dlion.codec.CountEncoding}, averaging results, the count k of +1 votes
 *       as {@code b = bitsFor(voters)} bit planes of {@code ceil(p / 8)} bytes each, plane 0 (least significant
 *       bit of k) first.</li>
 *   <li>{@link #NONE} and {@link #HMAC_SHA256}: the handshake frames (HELLO, HELLO_ACK) without and with a MAC of the
 *       job's secret ({@link HelloCredentials}); their lengths are their flyweights'.</li>
 *   <li>{@link #FP32}: dense data-parallel frames ({@link GradientChunkFlyweight}, {@link MeanChunkFlyweight}): one
 *       little-endian IEEE 754 float per parameter, {@code 4 * p} bytes.</li>
 * </ul>
 */
public final class Encoding {
    /** No body, or a handshake frame without a MAC. */
    public static final int NONE = 0;
    /** One bit per parameter, packed layout. */
    public static final int SIGN_BITS = 1;
    /** Three parameters in 5 bits, bit-sliced ({@link io.dlion.codec.TernaryEncoding}). */
    public static final int TERNARY = 6;
    /** Bit planes of the +1 count. */
    public static final int COUNT_PLANES = 3;
    /** A handshake frame (HELLO, HELLO_ACK) signed with the job's secret, see {@link HelloCredentials}. */
    public static final int HMAC_SHA256 = 4;
    /** One little-endian fp32 per parameter (dense data-parallel gradients and means). */
    public static final int FP32 = 5;

    private Encoding() {
    }

    /**
     * @param rule   the servers' rule.
     * @param voters workers counted in a result chunk.
     * @return the encoding a server gives that chunk: {@link #SIGN_BITS} for a majority of an odd number of voters,
     *     {@link #TERNARY} of an even number (ties), {@link #COUNT_PLANES} when averaging.
     */
    public static int ofResult(final VoteRule rule, final int voters) {
        if (rule == VoteRule.AVERAGE) {
            return COUNT_PLANES;
        }
        return (voters & 1) == 1 ? SIGN_BITS : TERNARY;
    }

    /**
     * @param voters number of votes counted.
     * @return number of bit planes needed to hold a count in [0, voters]: {@code ceil(log2(voters + 1))}.
     */
    public static int bitsFor(final int voters) {
        return 32 - Integer.numberOfLeadingZeros(voters);
    }

    /**
     * Length of a body.
     *
     * @param encoding code.
     * @param words    64-parameter words covered (the length of {@link #TERNARY}).
     * @param params   parameters covered.
     * @param voters   votes counted (for {@link #COUNT_PLANES}).
     * @return body length in bytes.
     */
    public static int bodyLength(final int encoding, final int words, final long params, final int voters) {
        switch (encoding) {
            case NONE:
                return 0;
            case SIGN_BITS:
                return (int)((params + 7) >>> 3);
            case TERNARY:
                return io.dlion.codec.TernaryEncoding.chunkLength(words);
            case COUNT_PLANES:
                return bitsFor(voters) * (int)((params + 7) >>> 3);
            case HMAC_SHA256:
                return HelloFlyweight.SIGNED_LENGTH - MessageHeaderFlyweight.HEADER_LENGTH;
            case FP32:
                return Math.toIntExact(params * Float.BYTES);
            default:
                throw new IllegalArgumentException("unknown encoding " + encoding);
        }
    }
}
