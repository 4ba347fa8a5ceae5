package io.dlion.aeron.client;

import io.dlion.exchange.JoinNotice;

/**
 * Thrown by {@link AeronVoteExchange#await} when this worker's parameters can no longer follow the job's: the server
 * tells it to rejoin (a restarted server found it one round behind the others: the old server died while broadcasting
 * that round's result, and this worker had not received all of it), or a frame of a later round arrived while its
 * round's result was incomplete (the rest will never come: e.g. its result image was recreated after a stall longer than
 * Aeron's liveness timeout). It must take a live worker's parameters, as a restarted worker does:
 * {@link io.dlion.job.DLionJob} does this by itself ({@link AeronVoteExchange#rejoin()}, then its hand-over).
 */
public final class RejoinRequiredException extends io.dlion.exchange.RejoinRequiredException {
    private static final long serialVersionUID = 1L;

    /**
     * @param round  the round this worker was waiting for.
     * @param notice the server's notice: first round and donor.
     */
    public RejoinRequiredException(final long round, final JoinNotice notice) {
        super(round, notice);
    }

    /**
     * @param round      the round this worker was waiting for.
     * @param worker     this worker.
     * @param laterRound the later round whose frame arrived first.
     */
    public RejoinRequiredException(final long round, final int worker, final long laterRound) {
        super(round, worker, laterRound);
    }

    private RejoinRequiredException(final long round, final String message) {
        super(round, message);
    }

    /**
     * @param round      the round this worker was waiting for.
     * @param worker     this worker.
     * @param slice      the slice whose result of the round never came.
     * @param silentNs   how long its live server has sent this worker nothing.
     * @param laterRound the later round of which another slice holds a frame.
     * @return the exception for a result the slice's image will never deliver ({@code ExchangeContext#resultLostNs}).
     */
    static RejoinRequiredException silentSlice(final long round, final int worker, final int slice, final long silentNs, final long laterRound) {
        return new RejoinRequiredException(round, "worker " + worker + ": slice " + slice + "'s part of round " + round
            + "'s result never arrived: its server lives but sent this worker nothing for at least " + silentNs / 1_000_000 + " ms, while"
            + " another slice holds a frame of round " + laterRound + " (the job has completed round " + round + "); this worker"
            + " must rejoin with a live worker's parameters");
    }
}
