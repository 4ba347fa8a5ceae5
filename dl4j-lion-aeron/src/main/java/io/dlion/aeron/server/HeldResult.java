package io.dlion.aeron.server;

import java.util.Objects;

import io.dlion.vote.VoterSet;

/**
 * A slice's result of one round as a worker holds it in full, handed to the server that takes the slice over in that
 * worker's process: the server sends it again to the workers whose HELLO names that round, those that lost part of it
 * when the old server died in the middle of sending it, instead of telling them to rejoin (see {@code Membership}).
 * <p>
 * The words are decoded, as the worker's result buffers hold them, over the slice's words only (plane word 0 is the
 * slice's first word): with MAJORITY the sign plane and the tie plane; with AVERAGE the count planes, low plane first.
 * The voters are given per run of chunks that counted the same workers, by the run's first word; the runs start on chunk
 * boundaries of the slice's grid, the first at the slice's first word. Immutable once made; the arrays are the caller's
 * copies.
 *
 * @param round     the round whose result it is.
 * @param fromWord  first word of the slice in the vector.
 * @param planes    the slice's result words, each plane {@code toWord - fromWord} words.
 * @param runStarts first word (in the vector) of each run of chunks with the same voters, ascending, the first
 *                  {@code fromWord}.
 * @param runVoters the voters of each run.
 */
public record HeldResult(long round, int fromWord, long[][] planes, int[] runStarts, VoterSet[] runVoters) {
    /**
     * @throws IllegalArgumentException naming what is inconsistent.
     */
    public HeldResult {
        Objects.requireNonNull(planes, "planes");
        Objects.requireNonNull(runStarts, "runStarts");
        Objects.requireNonNull(runVoters, "runVoters");
        if (round < 0) {
            throw new IllegalArgumentException("round must be >= 0, got " + round);
        }
        if (planes.length == 0 || runStarts.length == 0 || runStarts.length != runVoters.length) {
            throw new IllegalArgumentException("a held result needs planes and one voter set per run, got " + planes.length + " planes, "
                + runStarts.length + " run starts and " + runVoters.length + " voter sets");
        }
        if (runStarts[0] != fromWord) {
            throw new IllegalArgumentException("the first run must start at the slice's first word " + fromWord + ", got " + runStarts[0]);
        }
        for (int r = 1; r < runStarts.length; r++) {
            if (runStarts[r] <= runStarts[r - 1]) {
                throw new IllegalArgumentException("run starts must ascend, got " + runStarts[r - 1] + " then " + runStarts[r]);
            }
        }
        for (final long[] plane : planes) {
            if (plane.length != planes[0].length) {
                throw new IllegalArgumentException("every plane must hold the slice's words");
            }
        }
    }

    /** @return the word after the slice's last. */
    public int toWord() {
        return fromWord + planes[0].length;
    }

    /**
     * @param word a word of the slice, in the vector.
     * @return the voters of the chunk holding it.
     */
    VoterSet votersAt(final int word) {
        int r = runStarts.length - 1;
        while (runStarts[r] > word) {
            r--;
        }
        return runVoters[r];
    }
}
