package io.dlion.aeron;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.HelloAckFlyweight;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.testkit.Frames;
import io.dlion.testkit.PlayedServer;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A worker that waits in round r for one slice's result must not hold back another slice's results of later rounds. Found
 * by a chaos soak (seed 4301): a worker stopped for 3.4 s came back 40 rounds behind and waited for slice 2's result of
 * its round, which had gone out while it was stopped and could no longer be sent again; it held slice 3's result of that
 * round, and left slice 3's results of the later rounds in Aeron's log, where they filled its receiver window. Slice 3's
 * result stream waits for its slowest receiver, so every worker's rounds stopped there, for 30 s, until the server of
 * slice 3 was killed and the job lost its quorum. Here the real exchange reads two played servers: slice 1's result
 * publication is an IPC stream with a 64 KiB term, which unread results hold back after about five rounds, as a result
 * stream over UDP does. The worker awaits round 0 while slice 1 sends round 0 and twelve later rounds (the others went on
 * without it) and slice 0 sends nothing: every offer must be taken. Then slice 0's results come, and the worker applies
 * every round, each result the one the servers sent, in order.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WaitingWorkerBacklogTest {
    private static final int JOB = 79;
    private static final int WORKERS = 3;
    private static final int CHUNK_WORDS = 400;
    /** Slice 0: one chunk; slice 1: two chunks (12.8 KB a round with three voters' count planes). */
    private static final long SPLIT = (long) CHUNK_WORDS * 64;
    private static final long PARAMS = 3 * SPLIT;
    private static final int WORDS = (int) (PARAMS >>> 6);
    private static final long VOTERS = 0b111;
    private static final String SHORT_TERM = Channels.ipc() + "|term-length=65536";
    private static final long SEND_WAIT_NS = TimeUnit.SECONDS.toNanos(5);
    private static final int LATER_ROUNDS = 12;

    private PlayedServer slice0;
    private PlayedServer slice1;
    private AeronVoteExchange worker;
    private final ExecutorService thread = Executors.newSingleThreadExecutor();

    @AfterEach
    void tearDown() throws InterruptedException {
        thread.shutdownNow();
        thread.awaitTermination(5, TimeUnit.SECONDS);
        CloseHelper.closeAll(worker, slice1, slice0);
    }

    @Test
    void shouldKeepReadingASliceWhoseResultItHoldsWhileItWaitsForAnother() throws Exception {
        slice0 = PlayedServer.launch(1981, 1982);
        slice1 = slice0.slice(1, SPLIT, -1, 1983, 1984, SHORT_TERM);
        worker = slice0.connectWith(() -> new AeronVoteExchange(new AeronVoteExchange.Context()
            .aeron(slice0.aeron()).jobId(JOB).workerId(0).workers(WORKERS).paramCount(PARAMS).rule(VoteRule.AVERAGE)
            .chunkWords(CHUNK_WORDS).slices(List.of(new SliceEndpoint(0, 0, SPLIT, Channels.ipc(), 1981, Channels.ipc(), 1982), slice1.slice()))),
            hello -> {
                slice0.answer(hello, HelloAckFlyweight.NO_JOIN, JoinNoticeFlyweight.NO_DONOR, null);
                slice1.answer(slice1.takeHello(), HelloAckFlyweight.NO_JOIN, JoinNoticeFlyweight.NO_DONOR, null);
            });
        final ChunkLayout[] layouts = {new ChunkLayout(PARAMS, 0, SPLIT, CHUNK_WORDS), new ChunkLayout(PARAMS, SPLIT, PARAMS, CHUNK_WORDS)};
        final long[][][] planes = planes(LATER_ROUNDS + 1, 17);
        final long[] vote = new long[WORDS];

        // round 0: slice 1's result comes, then its results of twelve later rounds (154 KB, more than twice its stream's
        // window), while slice 0's result of round 0 is still to come
        worker.submit(0, vote, PARAMS);
        final Future<RoundResult> round0 = thread.submit(() -> worker.await(0, 50_000));
        for (long round = 0; round <= LATER_ROUNDS; round++) {
            sendRound(slice1, 1, layouts[1], round, planes[(int) round], SEND_WAIT_NS);
        }
        assertTrue(!round0.isDone(), "round 0 waits for slice 0's result");
        sendRound(slice0, 0, layouts[0], 0, planes[0], SEND_WAIT_NS);
        assertApplied(0, planes[0], round0.get(10, TimeUnit.SECONDS));

        // every later round: slice 0's result comes now, slice 1's from what the worker kept
        for (long round = 1; round <= LATER_ROUNDS; round++) {
            worker.submit(round, vote, PARAMS);
            sendRound(slice0, 0, layouts[0], round, planes[(int) round], SEND_WAIT_NS);
            assertApplied(round, planes[(int) round], worker.await(round, 10_000));
        }
        assertEquals(0, worker.resultBacklogBytes(), "every kept frame was applied");
        assertEquals(0, worker.workerCounters().rejectedResults().get(), "no frame rejected");
    }

    /** Random count planes of 3 voters over the whole vector, for rounds 0 .. rounds - 1. */
    private static long[][][] planes(final int rounds, final long seed) {
        final SplittableRandom random = new SplittableRandom(seed);
        final long[][][] planes = new long[rounds][2][WORDS];
        for (final long[][] round : planes) {
            for (final long[] plane : round) {
                for (int w = 0; w < WORDS; w++) {
                    plane[w] = random.nextLong();
                }
            }
        }
        return planes;
    }

    /** Offer a slice's result chunks of a round, each until taken: fails when the stream is held back for {@code waitNs}. */
    private static void sendRound(final PlayedServer server, final int slice, final ChunkLayout layout, final long round,
        final long[][] planes, final long waitNs) {
        for (int c = 0; c < layout.chunkCount(); c++) {
            final UnsafeBuffer frame = new UnsafeBuffer(Frames.averageResult(JOB, round, slice, layout, c, VOTERS, planes));
            if (!server.offerWithin(frame, waitNs)) {
                fail("slice " + slice + "'s result of round " + round + " held back for " + TimeUnit.NANOSECONDS.toSeconds(waitNs)
                    + " s by the unread results of a worker that waits for another slice (position " + server.results().position() + ")");
            }
        }
    }

    private static void assertApplied(final long round, final long[][] planes, final RoundResult result) {
        assertEquals(round, result.round());
        assertEquals(3, result.voters(), "round " + round);
        final List<String> wrong = new ArrayList<>();
        for (int p = 0; p < planes.length; p++) {
            if (!Arrays.equals(planes[p], Arrays.copyOf(result.countPlanes()[p], WORDS))) {
                wrong.add("plane " + p);
            }
        }
        assertEquals(List.of(), wrong, "round " + round + "'s result is the one the servers sent");
    }
}
