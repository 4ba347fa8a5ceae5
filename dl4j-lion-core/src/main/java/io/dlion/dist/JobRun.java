package io.dlion.dist;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;

/**
 * Which job, and which start of it, a piece of saved state belongs to: checkpoints and hand-overs carry it, and a
 * worker refuses one of another job or run, so a stale file of an earlier job in a reused directory is never loaded.
 * <p>
 * The run id is given by the user (or the scheduler's job id, see the command line) and is the same on every worker of
 * one job start; a whole-job resume passes the run id of the checkpoints it continues. The empty run id means "none
 * given": it matches only itself.
 *
 * @param jobId the job id (the transport's).
 * @param runId the run id of this job start, "" for none.
 */
public record JobRun(int jobId, String runId) {
    /** No job id and no run id: the default of a job that is not told them. */
    public static final JobRun UNNAMED = new JobRun(0, "");

    /** Checks the run id is not null. */
    public JobRun {
        Objects.requireNonNull(runId, "runId");
    }

    /** @return the run id as 64 bits for the wire: the first 8 bytes of its SHA-256, big-endian (0 for none). */
    public long runHash() {
        if (runId.isEmpty()) {
            return 0;
        }
        try {
            final byte[] d = MessageDigest.getInstance("SHA-256").digest(runId.getBytes(StandardCharsets.UTF_8));
            long h = 0;
            for (int i = 0; i < Long.BYTES; i++) {
                h = (h << 8) | (d[i] & 0xFF);
            }
            return h;
        } catch (final NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * @param what  the state checked, e.g. "checkpoint /x/worker-2.zip".
     * @param other the job and run the state carries.
     * @throws IllegalStateException naming both when they differ.
     */
    public void check(final String what, final JobRun other) {
        if (!equals(other)) {
            throw new IllegalStateException(what + " is of " + other + ", this worker's job is " + this + ": refused (state of another job"
                + " or of an earlier run; to continue that run, start with its run id)");
        }
    }

    @Override
    public String toString() {
        return "job " + jobId + " run '" + runId + "'";
    }
}
