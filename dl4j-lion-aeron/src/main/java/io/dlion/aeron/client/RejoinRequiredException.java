package io.dlion.aeron.client;

import io.dlion.exchange.JoinNotice;

/**
 * Thrown by {@link AeronVoteExchange#await} when the server tells this worker to rejoin: a restarted server found it
 * one round behind the others (the old server died while broadcasting that round's result, and this worker had not
 * received all of it). Its parameters can no longer follow the job's: it must take a live worker's parameters, as a
 * restarted worker does ({@code ./dlion worker --rejoin} does this by itself).
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

    /** @return the server's notice. */
    public JoinNotice notice() {
        return notice;
    }
}
