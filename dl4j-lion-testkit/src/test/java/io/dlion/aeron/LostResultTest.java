package io.dlion.aeron;

import java.util.List;
import java.util.concurrent.TimeUnit;

import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.client.RejoinRequiredException;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.testkit.Frames;
import io.dlion.testkit.PlayedServer;
import io.dlion.testkit.NaiveVote;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A worker whose round result is incomplete when a frame of the next round arrives (the rest of its round was lost for
 * good, as after a result image recreated following a stall) asks to rejoin at once: its await throws
 * {@link RejoinRequiredException} instead of waiting for its timeout. Played against a hand-made server (raw result
 * frames on a real driver), so the order of frames is chosen. The await timeout is far longer than the test's: a worker
 * that waited for it would fail the test.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LostResultTest {
    private static final int JOB = 58;
    private static final int WORKERS = 3;
    private static final int CHUNK_WORDS = 20;
    private static final long PARAMS = 6L * CHUNK_WORDS * 64;

    private PlayedServer server;
    private AeronVoteExchange worker;

    @AfterEach
    void tearDown() {
        CloseHelper.closeAll(worker, server);
    }

    @Test
    void shouldAskToRejoinWhenALaterRoundsResultArrivesBeforeItsOwnIsComplete() throws Exception {
        server = PlayedServer.launch(1911, 1912);
        final Subscription votes = server.votes();
        final ExclusivePublication results = server.results();
        // the worker connects once a server has answered its HELLO: this test plays that server
        worker = server.connect(() -> new AeronVoteExchange(new AeronVoteExchange.Context()
                .aeron(server.aeron()).jobId(JOB).workerId(0).workers(WORKERS).paramCount(PARAMS).rule(VoteRule.AVERAGE)
                .chunkWords(CHUNK_WORDS).slices(List.of(server.slice()))), null);
        final ChunkLayout layout = new ChunkLayout(PARAMS, 0, PARAMS, CHUNK_WORDS);
        final long[][] raw = NaiveVote.randomVotes(5, WORKERS, PARAMS);
        final long[][] planes = new long[2][(int) (PARAMS >>> 6)];

        // round 0 completes normally
        worker.submit(0, raw[0], PARAMS);
        for (int c = 0; c < layout.chunkCount(); c++) {
            Frames.send(results, Frames.averageResult(JOB, 0, 0, layout, c, 0b111, planes));
        }
        assertEquals(3, worker.await(0, 10_000).voters());

        // round 1: two of six chunks, then round 2's first chunk; the rest of round 1 never comes
        worker.submit(1, raw[0], PARAMS);
        Frames.send(results, Frames.averageResult(JOB, 1, 0, layout, 0, 0b111, planes));
        Frames.send(results, Frames.averageResult(JOB, 1, 0, layout, 1, 0b111, planes));
        Frames.send(results, Frames.averageResult(JOB, 2, 0, layout, 0, 0b111, planes));
        final RejoinRequiredException lost = assertThrows(RejoinRequiredException.class, () -> worker.await(1, 600_000));
        assertTrue(lost.getMessage().contains("round 1's result never arrived") && lost.getMessage().contains("round 2"), lost.getMessage());
        assertEquals(0, worker.workerCounters().rejectedResults().get(), "no frame rejected");
        votes.poll((buffer, offset, length, header) -> { }, 1000);
    }
}
