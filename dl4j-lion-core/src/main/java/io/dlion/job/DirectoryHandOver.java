package io.dlion.job;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.dlion.dist.DLionAccumulator;
import io.dlion.dist.DLionCheckpoint;
import io.dlion.exchange.JoinNotice;

/**
 * Hand-over through a directory every worker can reach (NFS, or one host's disk): the donor writes
 * {@code join-<worker>-<round>.zip} (a {@link DLionCheckpoint}, written atomically), the joining worker polls for it.
 */
public final class DirectoryHandOver implements HandOver {
    private final Path dir;

    /** @param dir the shared directory; created when the first hand-over is written. */
    public DirectoryHandOver(final Path dir) {
        this.dir = Objects.requireNonNull(dir, "dir");
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
        DLionCheckpoint.write(file, accumulator.model(), accumulator);
        return file.toString();
    }

    @Override
    public DLionCheckpoint take(final JoinNotice notice, final long timeoutMillis, final Runnable idle)
        throws IOException, TimeoutException, InterruptedException {
        final Path file = fileOf(notice.worker(), notice.round());
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (!Files.exists(file)) {
            if (System.nanoTime() - deadline > 0) {
                throw new TimeoutException("worker " + notice.worker() + ": donor worker " + notice.donor() + " did not write " + file
                    + " within " + timeoutMillis + " ms (is the hand-over directory the same on every worker?)");
            }
            idle.run();
            Thread.sleep(1);
        }
        return DLionCheckpoint.read(file);
    }

    @Override
    public String toString() {
        return "directory " + dir;
    }
}
