package io.dlion.aeron.server;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.aeron.Subscription;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.RejectReason;
import io.dlion.aeron.wire.FrameMac;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.aeron.wire.VoteChunkFlyweight;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The agent itself, pumped by hand on the test thread: its duty cycle, and nothing else, takes the votes. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AggregationServerTest {
    private static final String IPC = "aeron:ipc?mtu=8k";
    private static final int JOB = 4;
    private static final int WORKERS = 2;
    private static final long PARAMS = 3_000;
    private static final int CHUNK_WORDS = 20;
    private static final byte[] SECRET = "dl4j-lion test secret, 32 bytes!".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private AeronRuntime runtime;
    private AggregationServer server;
    private Subscription results;

    @AfterEach
    void tearDown() {
        CloseHelper.closeAll(results, server, runtime);
    }

    @Test
    void shouldRunALaunchedServerOnAThreadOfItsOwnUntilClosed() throws InterruptedException {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        server = AggregationServer.launch(new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(WORKERS).paramCount(PARAMS).chunkWords(CHUNK_WORDS)
            .voteChannel(IPC).voteStreamId(1783).resultChannel(IPC).resultStreamId(1784));
        final String role = server.roleName();
        assertTrue(threadNamed(role), "the duty cycle runs on a thread named " + role);
        results = runtime.aeron().addSubscription(IPC, 1784);
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!server.isConnected() && System.nanoTime() - deadline < 0) {
            Thread.sleep(1);
        }
        assertTrue(server.isConnected(), "the launched server publishes results");
        server.close();
        assertFalse(threadNamed(role), "close() stops the server's thread");
        assertTrue(server.counters().bytesIn().isClosed(), "and frees the server's counters");
    }

    @Test
    void shouldRunSeveralServersOnOneThread() {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        final List<AggregationServer.Context> contexts = new ArrayList<>();
        for (int s = 0; s < 2; s++) {
            contexts.add(new AggregationServer.Context().aeron(runtime.aeron()).jobId(JOB).workers(WORKERS).paramCount(PARAMS)
                .chunkWords(CHUNK_WORDS).slice(s).paramRange(s * 1_280L, s == 0 ? 1_280L : PARAMS)
                .voteChannel(IPC).voteStreamId(1785 + 2 * s).resultChannel(IPC).resultStreamId(1786 + 2 * s));
        }
        final AggregationServers servers = AggregationServers.launch(contexts);
        assertEquals(2, servers.servers().size());
        servers.close();
        for (final AggregationServer each : servers.servers()) {
            assertTrue(each.counters().bytesIn().isClosed(), "closing the thread frees server " + each.roleName());
        }
        final IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () -> AggregationServers.launch(List.of()));
        assertTrue(none.getMessage().contains("contexts"), none.getMessage());
    }

    private static boolean threadNamed(final String name) {
        for (final Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals(name) && t.isAlive()) {
                return true;
            }
        }
        return false;
    }

    @Test
    void shouldVoteAChunkOnlyInTheDutyCycleAfterTheMessageThatCompletedIt() throws InterruptedException {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        server = new AggregationServer(new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(WORKERS).paramCount(PARAMS).chunkWords(CHUNK_WORDS)
            .voteChannel(IPC).voteStreamId(1781).resultChannel(IPC).resultStreamId(1782));
        results = runtime.aeron().addSubscription(IPC, 1782);
        while (!server.isConnected()) {
            Thread.sleep(1);
        }
        final UnsafeBuffer frame = new UnsafeBuffer(new byte[VoteChunkFlyweight.length((long)CHUNK_WORDS * 64)]);
        for (int w = 0; w < WORKERS; w++) {
            final int length = new HelloFlyweight().wrap(frame, 0).encode(JOB, 0, 0, w, 0, PARAMS, 10 + w, null, 0, null, 0, 0);
            assertEquals(ControlledFragmentHandler.Action.CONTINUE, server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, 10 + w));
        }
        final long[][] signs = {new long[(int)((PARAMS + 63) >>> 6)]};
        final VoteChunkFlyweight vote = new VoteChunkFlyweight();
        int length = vote.wrap(frame, 0).encode(JOB, 0, 0, CHUNK_WORDS, 0, 0, signs, PARAMS, 0);
        assertEquals(ControlledFragmentHandler.Action.CONTINUE, server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, 10));
        length = vote.wrap(frame, 0).encode(JOB, 0, 0, CHUNK_WORDS, 1, 0, signs, PARAMS, 0);
        assertEquals(ControlledFragmentHandler.Action.BREAK, server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, 11),
            "the chunk has every vote: the poll stops there");
        assertEquals(0, server.counters().chunksVoted().get(), "not voted by the message handler");
        final long bytesIn = server.counters().bytesIn().get();
        final int nextLength = vote.wrap(frame, 0).encode(JOB, 0, CHUNK_WORDS, CHUNK_WORDS, 0, 0, signs, PARAMS, CHUNK_WORDS);
        assertEquals(ControlledFragmentHandler.Action.ABORT, server.onMessage(frame, 0, nextLength, FrameDescriptor.UNFRAGMENTED, 10),
            "nothing is read while a chunk waits for its vote");
        assertEquals(bytesIn, server.counters().bytesIn().get());
        server.doWork();
        assertEquals(1, server.counters().chunksVoted().get(), "voted by the duty cycle");
        assertEquals(ControlledFragmentHandler.Action.CONTINUE, server.onMessage(frame, 0, nextLength, FrameDescriptor.UNFRAGMENTED, 10),
            "read once the chunk is voted");
        assertEquals(0, server.counters().rejectedTotal());

        length = vote.wrap(frame, 0).encode(JOB, 0, 0, CHUNK_WORDS, 1, 0, signs, PARAMS, 0);
        assertEquals(ControlledFragmentHandler.Action.CONTINUE, server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, 11));
        assertEquals(1, server.counters().rejected(RejectReason.DUPLICATE).get(), "a vote of a published chunk");
        length = vote.wrap(frame, 0).encode(JOB, 0, CHUNK_WORDS, CHUNK_WORDS, 1, 0, signs, PARAMS, CHUNK_WORDS);
        assertEquals(ControlledFragmentHandler.Action.CONTINUE, server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, 99));
        assertEquals(1, server.counters().rejected(RejectReason.UNAUTHENTICATED).get(), "a vote from another session");
    }

    /**
     * At the start of a job one worker may reach its first vote long before another has even said HELLO (a slower process
     * start, a slower first training step). Below the quorum, the round does not abort for workers that never voted (one
     * has said HELLO, one has not): it waits another deadline; once the quorum is present the missing worker is dropped.
     */
    @Test
    void shouldWaitForAWorkerThatNeverSaidHelloInsteadOfAbortingBelowTheQuorum() throws InterruptedException {
        final long[] now = {0};
        final long timeoutNs = 1_000;
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        server = new AggregationServer(new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(3).paramCount(PARAMS).chunkWords(CHUNK_WORDS).minVoters(2)
            .roundTimeoutNs(timeoutNs).nanoClock(() -> now[0])
            .voteChannel(IPC).voteStreamId(1783).resultChannel(IPC).resultStreamId(1784));
        results = runtime.aeron().addSubscription(IPC, 1784);
        while (!server.isConnected()) {
            Thread.sleep(1);
        }
        final UnsafeBuffer frame = new UnsafeBuffer(new byte[VoteChunkFlyweight.length((long)CHUNK_WORDS * 64)]);
        final long[][] signs = {new long[(int)((PARAMS + 63) >>> 6)]};
        final VoteChunkFlyweight vote = new VoteChunkFlyweight();
        hello(frame, 0);
        hello(frame, 1);
        server.onMessage(frame, 0, vote.wrap(frame, 0).encode(JOB, 0, 0, CHUNK_WORDS, 0, 0, signs, PARAMS, 0), FrameDescriptor.UNFRAGMENTED, 10);
        for (int deadline = 0; deadline < 3; deadline++) {
            now[0] += 2 * timeoutNs;
            server.doWork();
        }
        assertEquals(0, server.counters().roundsAbandoned().get(), "workers 1 and 2 never voted: still starting, not lost");
        assertEquals(0, server.counters().workersDropped().get());

        server.onMessage(frame, 0, vote.wrap(frame, 0).encode(JOB, 0, 0, CHUNK_WORDS, 1, 0, signs, PARAMS, 0), FrameDescriptor.UNFRAGMENTED, 11);
        now[0] += 2 * timeoutNs;
        server.doWork();
        server.doWork();
        assertEquals(1, server.counters().workersDropped().get(), "worker 2 dropped once the quorum is present");
        assertEquals(1, server.counters().chunksVoted().get(), "the first chunk voted by workers 0 and 1");
        assertEquals(0, server.counters().roundsAbandoned().get());
    }

    /**
     * With frame tags on, the server takes a vote only with the tag of the job's secret over the frame and the session it
     * came on: the same frame altered, untagged, or tagged for another session is refused as {@code bad-mac} and counted,
     * and the genuine frame that follows is then accepted (not a duplicate). A HELLO without the frame-tag flag is refused.
     */
    @Test
    void shouldTakeOnlyVotesWithTheTagOfTheJobsSecretAndSession() throws InterruptedException {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        server = new AggregationServer(new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(WORKERS).paramCount(PARAMS).chunkWords(CHUNK_WORDS).secret(SECRET).frameMac(true)
            .voteChannel(IPC).voteStreamId(1785).resultChannel(IPC).resultStreamId(1786));
        results = runtime.aeron().addSubscription(IPC, 1786);
        while (!server.isConnected()) {
            Thread.sleep(1);
        }
        final UnsafeBuffer frame = new UnsafeBuffer(new byte[VoteChunkFlyweight.length((long)CHUNK_WORDS * 64) + FrameMac.TAG_LENGTH]);
        final HelloCredentials credentials = new HelloCredentials(SECRET);
        int length = new HelloFlyweight().wrap(frame, 0).encode(JOB, 0, 0, 0, 0, PARAMS, 10, null, 0, credentials, 1, System.currentTimeMillis(), 0);
        server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, 10);
        assertEquals(1, server.counters().rejected(RejectReason.FRAME_MAC_MISMATCH).get(), "a HELLO of a worker without --frame-mac");
        for (int w = 0; w < WORKERS; w++) {
            length = new HelloFlyweight().wrap(frame, 0).encode(JOB, 0, 0, w, 0, PARAMS, 10 + w, null, 0, credentials, 2 + w,
                System.currentTimeMillis(), HelloFlyweight.FLAG_FRAME_MAC);
            server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, 10 + w);
        }
        assertEquals(1, server.counters().rejectedTotal(), "both HELLOs with the flag accepted");
        final FrameMac mac = new FrameMac(SECRET);
        final long[][] ones = {new long[(int)((PARAMS + 63) >>> 6)]};
        java.util.Arrays.fill(ones[0], -1L);
        final VoteChunkFlyweight vote = new VoteChunkFlyweight();
        length = vote.wrap(frame, 0).encode(JOB, 0, 0, CHUNK_WORDS, 0, 0, ones, PARAMS, 0);
        mac.sign(frame, 0, length, 10);
        assertEquals(ControlledFragmentHandler.Action.CONTINUE, server.onMessage(frame, 0, length + FrameMac.TAG_LENGTH, FrameDescriptor.UNFRAGMENTED, 10));

        length = vote.wrap(frame, 0).encode(JOB, 0, 0, CHUNK_WORDS, 1, 0, ones, PARAMS, 0);
        mac.sign(frame, 0, length, 11);
        final int tagged = length + FrameMac.TAG_LENGTH;
        frame.putByte(VoteChunkFlyweight.BODY_OFFSET + 3, (byte)0);
        assertEquals(ControlledFragmentHandler.Action.CONTINUE, server.onMessage(frame, 0, tagged, FrameDescriptor.UNFRAGMENTED, 11));
        assertEquals(ControlledFragmentHandler.Action.CONTINUE, server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, 11));
        vote.wrap(frame, 0).encode(JOB, 0, 0, CHUNK_WORDS, 1, 0, ones, PARAMS, 0);
        mac.sign(frame, 0, length, 12);
        assertEquals(ControlledFragmentHandler.Action.CONTINUE, server.onMessage(frame, 0, tagged, FrameDescriptor.UNFRAGMENTED, 11));
        assertEquals(3, server.counters().rejected(RejectReason.BAD_MAC).get(), "altered, untagged, tagged for another session");
        assertEquals(0, server.counters().chunksVoted().get());

        mac.sign(frame, 0, length, 11);
        assertEquals(ControlledFragmentHandler.Action.BREAK, server.onMessage(frame, 0, tagged, FrameDescriptor.UNFRAGMENTED, 11),
            "the genuine vote completes the chunk");
        assertEquals(4, server.counters().rejectedTotal(), "nothing else refused: no duplicate");
        server.doWork();
        assertEquals(1, server.counters().chunksVoted().get());
        final int[] resultFrames = {0};
        final FrameMac resultMac = new FrameMac(SECRET);
        final MessageHeaderFlyweight type = new MessageHeaderFlyweight();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (resultFrames[0] == 0 && System.nanoTime() < deadline) {
            server.doWork();
            results.poll((buffer, offset, frameLength, header) -> {
                if (type.wrapForRead(buffer, offset).type() == MessageType.RESULT_CHUNK) {
                    assertTrue(resultMac.verify(buffer, offset, frameLength, header.sessionId()), "the result frame carries the server's tag");
                    resultFrames[0]++;
                }
            }, 10);
        }
        assertEquals(1, resultFrames[0], "one result frame");
    }

    private void hello(final UnsafeBuffer frame, final int worker) {
        final int length = new HelloFlyweight().wrap(frame, 0).encode(JOB, 0, 0, worker, 0, PARAMS, 10 + worker, null, 0, null, 0, 0);
        assertEquals(ControlledFragmentHandler.Action.CONTINUE, server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, 10 + worker));
    }
}
