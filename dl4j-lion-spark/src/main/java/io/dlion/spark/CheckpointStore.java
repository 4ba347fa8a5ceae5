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
 * One task's checkpoints of one {@code fit}: {@code <dir>/<run>/round-<R>/worker-<id>.zip}.
 * <p>
 * What is kept: the two newest rounds, and the two newest rounds whose last round every task voted in ("full"). A
 * stage that runs again resumes from the newest round that every task has. While every task votes, rounds are
 * synchronous: when a task dies no other task is more than one round ahead of it, and all tasks wrote round R's
 * checkpoint before any of them votes in round R + 1; a task killed while writing round R's checkpoint (the file
 * appears atomically, or not at all) still has round R − K, which every other task still holds too. A task that dies
 * stops voting, and once the servers' deadline passes the others go on without it (a quorum below every task), for as
 * long as Spark takes to stop them: their newest rounds are then past the dead task's, but the two newest full rounds
 * are the dead task's two newest, or one ahead of them. Which rounds were full the broadcast results say, the same on
 * every task.
 */
final class CheckpointStore {
    private static final String ROUND_PREFIX = "round-";

    private final Path run;
    private final int worker;
    private final JobRun jobRun;
    private final TreeSet<Long> full = new TreeSet<>();

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
     * Start from round {@code round}: delete this worker's checkpoints of later rounds (a failed attempt's, whose
     * rounds the stage trains again, possibly with other voters), and count {@code round}'s as full (every task has it).
     *
     * @param round the round the stage resumes from, -1 for a fresh start (every checkpoint of this worker goes).
     */
    void startFrom(final long round) {
        for (final long r : rounds()) {
            if (r > round) {
                delete(r);
            }
        }
        if (round >= 0) {
            full.add(round);
        }
    }

    /**
     * Write this worker's checkpoint of the job's current round, then delete the ones no longer kept.
     *
     * @param job             the job, between two rounds.
     * @param everyTaskVoted  true when every task voted in the round just done.
     */
    void write(final DLionJob job, final boolean everyTaskVoted) {
        DLionCheckpoint.write(DLionJob.checkpointOf(dirOf(job.round()), worker), job.model(), job.accumulator(), jobRun);
        prune(job.round(), everyTaskVoted);
    }

    /**
     * Keep the two newest rounds and the two newest full ones; delete the others.
     *
     * @param round           the round just written.
     * @param everyTaskVoted  true when every task voted in the round before it.
     */
    void prune(final long round, final boolean everyTaskVoted) {
        if (everyTaskVoted) {
            full.add(round);
        }
        while (full.size() > 2) {
            full.pollFirst();
        }
        final TreeSet<Long> rounds = rounds();
        final TreeSet<Long> keep = new TreeSet<>(full);
        keep.addAll(rounds.descendingSet().stream().limit(2).toList());
        for (final long r : rounds) {
            if (!keep.contains(r)) {
                delete(r);
            }
        }
    }

    private void delete(final long round) {
        final Path dir = dirOf(round);
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
