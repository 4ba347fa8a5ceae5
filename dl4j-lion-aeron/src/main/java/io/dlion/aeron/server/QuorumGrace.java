package io.dlion.aeron.server;

/**
 * How long a round below the quorum waits for missing workers that may still vote before they are dropped and the round
 * is aborted: at most {@link #DEADLINES} round timeouts more per round. A missing worker may still vote when it has never
 * sent a chunk to this server (still starting: its process, its first training step) or when its process is alive (the
 * image of its session is still connected: its media driver sends heartbeats, so it is slow, not gone: a long checkpoint
 * write, a donor writing a hand-over, a pause, a cold JVM). A worker whose process died is not waited for once Aeron
 * closes its image (the image liveness timeout, 10 s by default; at once for a publication closed cleanly over IPC).
 * The same rule for the vote server and the dense server.
 */
final class QuorumGrace {
    /** Round timeouts a round below the quorum waits, at most, beyond its first. */
    static final int DEADLINES = 5;

    private long round = -1;
    private int deadlines;

    /**
     * At a round's deadline, below the quorum, with enough missing workers that may still vote to reach it.
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
