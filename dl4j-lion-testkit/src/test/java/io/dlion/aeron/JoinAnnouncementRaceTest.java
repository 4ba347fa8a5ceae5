package io.dlion.aeron;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.aeron.Subscription;
import io.aeron.logbuffer.FrameDescriptor;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.client.RejoinRequiredException;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.aeron.wire.VoteChunkFlyweight;
import io.dlion.exchange.JoinNotice;
import io.dlion.testkit.Frames;
import io.dlion.testkit.GarbageFrames;
import io.dlion.testkit.NaiveVote;
import io.dlion.testkit.PlayedServer;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A freshly rejoined worker must not be told to rejoin again by the announcements of its own join. A joining worker
 * repeats its join HELLO until an answer reaches it, so the server reads join HELLOs, and sends answers, that the worker
 * no longer waits for. Two interleavings that a loaded machine produces by timing are forced here, frame by frame:
 * <ul>
 *   <li>the server (the real agent, its duty cycle pumped on the test thread) reads a repeated join HELLO after the
 *       others opened the joining worker's first round R: it is the same join, not a new one at R + 2;</li>
 *   <li>the worker (the real exchange, against a played server) has joined at R on one HELLO_ACK when the answer to a
 *       HELLO it repeated, and the JOIN_NOTICE broadcast, arrive naming R again: they announce the same join, so round R
 *       completes; a notice of a later round still makes it rejoin.</li>
 * </ul>
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JoinAnnouncementRaceTest {
    private static final int JOB = 71;
    private static final int WORKERS = 3;
    private static final int JOINER = 2;
    private static final int CHUNK_WORDS = 20;
    private static final long PARAMS = 2L * CHUNK_WORDS * 64;

    private AeronRuntime runtime;
    private AggregationServer server;
    private Subscription results;
    private PlayedServer played;
    private AeronVoteExchange worker;

    @AfterEach
    void tearDown() {
        CloseHelper.closeAll(worker, played, results, server, runtime);
    }

    @Test
    void shouldTakeAJoinHelloReadAfterTheJoinRoundOpenedAsARepeatOfThatJoin() throws InterruptedException {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        server = new AggregationServer(new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(WORKERS).paramCount(PARAMS).chunkWords(CHUNK_WORDS)
            .voteChannel(Channels.ipc()).voteStreamId(1931).resultChannel(Channels.ipc()).resultStreamId(1932));
        results = runtime.aeron().addSubscription(Channels.ipc(), 1932);
        while (!server.isConnected() || !results.isConnected()) {
            Thread.sleep(1);
        }
        final List<String> joinerFrames = new ArrayList<>();
        final UnsafeBuffer frame = new UnsafeBuffer(new byte[VoteChunkFlyweight.length((long)CHUNK_WORDS * 64)]);
        hello(frame, 0, 0, 1);
        hello(frame, 1, 0, 2);
        // the joining worker's first join HELLO: its first round is the others' round + 2, as on a server with it open
        hello(frame, JOINER, MessageHeaderFlyweight.JOIN_ROUND, 3);
        pump(joinerFrames);
        assertEquals(List.of("HELLO_ACK 2", "JOIN_NOTICE 2"), joinerFrames, "answered and announced at round 2; rejected " + server.counters().rejectedTotal()
            + ", answers " + server.counters().helloAnswers().get() + ", joins " + server.counters().joinsAnnounced().get());

        // the others complete rounds 0 and 1 and open round 2, the joining worker's first: its join is no longer pending
        final ChunkLayout layout = server.layout();
        final long[][] raw = NaiveVote.randomVotes(3, WORKERS, PARAMS);
        for (final long round : new long[] {0, 1, 2}) {
            for (int c = 0; c < layout.chunkCount(); c++) {
                for (int w = 0; w < 2; w++) {
                    final byte[] vote = GarbageFrames.vote(JOB, round, w, 0, layout, c, raw[w]);
                    server.onMessage(new UnsafeBuffer(vote), 0, vote.length, FrameDescriptor.UNFRAGMENTED, 10 + w);
                    pump(joinerFrames);
                }
            }
        }
        assertEquals(2, server.currentRound(), "round 2 is open");
        assertTrue(server.activeWorkers().contains(JOINER), "the joining worker is waited for from its first round on");

        // the repeat the worker sent before the answer reached it, read only now
        joinerFrames.clear();
        hello(frame, JOINER, MessageHeaderFlyweight.JOIN_ROUND, 4);
        pump(joinerFrames);
        assertEquals(List.of("HELLO_ACK 2"), joinerFrames,
            "answered with the same join, and no new join announced (it would name round 4 and make the worker that joined at 2 rejoin)");
        assertEquals(1, server.counters().joinsAnnounced().get());
        assertTrue(server.activeWorkers().contains(JOINER), "still waited for in round 2");

        // a restarted worker (a new session) joins anew
        joinerFrames.clear();
        hello(frame, JOINER, MessageHeaderFlyweight.JOIN_ROUND, 5, 13);
        pump(joinerFrames);
        assertEquals(List.of("HELLO_ACK 4", "JOIN_NOTICE 4"), joinerFrames, "a new session: a new join at the open round + 2");
        assertEquals(2, server.counters().joinsAnnounced().get());
    }

    @Test
    void shouldNotTakeLateAnnouncementsOfItsOwnJoinAsADemandToRejoin() throws Exception {
        played = PlayedServer.launch(1941, 1942);
        final long first = 5;
        final PlayedServer.Hello[] repeated = {null};
        worker = played.connectWith(() -> new AeronVoteExchange(new AeronVoteExchange.Context()
                .aeron(played.aeron()).jobId(JOB).workerId(JOINER).workers(WORKERS).paramCount(PARAMS).rule(VoteRule.AVERAGE)
                .chunkWords(CHUNK_WORDS).join(true).slices(List.of(played.slice()))),
            hello -> {
                // the worker repeats its HELLO (10 ms later) until an answer arrives; the first answer is sent after the repeat
                repeated[0] = played.takeHello();
                assertTrue(hello.isJoin() && repeated[0].isJoin());
                played.answer(hello, first, 0, null);
            });
        final JoinNotice joined = worker.awaitJoin(10_000);
        assertEquals(first, joined.round());
        assertEquals(0, joined.donor());

        // the answer to the repeated HELLO (sent while the join was pending) and the JOIN_NOTICE broadcast come late
        played.answer(repeated[0], first, 0, null);
        played.joinNotice(JOB, JOINER, first, 0);
        final ChunkLayout layout = new ChunkLayout(PARAMS, 0, PARAMS, CHUNK_WORDS);
        final long[][] raw = NaiveVote.randomVotes(7, WORKERS, PARAMS);
        final long[][] planes = new long[2][(int)(PARAMS >>> 6)];
        worker.submit(first, raw[JOINER], PARAMS);
        for (int c = 0; c < layout.chunkCount(); c++) {
            played.send(Frames.averageResult(JOB, first, 0, layout, c, 0b111, planes));
        }
        assertEquals(first, worker.await(first, 10_000).round(), "its first round completes");

        // a demand to rejoin names a later round than the one it joined at
        worker.submit(first + 1, raw[JOINER], PARAMS);
        played.joinNotice(JOB, JOINER, first + 3, 1);
        final RejoinRequiredException rejoin = assertThrows(RejoinRequiredException.class, () -> worker.await(first + 1, 600_000));
        assertEquals(first + 3, rejoin.notice().round());
        assertEquals(1, rejoin.notice().donor());
    }

    private void hello(final UnsafeBuffer frame, final int worker, final long round, final long nonce) {
        hello(frame, worker, round, nonce, 10 + worker);
    }

    private void hello(final UnsafeBuffer frame, final int worker, final long round, final long nonce, final int session) {
        final int length = new HelloFlyweight().wrap(frame, 0).encode(JOB, round, 0, worker, 0, PARAMS, session, null, 0, null, nonce, 0);
        server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, session);
    }

    /** Run the server's duty cycle until it has nothing left to do, keeping the HELLO_ACKs and JOIN_NOTICEs about the joiner. */
    private void pump(final List<String> joinerFrames) {
        final MessageHeaderFlyweight header = new MessageHeaderFlyweight();
        int idle = 0;
        while (idle < 50) {
            final int work = server.doWork() + results.poll((buffer, offset, length, h) -> {
                final MessageHeaderFlyweight msg = header.wrapForRead(buffer, offset);
                if ((msg.type() == MessageType.HELLO_ACK && msg.workerId() == JOINER)
                    || (msg.type() == MessageType.JOIN_NOTICE && msg.joiningWorker() == JOINER)) {
                    joinerFrames.add(MessageType.name(msg.type()) + ' ' + msg.round());
                }
            }, 100);
            idle = work == 0 ? idle + 1 : 0;
            Thread.onSpinWait();
        }
    }
}
