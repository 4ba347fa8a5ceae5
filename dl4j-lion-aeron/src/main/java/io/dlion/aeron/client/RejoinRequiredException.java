package io.dlion.aeron.client;

import io.dlion.exchange.JoinNotice;

/**
 * Thrown by {@link AeronVoteExchange#await} when this worker's parameters can no longer follow the job's: the server
 * tells it to rejoin (a restarted server found it one round behind the others: the old server died while broadcasting
 * that round's result, and this worker had not received all of it), or a frame of a later round arrived while its
 * round's result was incomplete (the rest will never come: e.g. its result image was recreated after a stall longer than
 * Aeron's liveness timeout). It must take a live worker's parameters, as a restarted worker does ({@code ./dlion worker}
 * does this by itself) instead of waiting for its timeout.
 */
public final class RejoinRequiredException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final transient JoinNotice notice;

    /**
     * @param round  the round this worker was waiting for.
     * @param notice the server's notice: first round and donor.
     */
    public RejoinRequiredException(final long round, final JoinNotice notice) {
        super("worker " + notice.worker() + ": round " + round + "'s result was lost in a server restart (the other workers have it);"
            + " the server asks this worker to rejoin at round " + notice.round() + " with worker " + notice.donor() + "'s parameters");
        this.notice = notice;
    }

    /**
     * @param round      the round this worker was waiting for.
     * @param worker     this worker.
     * @param laterRound the later round whose frame arrived first.
     */
    public RejoinRequiredException(final long round, final int worker, final long laterRound) {
        super("worker " + worker + ": part of round " + round + "'s result never arrived (a frame of round " + laterRound
            + " came first: the result stream lost it for good); this worker must rejoin with a live worker's parameters");
        this.notice = null;
    }

    /** @return the server's notice, or null when the worker found its result lost by itself. */
    public JoinNotice notice() {
        return notice;
    }
}
