package io.dlion.aeron.server;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.aeron.Subscription;
import io.aeron.logbuffer.FrameDescriptor;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.wire.HelloAckFlyweight;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.aeron.wire.VoteChunkFlyweight;
import io.dlion.vote.VoterSet;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The donor named in a JOIN_NOTICE must read it, also when the notice went out before the donor's image of the server's
 * result stream was set up. A chaos soak ran into this: a rank died, its slices moved to a fresh server, and the three
 * live workers said HELLO to it at once, the donor among them and the restarted worker with its join HELLO. The server
 * named the donor in its notice as soon as the donor's HELLO had bound it, but the notice, like the first answer to the
 * donor, went out before the donor's image of the newly added destination was set up: the donor, proven by the answer
 * to a HELLO it repeated, never heard of the join, and the joining worker waited 30 s for a hand-over that never began
 * (holding every worker's results meanwhile).
 * <p>
 * The real server agent is pumped on the test thread; the frames the donor's image missed are dropped by the test. The
 * expected rounds and donors are the protocol's rule (docs/protocol.md, "Join HELLO and JOIN_NOTICE"): the first round
 * is the highest round opened + 2, the donor the lowest bound, active worker that is not joining.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class JoinNoticeToDonorTest {
    private static final String IPC = "aeron:ipc?mtu=8k";
    private static final int JOB = 9;
    private static final int WORKERS = 4;
    private static final int JOINER = 0;
    private static final int DEAD = 1;
    private static final int DONOR = 2;
    private static final int OTHER = 3;
    private static final long PARAMS = 2_560;
    private static final int CHUNK_WORDS = 40;
    private static final int WORDS = (int) ((PARAMS + 63) >>> 6);
    /** The round the live workers await when the slice's server is taken over. */
    private static final long OPEN = 1601;

    private AeronRuntime runtime;
    private AggregationServer server;
    private Subscription results;
    private final long[] now = {0};
    private final UnsafeBuffer frame = new UnsafeBuffer(new byte[VoteChunkFlyweight.length((long) CHUNK_WORDS * 64)]);
    private final long[][] signs = {new long[WORDS]};
    private long nonce;

    @AfterEach
    void tearDown() {
        CloseHelper.closeAll(results, server, runtime);
    }

    @Test
    void shouldAnnounceAPendingJoinAgainAfterEveryAnswerToItsDonor() throws InterruptedException {
        start();
        final List<String> frames = new ArrayList<>();
        hello(OTHER, OPEN);
        pump(frames);
        vote(OTHER, OPEN);
        hello(DONOR, OPEN);
        pump(frames);
        hello(JOINER, MessageHeaderFlyweight.JOIN_ROUND);
        pump(frames);
        assertEquals(List.of("HELLO_ACK 3", "HELLO_ACK 2", "HELLO_ACK 0 join 1603 donor 2", "JOIN_NOTICE 0 at 1603 donor 2"), frames,
            "worker 0 joins at the open round + 2 with the lowest live worker as donor");
        assertEquals(OPEN, server.currentRound(), "round 1601 is open");

        // all of it went out before the donor's image was set up: the donor read none of it, and says HELLO again
        frames.clear();
        hello(DONOR, OPEN);
        pump(frames);
        assertEquals(List.of("HELLO_ACK 2", "JOIN_NOTICE 0 at 1603 donor 2"), frames,
            "the answer that proves the server to the donor is followed by the join it is the donor of");

        frames.clear();
        hello(OTHER, OPEN);
        pump(frames);
        assertEquals(List.of("HELLO_ACK 3"), frames, "not the donor: answered only");

        frames.clear();
        hello(JOINER, MessageHeaderFlyweight.JOIN_ROUND);
        pump(frames);
        assertEquals(List.of("HELLO_ACK 0 join 1603 donor 2"), frames, "the joining worker's repeat is answered with its join, as before");

        // rounds 1601 and 1602 complete, and round 1603 opens: the join is done, the donor's answers name nothing more
        vote(DONOR, OPEN);
        pump(frames);
        vote(OTHER, OPEN + 1);
        vote(DONOR, OPEN + 1);
        pump(frames);
        vote(OTHER, OPEN + 2);
        pump(frames);
        assertEquals(OPEN + 2, server.currentRound());
        frames.clear();
        hello(DONOR, OPEN + 2);
        pump(frames);
        assertEquals(List.of("HELLO_ACK 2"), frames, "the join's first round opened: the notice is not sent again");
        assertEquals(1, server.counters().joinsAnnounced().get(), "one join");
    }

    private void start() throws InterruptedException {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        server = new AggregationServer(new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(WORKERS).paramCount(PARAMS).chunkWords(CHUNK_WORDS).minVoters(2)
            .roundTimeoutNs(TimeUnit.SECONDS.toNanos(2)).nanoClock(() -> now[0]).absent(VoterSet.of(WORKERS, DEAD))
            .voteChannel(IPC).voteStreamId(1795).resultChannel(IPC).resultStreamId(1796));
        results = runtime.aeron().addSubscription(IPC, 1796);
        while (!server.isConnected() || !results.isConnected()) {
            Thread.sleep(1);
        }
    }

    private void hello(final int worker, final long round) {
        final int length = new HelloFlyweight().wrap(frame, 0).encode(JOB, round, 0, worker, 0, PARAMS, 10 + worker, null, 0, null, ++nonce, 0);
        server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, 10 + worker);
    }

    private void vote(final int worker, final long round) {
        final int length = new VoteChunkFlyweight().wrap(frame, 0).encode(JOB, round, 0, WORDS, worker, 0, signs, PARAMS, 0);
        server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, 10 + worker);
    }

    /** Run the server's duty cycle (its clock far from any deadline) until it has nothing left to do, keeping its answers and notices. */
    private void pump(final List<String> frames) {
        final MessageHeaderFlyweight header = new MessageHeaderFlyweight();
        final HelloAckFlyweight ack = new HelloAckFlyweight();
        final JoinNoticeFlyweight notice = new JoinNoticeFlyweight();
        int idle = 0;
        while (idle < 50) {
            now[0] += TimeUnit.MICROSECONDS.toNanos(10);
            final int work = server.doWork() + results.poll((buffer, offset, length, h) -> {
                final int type = header.wrapForRead(buffer, offset).type();
                if (type == MessageType.HELLO_ACK) {
                    ack.wrapForRead(buffer, offset);
                    frames.add("HELLO_ACK " + header.workerId() + (ack.joinRound() == HelloAckFlyweight.NO_JOIN ? ""
                        : " join " + ack.joinRound() + " donor " + ack.donor()));
                } else if (type == MessageType.JOIN_NOTICE) {
                    notice.wrapForRead(buffer, offset);
                    frames.add("JOIN_NOTICE " + notice.joiningWorker() + " at " + notice.firstRound() + " donor " + notice.donor());
                }
            }, 100);
            idle = work == 0 ? idle + 1 : 0;
            Thread.onSpinWait();
        }
    }
}
