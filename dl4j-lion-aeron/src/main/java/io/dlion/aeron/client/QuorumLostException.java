package io.dlion.aeron.client;

import io.dlion.vote.VoterSet;

/**
 * Thrown by {@link AeronVoteExchange#await} when a slice's server aborted the round: fewer workers than the job's
 * quorum ({@link io.dlion.aeron.server.AggregationServer.Context#minVoters(int)}) voted before the round deadline.
 * Training cannot go on with the same parameters on every worker; restart the missing workers (or the job from a
 * checkpoint).
 */
public final class QuorumLostException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final long round;
    private final int slice;
    private final int[] voters;

    /**
     * @param round  the aborted round.
     * @param slice  the slice whose server aborted it.
     * @param voters workers that did vote before the deadline (copied).
     */
    public QuorumLostException(final long round, final int slice, final VoterSet voters) {
        super("round " + round + " aborted by the server of slice " + slice + ": only " + voters.count()
            + " worker(s) voted before the round deadline (workers " + voters + "), fewer than the job's quorum (minVoters)");
        this.round = round;
        this.slice = slice;
        this.voters = new int[voters.count()];
        int i = 0;
        for (int w = voters.next(0); w >= 0; w = voters.next(w + 1)) {
            this.voters[i++] = w;
        }
    }

    /** @return the aborted round. */
    public long round() {
        return round;
    }

    /** @return the slice whose server aborted it. */
    public int slice() {
        return slice;
    }

    /** @return the workers that voted before the deadline, in increasing order. */
    public int[] voters() {
        return voters.clone();
    }
}
