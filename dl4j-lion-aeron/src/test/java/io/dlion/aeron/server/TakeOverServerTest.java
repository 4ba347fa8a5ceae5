package io.dlion.aeron.server;

import java.util.concurrent.TimeUnit;

import io.aeron.Subscription;
import io.aeron.logbuffer.FrameDescriptor;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.VoteChunkFlyweight;
import io.dlion.vote.VoterSet;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The server of a slice taken over from a dead rank ({@code SliceServers.takeOver}) is told which rank died: its rounds
 * do not wait for that rank's vote until the round deadline, and wait for it again once it says HELLO (restarted). Without
 * being told, the same votes leave the round waiting. The agent is pumped on the test thread with a clock of its own,
 * which never reaches the deadline.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TakeOverServerTest {
    private static final String IPC = "aeron:ipc?mtu=8k";
    private static final int JOB = 5;
    private static final long PARAMS = 3_000;
    private static final int CHUNK_WORDS = 20;
    private static final int WORDS = (int) ((PARAMS + 63) >>> 6);
    private static final int CHUNKS = (WORDS + CHUNK_WORDS - 1) / CHUNK_WORDS;

    private AeronRuntime runtime;
    private AggregationServer server;
    private Subscription results;
    private final long[] now = {0};
    private final UnsafeBuffer frame = new UnsafeBuffer(new byte[VoteChunkFlyweight.length((long) CHUNK_WORDS * 64)]);
    private final long[][] signs = {new long[WORDS]};

    @AfterEach
    void tearDown() {
        CloseHelper.closeAll(results, server, runtime);
    }

    @Test
    void shouldNotWaitForTheDeadRankUntilItSaysHelloAgain() throws InterruptedException {
        start(VoterSet.of(3, 2));
        hello(0, 7);
        hello(1, 7);
        for (int chunk = 0; chunk < CHUNKS; chunk++) {
            vote(0, 7, chunk);
            vote(1, 7, chunk);
            cycle();
        }
        assertEquals(CHUNKS, server.counters().chunksVoted().get(), "round 7 voted by the live ranks 0 and 1 at once");
        assertEquals(0, server.counters().workersDropped().get(), "no deadline passed");

        hello(2, 8); // rank 2 restarted
        vote(0, 8, 0);
        vote(1, 8, 0);
        cycle();
        assertEquals(CHUNKS, server.counters().chunksVoted().get(), "round 8 waits for rank 2 again");
        vote(2, 8, 0);
        cycle();
        assertEquals(CHUNKS + 1, server.counters().chunksVoted().get());
    }

    @Test
    void shouldWaitForEveryRankWhenNotToldOfADeath() throws InterruptedException {
        start(null);
        hello(0, 7);
        hello(1, 7);
        hello(2, 7);
        vote(0, 7, 0);
        vote(1, 7, 0);
        for (int i = 0; i < 10; i++) {
            cycle();
        }
        assertEquals(0, server.counters().chunksVoted().get(), "the round waits for rank 2 until its deadline");
    }

    @Test
    void shouldRefuseAnAbsentSetOfTheWrongSize() {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(3).paramCount(PARAMS).absent(VoterSet.of(4, 2)).conclude());
        assertTrue(e.getMessage().contains("absent"), e.getMessage());
    }

    private void start(final VoterSet absent) throws InterruptedException {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        server = new AggregationServer(new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(3).paramCount(PARAMS).chunkWords(CHUNK_WORDS).minVoters(2)
            .roundTimeoutNs(TimeUnit.SECONDS.toNanos(2)).nanoClock(() -> now[0]).absent(absent)
            .voteChannel(IPC).voteStreamId(1793).resultChannel(IPC).resultStreamId(1794));
        results = runtime.aeron().addSubscription(IPC, 1794);
        while (!server.isConnected()) {
            Thread.sleep(1);
        }
    }

    private void hello(final int worker, final long round) {
        final int length = new HelloFlyweight().wrap(frame, 0).encode(JOB, round, 0, worker, 0, PARAMS, 10 + worker, null, 0, null, 0, 0);
        server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, 10 + worker);
    }

    private void vote(final int worker, final long round, final int chunk) {
        final int words = Math.min(CHUNK_WORDS, WORDS - chunk * CHUNK_WORDS);
        final int length = new VoteChunkFlyweight().wrap(frame, 0).encode(JOB, round, chunk * CHUNK_WORDS, words, worker, 0, signs, PARAMS,
            chunk * CHUNK_WORDS);
        server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, 10 + worker);
    }

    private void cycle() {
        now[0] += TimeUnit.MILLISECONDS.toNanos(1);
        server.doWork();
    }
}
