package io.dlion.spark;

import java.io.Serializable;

/**
 * What one barrier task reports to the driver at the end of a {@code fit}.
 *
 * @param worker        the task's worker id (its partition index).
 * @param stageAttempt  the attempt of the barrier stage that finished (0 when no task failed).
 * @param host          the host of the task's executor.
 * @param executorPid   the process id of the executor JVM.
 * @param startRound    the round the task started from: 0, or the checkpoint round a retried stage resumed from.
 * @param rounds        rounds completed by the job at the end.
 * @param paramsSha256  SHA-256 of the trained parameters' values (as {@code ./dlion train} prints them).
 * @param bytesUp       bytes this task's exchange sent in this attempt (Aeron frames, headers included).
 * @param bytesDown     bytes it received in this attempt.
 * @param model         the trained model (DL4J's model zip with the updater state), from worker 0 only; else null.
 */
public record TaskReport(int worker, int stageAttempt, String host, long executorPid, long startRound, long rounds,
    String paramsSha256, long bytesUp, long bytesDown, byte[] model) implements Serializable {

    /** @return one line for a person to read (no model bytes). */
    @Override
    public String toString() {
        return String.format("worker %d (attempt %d, %s pid %d): rounds %d..%d, params-sha256 %s, bytes up %,d down %,d", worker,
            stageAttempt, host, executorPid, startRound, rounds, paramsSha256, bytesUp, bytesDown);
    }
}
