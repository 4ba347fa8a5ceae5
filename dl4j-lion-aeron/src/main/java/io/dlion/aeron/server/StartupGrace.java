package io.dlion.aeron.server;

/**
 * How long a round below the quorum waits for workers that have never sent a chunk to this server (still starting: their
 * process, their first training step) before they are dropped and the round is aborted: at most {@link #DEADLINES} round
 * timeouts per round. The same rule for the vote server and the dense server.
 */
final class StartupGrace {
    /** Round timeouts a round waits, at most, for workers that have never sent to this server. */
    static final int DEADLINES = 5;

    private long round = -1;
    private int deadlines;

    /**
     * At a round's deadline, below the quorum, with a missing worker that never sent to this server.
     *
     * @param round the open round.
     * @return true while the round may wait another deadline.
     */
    boolean waitAgain(final long round) {
        if (round != this.round) {
            this.round = round;
            deadlines = 0;
        }
        return deadlines++ < DEADLINES;
    }
}
