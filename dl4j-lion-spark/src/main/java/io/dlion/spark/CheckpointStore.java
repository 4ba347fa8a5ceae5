package io.dlion.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.TreeSet;

import io.dlion.dist.DLionCheckpoint;
import io.dlion.dist.JobRun;
import io.dlion.job.DLionJob;

/**
 * One task's checkpoints of one {@code fit}: {@code <dir>/<run>/round-<R>/worker-<id>.zip}, the two newest rounds.
 * <p>
 * Why two: rounds are synchronous, so when a task dies no other task is more than one round ahead of it, and all
 * tasks wrote round R's checkpoint before any of them votes in round R + 1. A task killed while writing round R's
 * checkpoint (the file appears atomically, or not at all) still has round R − K, which every other task still holds
 * too; a resumed stage starts from the newest round that every task has.
 */
final class CheckpointStore {
    private static final String ROUND_PREFIX = "round-";

    private final Path run;
    private final int worker;
    private final JobRun jobRun;

    /**
     * @param run    the directory of this {@code fit}'s checkpoints.
     * @param worker the task's worker id.
     * @param jobRun the job and run id every checkpoint carries (a resume refuses another's).
     */
    CheckpointStore(final Path run, final int worker, final JobRun jobRun) {
        this.run = run;
        this.worker = worker;
        this.jobRun = jobRun;
    }

    /** @return the directory of round {@code round}'s checkpoints (one file per worker). */
    Path dirOf(final long round) {
        return run.resolve(ROUND_PREFIX + round);
    }

    /** @return the rounds this worker has a complete checkpoint of, oldest first. */
    TreeSet<Long> rounds() {
        final TreeSet<Long> rounds = new TreeSet<>();
        if (!Files.isDirectory(run)) {
            return rounds;
        }
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(run, ROUND_PREFIX + "*")) {
            for (final Path d : dirs) {
                final String name = d.getFileName().toString().substring(ROUND_PREFIX.length());
                if (name.chars().allMatch(Character::isDigit) && !name.isEmpty()
                    && Files.isRegularFile(DLionJob.checkpointOf(d, worker))) {
                    rounds.add(Long.parseLong(name));
                }
            }
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot list the checkpoints in " + run, e);
        }
        return rounds;
    }

    /**
     * Write this worker's checkpoint of the job's current round, then delete its checkpoints older than the newest two.
     *
     * @param job the job, between two rounds.
     */
    void write(final DLionJob job) {
        DLionCheckpoint.write(DLionJob.checkpointOf(dirOf(job.round()), worker), job.model(), job.accumulator(), jobRun);
        final TreeSet<Long> rounds = rounds();
        while (rounds.size() > 2) {
            final Path dir = dirOf(rounds.pollFirst());
            try {
                Files.deleteIfExists(DLionJob.checkpointOf(dir, worker));
                Files.deleteIfExists(dir);
            } catch (final DirectoryNotEmptyException e) {
                // another worker's file is still there; the last one to leave removes the directory
            } catch (final IOException e) {
                throw new UncheckedIOException("cannot delete the old checkpoint in " + dir, e);
            }
        }
    }
}
