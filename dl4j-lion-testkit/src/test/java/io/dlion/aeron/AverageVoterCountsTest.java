package io.dlion.aeron;

import java.util.List;
import java.util.concurrent.TimeUnit;

import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.codec.DeltaApplier;
import io.dlion.testkit.Frames;
import io.dlion.testkit.PlayedServer;
import io.dlion.testkit.NaiveVote;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The worker's side of an AVERAGE round whose chunks count different voters, against a hand-played server (raw result
 * frames on a real driver), so every count is chosen: counts that fall and rise again (3, 3, 2, 4, 1, 5) make the count
 * planes grow mid-round (2 to 3 planes) and a chunk with fewer voters leave the high planes zero. The result must name
 * one segment per run of equal counts, and Delta per parameter must be (2k - V) / V with the V of its chunk, k counted
 * from the raw votes of the workers in that chunk's mask.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AverageVoterCountsTest {
    private static final int JOB = 57;
    private static final int WORKERS = 5;
    private static final int CHUNK_WORDS = 20;
    private static final long PARAMS = 6L * CHUNK_WORDS * 64 - 37;

    private PlayedServer server;
    private AeronVoteExchange worker;

    @AfterEach
    void tearDown() {
        CloseHelper.closeAll(worker, server);
    }

    @Test
    void shouldApplyEveryChunkWithItsOwnVoterCount() throws Exception {
        server = PlayedServer.launch(1901, 1902);
        final Subscription votes = server.votes();
        final ExclusivePublication results = server.results();
        // the worker connects once a server has answered its HELLO: this test plays that server
        worker = server.connect(() -> new AeronVoteExchange(new AeronVoteExchange.Context()
                .aeron(server.aeron()).jobId(JOB).workerId(0).workers(WORKERS).paramCount(PARAMS).rule(VoteRule.AVERAGE)
                .chunkWords(CHUNK_WORDS).slices(List.of(server.slice()))), null);
        final ChunkLayout layout = new ChunkLayout(PARAMS, 0, PARAMS, CHUNK_WORDS);
        assertEquals(6, layout.chunkCount());
        final long[][] raw = NaiveVote.randomVotes(61, WORKERS, PARAMS);

        final long[] masks = {0b00111, 0b00111, 0b00011, 0b01111, 0b00001, 0b11111};
        final RoundResult mixed = playRound(0, raw, layout, masks, votes, results);
        final int[] starts = {0, 2 * CHUNK_WORDS, 3 * CHUNK_WORDS, 4 * CHUNK_WORDS, 5 * CHUNK_WORDS};
        final int[] counts = {3, 2, 4, 1, 5};
        assertEquals(5, mixed.segmentCount(), "3, 2, 4, 1, 5: the two chunks of 3 are one segment");
        for (int s = 0; s < starts.length; s++) {
            assertEquals(starts[s], mixed.segmentStartWord(s), "start of segment " + s);
            assertEquals(counts[s], mixed.segmentVoters(s), "voters of segment " + s);
        }
        assertEquals(5, mixed.voters(), "the largest count");
        assertEquals(0b11111L, mixed.voterSet().word(0), "every worker counted somewhere");
        assertEquals(3, mixed.countPlanes().length, "planes for 5 voters");
        checkDelta(mixed, raw, layout, masks);

        final long[] same = {0b10101, 0b10101, 0b10101, 0b10101, 0b10101, 0b10101};
        final RoundResult uniform = playRound(1, raw, layout, same, votes, results);
        assertEquals(1, uniform.segmentCount());
        assertEquals(3, uniform.voters());
        assertEquals(2, uniform.countPlanes().length, "a new round starts with the planes of its own count");
        checkDelta(uniform, raw, layout, same);
        assertEquals(0, worker.workerCounters().rejectedResults().get(), "no result frame rejected");
    }

    /** The worker submits round r; the "server" answers every chunk with the count planes of the workers in its mask. */
    private RoundResult playRound(final long round, final long[][] raw, final ChunkLayout layout, final long[] masks, final Subscription votes,
        final ExclusivePublication results) throws Exception {
        worker.submit(round, raw[0], PARAMS);
        for (int c = 0; c < layout.chunkCount(); c++) {
            Frames.send(results, Frames.averageResult(JOB, round, 0, layout, c, masks[c], naivePlanes(raw, masks[c])));
        }
        final RoundResult result = worker.await(round, 10_000);
        votes.poll((buffer, offset, length, header) -> { }, 1000);
        return result;
    }

    /** Count planes (3 of them) of k = +1 votes among the workers in {@code mask}, set bit by bit. */
    private static long[][] naivePlanes(final long[][] raw, final long mask) {
        final long[][] planes = new long[3][(int)((PARAMS + 63) >>> 6)];
        for (long j = 0; j < PARAMS; j++) {
            final int k = count(raw, mask, j);
            for (int b = 0; b < planes.length; b++) {
                if (((k >>> b) & 1) != 0) {
                    planes[b][(int)(j >>> 6)] |= 1L << (((j >>> 3) & 7) * 8 + 7 - (j & 7));
                }
            }
        }
        return planes;
    }

    private static int count(final long[][] raw, final long mask, final long j) {
        int k = 0;
        for (int w = 0; w < WORKERS; w++) {
            if ((mask >>> w & 1) != 0 && NaiveVote.bit(raw[w], j)) {
                k++;
            }
        }
        return k;
    }

    /** Delta as the worker applies it (DeltaApplier, DOUBLE, lr 1) against the plain per-parameter reference. */
    private static void checkDelta(final RoundResult result, final long[][] raw, final ChunkLayout layout, final long[] masks) {
        final double[] delta;
        try (DeltaApplier applier = new DeltaApplier()) {
            final INDArray update = Nd4j.zeros(DataType.DOUBLE, PARAMS);
            applier.addScaled(result, update, 0, PARAMS, 1.0);
            delta = update.toDoubleVector();
        }
        for (int j = 0; j < PARAMS; j++) {
            final long mask = masks[(j >>> 6) / CHUNK_WORDS];
            final int voters = Long.bitCount(mask);
            final double expected = (2.0 * count(raw, mask, j) - voters) / voters;
            assertEquals(expected, delta[j], 1e-12, "Delta of parameter " + j + " (" + voters + " voters)");
        }
    }
}
