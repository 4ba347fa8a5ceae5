package io.dlion.job;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.dlion.dist.DLionAccumulator;
import io.dlion.dist.DLionCheckpoint;
import io.dlion.dist.JobRun;
import io.dlion.exchange.JoinNotice;

/**
 * Hand-over through a directory every worker can reach (NFS, or one host's disk): the donor writes
 * {@code join-<worker>-<round>.zip} (a {@link DLionCheckpoint}, written atomically), the joining worker polls for it.
 * The file carries the job's {@link JobRun}; a file of another job or run (a stale one in a reused directory) is refused
 * and the joining worker waits on for the donor's, failing at its timeout with a message naming both.
 */
public final class DirectoryHandOver implements HandOver {
    private final Path dir;
    private final JobRun run;

    /** @param dir the shared directory; created when the first hand-over is written. */
    public DirectoryHandOver(final Path dir) {
        this(dir, JobRun.UNNAMED);
    }

    /**
     * @param dir the shared directory; created when the first hand-over is written.
     * @param run the job and run this worker belongs to: written into the files it gives, required of the files it takes.
     */
    public DirectoryHandOver(final Path dir, final JobRun run) {
        this.dir = Objects.requireNonNull(dir, "dir");
        this.run = Objects.requireNonNull(run, "run");
    }

    /** @return the shared directory. */
    public Path dir() {
        return dir;
    }

    /**
     * @param worker the joining worker.
     * @param round  its first round.
     * @return the file the donor writes for it.
     */
    public Path fileOf(final int worker, final long round) {
        return dir.resolve("join-" + worker + "-" + round + ".zip");
    }

    @Override
    public String give(final JoinNotice notice, final DLionAccumulator accumulator) {
        final Path file = fileOf(notice.worker(), notice.round());
        DLionCheckpoint.write(file, accumulator.model(), accumulator, run);
        return file.toString();
    }

    @Override
    public DLionCheckpoint take(final JoinNotice notice, final long timeoutMillis, final Runnable idle)
        throws IOException, TimeoutException, InterruptedException {
        final Path file = fileOf(notice.worker(), notice.round());
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        String refused = null;
        long refusedModified = Long.MIN_VALUE;
        while (true) {
            if (Files.exists(file)) {
                final long modified = Files.getLastModifiedTime(file).toMillis();
                if (modified != refusedModified) {
                    final DLionCheckpoint found = DLionCheckpoint.read(file);
                    try {
                        run.check("hand-over " + file, found.run());
                        return found;
                    } catch (final IllegalStateException stale) {
                        refused = stale.getMessage();
                        refusedModified = modified;
                        System.getLogger(DirectoryHandOver.class.getName()).log(System.Logger.Level.WARNING, refused);
                    }
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new TimeoutException("worker " + notice.worker() + ": donor worker " + notice.donor() + " did not write " + file
                    + " within " + timeoutMillis + " ms" + (refused != null ? "; " + refused
                    : " (is the hand-over directory the same on every worker?)"));
            }
            idle.run();
            Thread.sleep(1);
        }
    }

    @Override
    public String toString() {
        return "directory " + dir;
    }
}
