package io.dlion.aeron.server;

import java.util.concurrent.TimeUnit;

import io.aeron.Subscription;
import io.aeron.logbuffer.FrameDescriptor;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.VoteChunkFlyweight;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A server whose own process was paused (SIGSTOP, a long GC, a stalled host) does not blame the workers for the pause.
 * Found by the chaos soak: rank 1 of a sharded job, the server of slice 1, was stopped for 2.7 s past its 2 s round
 * deadline; on SIGCONT its first duty cycle found the deadline passed before its media driver had passed on the votes
 * that had arrived meanwhile, saw only its own worker's vote, below the quorum, and aborted the round, and every worker of
 * the job failed with {@code QuorumLostException}. The agent is pumped on the test thread with a clock of its own.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ServerPauseTest {
    private static final String IPC = "aeron:ipc?mtu=8k";
    private static final int JOB = 4;
    private static final long PARAMS = 3_000;
    private static final int CHUNK_WORDS = 20;
    private static final int WORDS = (int) ((PARAMS + 63) >>> 6);
    private static final int CHUNKS = (WORDS + CHUNK_WORDS - 1) / CHUNK_WORDS;
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(1);

    private AeronRuntime runtime;
    private AggregationServer server;
    private Subscription results;
    private final long[] now = {0};
    private final UnsafeBuffer frame = new UnsafeBuffer(new byte[VoteChunkFlyweight.length((long) CHUNK_WORDS * 64)]);
    private final long[][] signs = {new long[(int) ((PARAMS + 63) >>> 6)]};

    @AfterEach
    void tearDown() {
        CloseHelper.closeAll(results, server, runtime);
    }

    @Test
    void shouldNotCountItsOwnPauseAgainstTheWorkersButStillDropAWorkerMissingARealDeadline() throws InterruptedException {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        server = new AggregationServer(new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(3).paramCount(PARAMS).chunkWords(CHUNK_WORDS).minVoters(2)
            .roundTimeoutNs(TIMEOUT_NS).nanoClock(() -> now[0])
            .voteChannel(IPC).voteStreamId(1791).resultChannel(IPC).resultStreamId(1792));
        results = runtime.aeron().addSubscription(IPC, 1792);
        while (!server.isConnected()) {
            Thread.sleep(1);
        }
        for (int w = 0; w < 3; w++) {
            final int length = new HelloFlyweight().wrap(frame, 0).encode(JOB, 0, 0, w, 0, PARAMS, 10 + w, null, 0, null, 0, 0);
            server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, 10 + w);
        }
        // round 0 complete: every worker has voted (none is still starting up, see QuorumGrace)
        for (int chunk = 0; chunk < CHUNKS; chunk++) {
            for (int w = 0; w < 3; w++) {
                vote(w, 0, chunk);
            }
            cycle(TimeUnit.MILLISECONDS.toNanos(1));
        }
        assertEquals(CHUNKS, server.counters().chunksVoted().get());
        vote(0, 1, 0);
        cycle(TimeUnit.MILLISECONDS.toNanos(1));

        // paused for 5 s: the first duty cycle after it has no new vote yet (the driver has not passed them on)
        cycle(TimeUnit.SECONDS.toNanos(5));
        assertEquals(0, server.counters().roundsAbandoned().get(), "the server's own pause is no deadline for the workers");
        assertEquals(0, server.counters().workersDropped().get());
        vote(1, 1, 0);
        vote(2, 1, 0);
        cycle(TimeUnit.MILLISECONDS.toNanos(1));
        assertEquals(CHUNKS + 1, server.counters().chunksVoted().get(), "round 1's first chunk voted by all three");

        // a real deadline still counts: the second chunk waits for worker 2, the clock moves on in small steps
        vote(0, 1, 1);
        vote(1, 1, 1);
        for (int i = 0; i < 30; i++) {
            cycle(TimeUnit.MILLISECONDS.toNanos(50));
        }
        assertEquals(1, server.counters().workersDropped().get(), "worker 2 dropped at the deadline");
        assertEquals(CHUNKS + 2, server.counters().chunksVoted().get(), "the second chunk voted by workers 0 and 1");
        assertEquals(0, server.counters().roundsAbandoned().get());
    }

    private void vote(final int worker, final long round, final int chunk) {
        final int words = Math.min(CHUNK_WORDS, WORDS - chunk * CHUNK_WORDS);
        final int length = new VoteChunkFlyweight().wrap(frame, 0).encode(JOB, round, chunk * CHUNK_WORDS, words, worker, 0, signs, PARAMS,
            chunk * CHUNK_WORDS);
        server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, 10 + worker);
    }

    private void cycle(final long advanceNs) {
        now[0] += advanceNs;
        server.doWork();
    }
}
