package io.dlion.cli.train;

import java.nio.file.Path;

/**
 * How a worker process ({@code ./dlion worker}) survives faults: where donors hand a restarted worker the job's
 * parameters, and its own periodic checkpoints.
 *
 * @param syncDir         directory shared by every worker (e.g. NFS): a donor writes {@code join-<worker>-<round>.zip}
 *                        here for a worker that rejoins; null: this worker cannot donate or rejoin.
 * @param rejoin          this worker restarts in a running job: it waits for the server's notice and its donor's file.
 * @param checkpointDir   directory of this worker's own checkpoint {@code worker-<id>.zip}; null: none.
 * @param checkpointEvery write it every this many rounds (0: never).
 * @param resume          start from this worker's own checkpoint (a whole job resumed after every process stopped).
 */
public record Recovery(Path syncDir, boolean rejoin, Path checkpointDir, int checkpointEvery, boolean resume) {

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
        if (rejoin && syncDir == null) {
            throw new IllegalArgumentException("--rejoin needs --sync-dir (where the donor writes the parameters)");
        }
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
