package io.dlion.codec;

/**
 * Thrown by {@link SignPacker#pack} when the vote vector holds NaN or an infinity: such a value has no sign,
 * so it must not become a vote. The round is not sent; training is diverging and needs a human (lower the
 * learning rate, clip gradients, check the data).
 */
public final class NonFiniteVoteException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final long round;
    private final long nonFiniteCount;
    private final long paramCount;

    /**
     * @param round          the round being packed.
     * @param nonFiniteCount how many values are NaN or infinite.
     * @param paramCount     length of the vote vector.
     */
    public NonFiniteVoteException(final long round, final long nonFiniteCount, final long paramCount) {
        super(nonFiniteCount + " of " + paramCount + " vote values are NaN or infinite in round " + round
            + ": refusing to turn them into votes");
        this.round = round;
        this.nonFiniteCount = nonFiniteCount;
        this.paramCount = paramCount;
    }

    /** @return the round being packed. */
    public long round() {
        return round;
    }

    /** @return how many values are NaN or infinite. */
    public long nonFiniteCount() {
        return nonFiniteCount;
    }

    /** @return length of the vote vector. */
    public long paramCount() {
        return paramCount;
    }
}
