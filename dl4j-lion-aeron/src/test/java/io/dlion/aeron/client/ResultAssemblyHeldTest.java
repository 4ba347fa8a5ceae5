package io.dlion.aeron.client;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;

import io.dlion.aeron.server.HeldResult;
import io.dlion.codec.DownlinkEncoding;
import io.dlion.codec.WordViews;
import io.dlion.vote.VoteRule;
import io.dlion.vote.VoterSet;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * What a worker holds of a slice's last result for the server its process takes the slice over with: the words of the
 * last round whose chunks of the slice all came, with each run of chunks' voters, until a chunk of a later round comes
 * for the slice. Chunks are encoded by the down-link codecs from planes the test makes; the held words must be those
 * planes.
 */
class ResultAssemblyHeldTest {
    private static final int WORKERS = 3;
    private static final long PARAMS = 3_000;
    private static final int WORDS = (int) ((PARAMS + 63) >>> 6);
    /** Slice 0 is words [0, 24), slice 1 words [24, 47); chunks of 8 words. */
    private static final int SPLIT = 24;
    private static final int CHUNK = 8;
    private static final VoterSet ALL = VoterSet.of(WORKERS, 0, 1, 2);
    private static final VoterSet TWO = VoterSet.of(WORKERS, 0, 1);

    private final ByteBuffer wire = ByteBuffer.allocate(4096);
    private final WordViews views = new WordViews().of(wire);

    @Test
    void shouldHoldASlicesLastWholeResultUntilALaterRoundsChunkComes() {
        final ResultAssembly assembly = new ResultAssembly(VoteRule.MAJORITY, PARAMS, WORKERS, 2);
        final long[][] round5 = majorityPlanes(new SplittableRandom(5));
        assembly.startRound();
        acceptSlice(assembly, round5, 0, 0, SPLIT);
        acceptSlice(assembly, round5, 1, SPLIT, WORDS);
        assertNull(assembly.heldResult(1, SPLIT, WORDS), "not whole before the slice is done");
        assembly.sliceDone(0, 5);
        assembly.sliceDone(1, 5);
        assembly.complete(5);

        assembly.startRound(); // round 6: slice 0's first chunk comes, slice 1's server dies before sending any
        final long[][] round6 = majorityPlanes(new SplittableRandom(6));
        accept(assembly, round6, 0, 0, CHUNK, ALL);

        final HeldResult held = assembly.heldResult(1, SPLIT, WORDS);
        assertNotNull(held);
        assertEquals(5, held.round());
        assertEquals(SPLIT, held.fromWord());
        assertEquals(WORDS, held.toWord());
        assertArrayEquals(Arrays.copyOfRange(round5[0], SPLIT, WORDS), held.planes()[0], "signs");
        assertArrayEquals(Arrays.copyOfRange(round5[1], SPLIT, WORDS), held.planes()[1], "ties");
        assertArrayEquals(new int[] {SPLIT, SPLIT + CHUNK}, held.runStarts(), "runs: the first chunk counted all, the others two");
        assertArrayEquals(new VoterSet[] {ALL, TWO}, held.runVoters());
        assertNull(assembly.heldResult(0, 0, SPLIT), "slice 0's words are round 6's from its first chunk on");

        accept(assembly, round6, 1, SPLIT, SPLIT + CHUNK, ALL);
        assertNull(assembly.heldResult(1, SPLIT, WORDS), "nor slice 1's once a round 6 chunk came");
    }

    @Test
    void shouldHoldNothingOfASliceWhoseServerRestartedInTheRound() {
        final ResultAssembly assembly = new ResultAssembly(VoteRule.MAJORITY, PARAMS, WORKERS, 2);
        final long[][] round5 = majorityPlanes(new SplittableRandom(7));
        assembly.startRound();
        acceptSlice(assembly, round5, 1, SPLIT, WORDS);
        assembly.sliceDone(1, 5);
        assembly.startRound();
        assembly.restartSlice(1, SPLIT, WORDS);
        assertNull(assembly.heldResult(1, SPLIT, WORDS), "its words were cleared");
    }

    /** Slice words by chunk: the first chunk of each slice counted every worker (sign bits), the rest two (ternary). */
    private void acceptSlice(final ResultAssembly assembly, final long[][] planes, final int slice, final int from, final int to) {
        for (int w = from; w < to; w += CHUNK) {
            accept(assembly, planes, slice, w, Math.min(to, w + CHUNK), w == from ? ALL : TWO);
        }
    }

    private void accept(final ResultAssembly assembly, final long[][] planes, final int slice, final int from, final int to,
        final VoterSet voters) {
        final DownlinkEncoding downlink = DownlinkEncoding.of(VoteRule.MAJORITY, voters.count());
        downlink.encode(planes, PARAMS, from, to, wire, 0);
        final long params = Math.min(64L * (to - from), PARAMS - 64L * from);
        if (!assembly.accept(slice, views, 0, params, from, to - from, voters)) {
            throw new AssertionError("chunk at word " + from + " did not decode");
        }
    }

    /**
     * Random signs and ties: ties only in words of chunks with two voters (not the first chunk of a slice), sign 0 where
     * a tie is, as a decoder writes it; the bits past the last parameter clear.
     */
    private static long[][] majorityPlanes(final SplittableRandom random) {
        final long[][] planes = new long[2][WORDS];
        for (int w = 0; w < WORDS; w++) {
            final long valid = (long) w * 64 + 64 <= PARAMS ? -1L : (1L << (PARAMS - (long) w * 64)) - 1;
            final boolean evenVoters = (w < SPLIT ? w : w - SPLIT) >= CHUNK;
            planes[1][w] = evenVoters ? random.nextLong() & random.nextLong() & valid : 0;
            planes[0][w] = random.nextLong() & valid & ~planes[1][w];
        }
        return planes;
    }
}
