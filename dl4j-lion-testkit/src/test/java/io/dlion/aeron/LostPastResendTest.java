package io.dlion.aeron;

import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.HelloAckFlyweight;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.exchange.RejoinRequiredException;
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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A result lost past the sender's resend window. Found by a chaos soak (seed 4301): a worker stopped for 3.4 s came back
 * many rounds behind, and its round's result of one slice had gone out while it was stopped, too long ago for the sender
 * to send it again; its image of that slice then waits for it for good, so neither that result nor any later frame of the
 * slice, nor an answer to its HELLOs, ever gets through, and the worker waited until its await timeout. Now it rejoins
 * once the live server of that slice has been silent for {@code resultLostNs} while another slice holds a frame of a later
 * round (proof that the job completed the round). Two played servers on IPC: slice 0 proves itself and then sends
 * nothing, its vote subscription open (the worker's vote publication stays connected, as to a live server); slice 1 sends
 * its result of round 0, and then, or not, a frame of round 1.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LostPastResendTest {
    private static final int JOB = 83;
    private static final int WORKERS = 3;
    private static final int CHUNK_WORDS = 400;
    private static final long SPLIT = (long) CHUNK_WORDS * 64;
    private static final long PARAMS = 2 * SPLIT;
    private static final int WORDS = (int) (PARAMS >>> 6);
    private static final long VOTERS = 0b111;
    private static final long LOST_NS = TimeUnit.SECONDS.toNanos(1);
    private static final long AWAIT_MS = 50_000;

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
    void shouldRejoinWhenALiveSliceStaysSilentWhileAnotherHoldsALaterRound() throws Exception {
        connect(1991);
        worker.submit(0, new long[WORDS], PARAMS);
        final long startNs = System.nanoTime();
        final Future<RoundResult> round0 = thread.submit(() -> worker.await(0, AWAIT_MS));
        sendRound(slice1, 1, 0);
        sendRound(slice1, 1, 1);
        final ExecutionException failed = assertThrows(ExecutionException.class,
            () -> round0.get(30, TimeUnit.SECONDS));
        final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
        assertInstanceOf(RejoinRequiredException.class, failed.getCause(), "the worker rejoins: " + failed.getCause());
        assertTrue(failed.getCause().getMessage().contains("slice 0's part of round 0") && failed.getCause().getMessage().contains("round 1"),
            failed.getCause().getMessage());
        assertTrue(tookMs >= TimeUnit.NANOSECONDS.toMillis(LOST_NS), "not before slice 0 was silent for resultLostNs: " + tookMs + " ms");
        assertTrue(tookMs < AWAIT_MS / 2, "long before the await timeout: " + tookMs + " ms");
    }

    @Test
    void shouldKeepWaitingForASilentSliceWhileNoSliceShowsALaterRound() throws Exception {
        connect(1995);
        worker.submit(0, new long[WORDS], PARAMS);
        final Future<RoundResult> round0 = thread.submit(() -> worker.await(0, AWAIT_MS));
        sendRound(slice1, 1, 0);
        Thread.sleep(4 * TimeUnit.NANOSECONDS.toMillis(LOST_NS));
        assertFalse(round0.isDone(), "a slow slice is waited for while the job has not gone past the round");
        sendRound(slice0, 0, 0);
        assertEquals(0, round0.get(10, TimeUnit.SECONDS).round());
    }

    private void connect(final int firstStream) throws Exception {
        slice0 = PlayedServer.launch(firstStream, firstStream + 1);
        slice1 = slice0.slice(1, SPLIT, -1, firstStream + 2, firstStream + 3);
        worker = slice0.connectWith(() -> new AeronVoteExchange(new AeronVoteExchange.Context()
            .aeron(slice0.aeron()).jobId(JOB).workerId(0).workers(WORKERS).paramCount(PARAMS).rule(VoteRule.AVERAGE)
            .chunkWords(CHUNK_WORDS).resultLostNs(LOST_NS)
            .slices(List.of(new SliceEndpoint(0, 0, SPLIT, Channels.ipc(), firstStream, Channels.ipc(), firstStream + 1), slice1.slice()))),
            hello -> {
                slice0.answer(hello, HelloAckFlyweight.NO_JOIN, JoinNoticeFlyweight.NO_DONOR, null);
                slice1.answer(slice1.takeHello(), HelloAckFlyweight.NO_JOIN, JoinNoticeFlyweight.NO_DONOR, null);
            });
    }

    private static void sendRound(final PlayedServer server, final int slice, final long round) {
        final ChunkLayout layout = slice == 0 ? new ChunkLayout(PARAMS, 0, SPLIT, CHUNK_WORDS) : new ChunkLayout(PARAMS, SPLIT, PARAMS, CHUNK_WORDS);
        final long[][] planes = new long[2][WORDS];
        for (int c = 0; c < layout.chunkCount(); c++) {
            assertTrue(server.offerWithin(new UnsafeBuffer(Frames.averageResult(JOB, round, slice, layout, c, VOTERS, planes)),
                TimeUnit.SECONDS.toNanos(5)), "slice " + slice + "'s result of round " + round + " taken");
        }
    }
}
