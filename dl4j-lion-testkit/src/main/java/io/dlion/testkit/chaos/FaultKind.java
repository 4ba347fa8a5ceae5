package io.dlion.testkit.chaos;

import java.util.Locale;

/** What the nemesis does to the job, and the bound each fault's recovery is checked against ({@link ChaosChecker}). */
public enum FaultKind {
    /** SIGKILL of one worker, started again with {@code --rejoin} after its down time. */
    KILL_WORKER,
    /** SIGKILL of the rank that serves slice 0 (the hand-over relay), started again with {@code --rejoin}. */
    KILL_RELAY,
    /** SIGKILL of two workers at once (the quorum still met by the others), both started again with {@code --rejoin}. */
    KILL_TWO,
    /** SIGSTOP of one worker for longer than the round deadline (shorter than a slice server's silence bound), then SIGCONT. */
    STOP,
    /** A burst of received-packet loss at one worker or at all of them: the embedded driver drops received data frames. */
    LOSS,
    /** Garbage frames ({@code ./dlion garbage}) sprayed at one slice's vote port. */
    GARBAGE,
    /** A stranger: a worker process with another secret says HELLO to every slice's server as a joining worker. */
    STRANGER;

    /** @return the name in logs and summaries, e.g. {@code kill-worker}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** @return true for the kinds that SIGKILL workers and restart them. */
    public boolean kills() {
        return this == KILL_WORKER || this == KILL_RELAY || this == KILL_TWO;
    }
}
