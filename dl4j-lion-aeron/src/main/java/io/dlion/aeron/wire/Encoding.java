package io.dlion.aeron.wire;

/**
 * Body encodings named by the {@link MessageHeaderFlyweight#ENCODING_OFFSET} field. For a chunk of {@code w}
 * words covering {@code p} parameters:
 * <ul>
 *   <li>{@link #SIGN_BITS}: {@code w} little-endian longs in the packed layout of
 *       {@link io.dlion.exchange.RoundResult} (1 bit per parameter). Votes, and majority results with an odd
 *       number of voters.</li>
 *   <li>{@link #TERNARY}: majority results with an even number of voters (-1, 0, +1), base-3 packed five
 *       parameters per byte, {@code ceil(p / 5)} bytes (1.6 bits per parameter).</li>
 *   <li>{@link #COUNT_PLANES}: averaging results, the count k of +1 votes as {@code b = bitsFor(voters)} bit
 *       planes of {@code w} little-endian longs each, plane 0 (least significant bit of k) first.</li>
 * </ul>
 */
public final class Encoding {
    /** No body (HELLO without credentials). */
    public static final int NONE = 0;
    /** One bit per parameter, packed layout. */
    public static final int SIGN_BITS = 1;
    /** Base-3, five parameters per byte. */
    public static final int TERNARY = 2;
    /** Bit planes of the +1 count. */
    public static final int COUNT_PLANES = 3;

    /** Parameters per byte of {@link #TERNARY}. */
    public static final int TRITS_PER_BYTE = 5;

    private Encoding() {
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
     * @param words    64-parameter words covered.
     * @param params   parameters covered.
     * @param voters   votes counted (for {@link #COUNT_PLANES}).
     * @return body length in bytes.
     */
    public static int bodyLength(final int encoding, final int words, final long params, final int voters) {
        switch (encoding) {
            case NONE:
                return 0;
            case SIGN_BITS:
                return words * Long.BYTES;
            case TERNARY:
                return (int)((params + TRITS_PER_BYTE - 1) / TRITS_PER_BYTE);
            case COUNT_PLANES:
                return bitsFor(voters) * words * Long.BYTES;
            default:
                throw new IllegalArgumentException("unknown encoding " + encoding);
        }
    }
}
