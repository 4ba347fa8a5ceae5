package io.dlion.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeSet;

import io.dlion.dist.JobRun;
import io.dlion.job.DLionJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which checkpoint rounds a task keeps: the two newest, and the two newest written after a round every task voted in,
 * so that the survivors of a dead task, which went on without it past the servers' deadline, still share a round with
 * it. Files are empty stand-ins: the store lists and deletes, it does not read them.
 */
class CheckpointStoreTest {
    private static final JobRun RUN = new JobRun(1, "checkpoint-store-test");

    @TempDir
    Path dir;

    @Test
    void shouldKeepTheTwoNewestRoundsWhileEveryTaskVotes() throws IOException {
        final CheckpointStore store = new CheckpointStore(dir, 0, RUN);
        for (long r = 10; r <= 50; r += 10) {
            write(store, 0, r, true);
        }
        assertEquals(new TreeSet<>(List.of(40L, 50L)), store.rounds());
    }

    @Test
    void shouldKeepTheRoundsADeadTaskSharesAfterTheOthersWentOnWithoutIt() throws IOException {
        // task 2 wrote rounds 10..30 and died in round 35; tasks 0 and 1 went on without it after the deadline
        final CheckpointStore survivor = new CheckpointStore(dir, 0, RUN);
        final CheckpointStore dead = new CheckpointStore(dir, 2, RUN);
        for (long r = 10; r <= 30; r += 10) {
            write(survivor, 0, r, true);
            write(dead, 2, r, true);
        }
        for (long r = 40; r <= 70; r += 10) {
            write(survivor, 0, r, false);
        }
        assertEquals(new TreeSet<>(List.of(20L, 30L, 60L, 70L)), survivor.rounds());
        assertEquals(new TreeSet<>(List.of(20L, 30L)), dead.rounds());
    }

    @Test
    void shouldKeepOneRoundAheadOfATaskThatDiedBeforeWritingIt() throws IOException {
        // task 2 voted in round 39 and died before it wrote round 40's checkpoint; round 39 counted every task
        final CheckpointStore survivor = new CheckpointStore(dir, 0, RUN);
        for (long r = 10; r <= 40; r += 10) {
            write(survivor, 0, r, true);
        }
        for (long r = 50; r <= 80; r += 10) {
            write(survivor, 0, r, false);
        }
        assertEquals(new TreeSet<>(List.of(30L, 40L, 70L, 80L)), survivor.rounds(), "round 30, task 2's newest, is kept");
    }

    @Test
    void shouldDeleteAFailedAttemptsRoundsAfterTheRoundTheStageResumesFrom() throws IOException {
        final CheckpointStore before = new CheckpointStore(dir, 1, RUN);
        for (long r = 10; r <= 40; r += 10) {
            write(before, 1, r, r <= 20);
        }
        final CheckpointStore resumed = new CheckpointStore(dir, 1, RUN);
        resumed.startFrom(20);
        assertEquals(new TreeSet<>(List.of(10L, 20L)), resumed.rounds(), "rounds 30 and 40 are the failed attempt's");
        write(resumed, 1, 30, false);
        write(resumed, 1, 40, false);
        write(resumed, 1, 50, false);
        assertEquals(new TreeSet<>(List.of(20L, 40L, 50L)), resumed.rounds(), "the resumed round is full: every task has it");
        resumed.startFrom(-1);
        assertEquals(new TreeSet<>(), resumed.rounds(), "a fresh start keeps none");
    }

    /** Stands in for {@link CheckpointStore#write}: an empty file where the checkpoint goes, then the same pruning. */
    private static void write(final CheckpointStore store, final int worker, final long round, final boolean everyTaskVoted) throws IOException {
        final Path file = DLionJob.checkpointOf(store.dirOf(round), worker);
        Files.createDirectories(file.getParent());
        Files.write(file, new byte[0]);
        store.prune(round, everyTaskVoted);
    }
}
