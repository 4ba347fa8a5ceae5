package io.dlion.aeron.client;

/**
 * Thrown by {@link AeronVoteExchange#await} when a shard's server aborted the round: fewer workers than the job's
 * quorum ({@link io.dlion.aeron.server.AggregationServer.Context#minVoters(int)}) voted before the round deadline.
 * Training cannot go on with the same parameters on every worker; restart the missing workers (or the job from a
 * checkpoint).
 */
public final class QuorumLostException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final long round;
    private final int shard;
    private final long voterMask;

    /**
     * @param round     the aborted round.
     * @param shard     the shard whose server aborted it.
     * @param voterMask workers that did vote before the deadline.
     */
    public QuorumLostException(final long round, final int shard, final long voterMask) {
        super("round " + round + " aborted by the server of shard " + shard + ": only " + Long.bitCount(voterMask)
            + " worker(s) voted before the round deadline (voter mask 0x" + Long.toHexString(voterMask)
            + "), fewer than the job's quorum (minVoters)");
        this.round = round;
        this.shard = shard;
        this.voterMask = voterMask;
    }

    /** @return the aborted round. */
    public long round() {
        return round;
    }

    /** @return the shard whose server aborted it. */
    public int shard() {
        return shard;
    }

    /** @return workers that voted before the deadline. */
    public long voterMask() {
        return voterMask;
    }
}
