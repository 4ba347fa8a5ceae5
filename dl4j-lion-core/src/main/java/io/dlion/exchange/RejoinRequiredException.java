package io.dlion.exchange;

/**
 * Thrown by an exchange's {@code await} when this worker's parameters can no longer follow the job's: a round's result
 * is lost for it (the server told it so, or it saw a frame of a later round while its round was incomplete). Its
 * parameters and momentum belong to a round the job has left, so it must take a live worker's, as a restarted worker
 * does: {@link io.dlion.job.DLionJob} rejoins by itself ({@link VoteExchange#rejoin()}, then the job's hand-over), with
 * a bounded number of attempts.
 */
public class RejoinRequiredException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final long round;
    private final transient JoinNotice notice;

    /**
     * @param round  the round this worker was waiting for.
     * @param notice the server's demand: this worker's new first round and donor.
     */
    public RejoinRequiredException(final long round, final JoinNotice notice) {
        super("worker " + notice.worker() + ": round " + round + "'s result was lost in a server restart (the other workers have it);"
            + " the server asks this worker to rejoin at round " + notice.round() + " with worker " + notice.donor() + "'s parameters");
        this.round = round;
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
        this.round = round;
        this.notice = null;
    }

    /**
     * @param round   the round this worker was waiting for.
     * @param message why its result is lost for it.
     */
    protected RejoinRequiredException(final long round, final String message) {
        super(message);
        this.round = round;
        this.notice = null;
    }

    /** @return the round whose result was lost. */
    public long round() {
        return round;
    }

    /** @return the server's notice, or null when the worker found its result lost by itself. */
    public JoinNotice notice() {
        return notice;
    }
}
