package io.dlion.cli.train;

import java.nio.file.Path;

import io.dlion.dist.JobRun;

/**
 * How a worker process ({@code ./dlion worker}) survives faults: where donors hand a restarted worker the job's
 * parameters, and its own periodic checkpoints.
 *
 * @param syncDir         directory shared by every worker (e.g. NFS): a donor writes {@code join-<worker>-<round>.zip}
 *                        here for a worker that rejoins; null: hand-overs go over the network, relayed by the server.
 * @param rejoin          this worker restarts in a running job: it waits for the server's notice and its donor's state.
 * @param checkpointDir   directory of this worker's own checkpoint {@code worker-<id>.zip}; null: none.
 * @param checkpointEvery write it every this many rounds (0: never).
 * @param resume          start from this worker's own checkpoint (a whole job resumed after every process stopped).
 * @param run             job id and run id carried by checkpoints and hand-overs; another's are refused.
 */
public record Recovery(Path syncDir, boolean rejoin, Path checkpointDir, int checkpointEvery, boolean resume, JobRun run) {

    /** Checks the run is not null. */
    public Recovery {
        java.util.Objects.requireNonNull(run, "run");
    }

    /** Recovery of a job without job or run id ({@link JobRun#UNNAMED}). */
    public Recovery(final Path syncDir, final boolean rejoin, final Path checkpointDir, final int checkpointEvery, final boolean resume) {
        this(syncDir, rejoin, checkpointDir, checkpointEvery, resume, JobRun.UNNAMED);
    }

    /** @return the checkpoint file of a worker. */
    public Path checkpointOf(final int worker) {
        return checkpointDir.resolve("worker-" + worker + ".zip");
    }

    /** @return the file a donor writes for a worker that votes first in {@code round}. */
    public Path handoverOf(final int worker, final long round) {
        return syncDir.resolve("join-" + worker + "-" + round + ".zip");
    }

    /** @return this, checked: every error names its command-line option. */
    public Recovery validate() {
        if (rejoin && resume) {
            throw new IllegalArgumentException("--rejoin and --resume exclude each other: rejoin takes a live donor's parameters,"
                + " resume this worker's own checkpoint");
        }
        if (checkpointEvery < 0) {
            throw new IllegalArgumentException("--checkpoint-every must be >= 0, got " + checkpointEvery);
        }
        if ((checkpointEvery > 0 || resume) && checkpointDir == null) {
            throw new IllegalArgumentException("--checkpoint-every and --resume need --checkpoint-dir");
        }
        return this;
    }
}
