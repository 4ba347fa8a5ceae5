package io.dlion.aeron;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.FrameMac;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.testkit.Frames;
import io.dlion.testkit.PlayedServer;
import io.dlion.testkit.NaiveVote;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A worker with frame tags on, against a server this test plays on a real driver. What an attacker on the path achieves,
 * frames injected into the proven server's own session, is what the played server sends here: a result frame with the
 * wrong tag, an untagged one, and a later round's frame with the wrong tag (which, if believed, would make the worker
 * rejoin). Each is dropped and counted, and the round completes with the genuine frames. The worker's own vote frames
 * carry the tag of its vote session.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FrameMacExchangeTest {
    private static final int JOB = 61;
    private static final int WORKERS = 3;
    private static final int CHUNK_WORDS = 20;
    private static final long PARAMS = 4L * CHUNK_WORDS * 64;

    private PlayedServer server;
    private AeronVoteExchange worker;

    @AfterEach
    void tearDown() {
        CloseHelper.closeAll(worker, server);
    }

    @Test
    void shouldDropResultFramesWithoutTheServersTagAndSignItsVotes() throws Exception {
        server = PlayedServer.launch(1921, 1922);
        final Subscription votes = server.votes();
        final ExclusivePublication results = server.results();
        worker = server.connect(() -> new AeronVoteExchange(new AeronVoteExchange.Context()
                .aeron(server.aeron()).jobId(JOB).workerId(0).workers(WORKERS).paramCount(PARAMS).rule(VoteRule.AVERAGE)
                .chunkWords(CHUNK_WORDS).secret(Frames.SECRET).frameMac(true)
                .slices(List.of(server.slice()))), Frames.SECRET);
        final ChunkLayout layout = new ChunkLayout(PARAMS, 0, PARAMS, CHUNK_WORDS);
        final long[][] raw = NaiveVote.randomVotes(5, WORKERS, PARAMS);
        final long[][] planes = new long[2][(int)(PARAMS >>> 6)];
        final FrameMac server = new FrameMac(Frames.SECRET);
        final FrameMac stranger = new FrameMac("not the job's secret, 32 bytes!!".getBytes(StandardCharsets.US_ASCII));

        worker.submit(0, raw[0], PARAMS);
        Frames.send(results, tagged(Frames.averageResult(JOB, 0, 0, layout, 0, 0b011, planes), stranger, results.sessionId()));
        Frames.send(results, Frames.averageResult(JOB, 0, 0, layout, 0, 0b011, planes));
        Frames.send(results, tagged(Frames.averageResult(JOB, 2, 0, layout, 0, 0b011, planes), server, results.sessionId() + 1));
        for (int c = 0; c < layout.chunkCount(); c++) {
            Frames.send(results, tagged(Frames.averageResult(JOB, 0, 0, layout, c, 0b111, planes), server, results.sessionId()));
        }
        assertEquals(3, worker.await(0, 10_000).voters(), "the genuine frames' voters (3), not the forged ones' (2)");
        assertEquals(3, worker.workerCounters().badMacFrames().get(), "wrong key, no tag, another session's tag");
        assertEquals(0, worker.workerCounters().rejectedResults().get(), "the genuine frames all taken in order");

        final int[] voteFrames = {0};
        final int[] badVotes = {0};
        final FrameMac check = new FrameMac(Frames.SECRET);
        final MessageHeaderFlyweight header = new MessageHeaderFlyweight();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (voteFrames[0] < layout.chunkCount() && System.nanoTime() < deadline) {
            votes.poll((buffer, offset, length, h) -> {
                if (header.wrapForRead(buffer, offset).type() == MessageType.VOTE_CHUNK) {
                    voteFrames[0]++;
                    if (!check.verify(buffer, offset, length, h.sessionId()) || check.verify(buffer, offset, length, h.sessionId() + 1)) {
                        badVotes[0]++;
                    }
                }
            }, 10);
        }
        assertEquals(layout.chunkCount(), voteFrames[0], "every vote chunk of round 0");
        assertEquals(0, badVotes[0], "each carries the tag of the worker's vote session, and only of that session");
    }

    private static UnsafeBuffer tagged(final byte[] frame, final FrameMac mac, final int sessionId) {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[frame.length + FrameMac.TAG_LENGTH]);
        buffer.putBytes(0, frame);
        mac.sign(buffer, 0, frame.length, sessionId);
        return buffer;
    }
}
