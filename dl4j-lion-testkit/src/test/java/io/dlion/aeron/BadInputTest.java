package io.dlion.aeron;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.aeron.ExclusivePublication;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.server.ServerCounters;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.testkit.Await;
import io.dlion.testkit.EmbeddedServer;
import io.dlion.testkit.Frames;
import io.dlion.testkit.GarbageFrames;
import io.dlion.testkit.NaiveVote;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Every kind of bad message, sent through raw Aeron publications to the server's vote stream next to a real round:
 * each is rejected with its own counted reason and the round's vote still equals the naive reference.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BadInputTest {
    private static final int JOB = 31;
    private static final int N = 3;
    private static final long PARAMS = 100_003;
    private static final String IPC = Channels.ipc();

    private EmbeddedServer fixture;

    @AfterEach
    void tearDown() {
        if (fixture != null) {
            fixture.close();
            assertNull(fixture.error(), "server agent error");
        }
    }

    @Test
    void shouldRejectEveryKindOfBadMessageWithItsReasonAndStillVoteCorrectly() throws Exception {
        fixture = EmbeddedServer.launch(new AeronRuntime.Context(), new AggregationServer.Context()
            .jobId(JOB).workers(N).paramCount(PARAMS).rule(VoteRule.MAJORITY).secret(Frames.SECRET)
            .voteChannel(IPC).voteStreamId(1701).resultChannel(IPC).resultStreamId(1702), N - 1);
        final AggregationServer server = fixture.server();
        final ServerCounters counters = server.counters();
        final ChunkLayout layout = server.layout();
        final long[][] votes = NaiveVote.randomVotes(99, N, PARAMS);

        final ExclusivePublication raw = fixture.runtime().aeron().addExclusivePublication(IPC, 1701);
        final ExclusivePublication injector = fixture.runtime().aeron().addExclusivePublication(IPC, 1701);
        Await.awaitConnected(raw);
        Await.awaitConnected(injector);
        final byte[] hello = GarbageFrames.hello(JOB, 0, 0, 0, PARAMS, raw.sessionId(), Frames.SECRET, System.currentTimeMillis(), 12345);
        Frames.send(raw, hello);
        final List<AeronVoteExchange> workers = fixture.connect(1, N - 1, id -> new AeronVoteExchange.Context()
            .jobId(JOB).workerId(id).workers(N).paramCount(PARAMS).secret(Frames.SECRET)
            .slices(List.of(new SliceEndpoint(0, 0, -1, IPC, 1701, IPC, 1702))));
        Await.awaitValue(counters.workersJoined()::get, N, "HELLOs accepted");

        final Map<RejectReason, Integer> expected = new EnumMap<>(RejectReason.class);
        final byte[] chunk0 = GarbageFrames.vote(JOB, 0, 0, 0, layout, 0, votes[0]);
        final byte[] chunk1 = GarbageFrames.vote(JOB, 0, 0, 0, layout, 1, votes[0]);

        Frames.send(raw, new byte[10]);
        Frames.send(raw, new byte[9000]);
        Frames.send(raw, edit(chunk0, m -> m.writeHeader(MessageType.VOTE_CHUNK, Encoding.TERNARY)));
        expected.put(RejectReason.MALFORMED, 4);
        Frames.send(raw, java.util.Arrays.copyOf(chunk0, chunk0.length - 100));
        Frames.send(raw, java.util.Arrays.copyOf(chunk1, chunk1.length + 64));
        expected.put(RejectReason.BAD_LENGTH, 2);
        final byte[] badVersion = chunk0.clone();
        badVersion[MessageHeaderFlyweight.VERSION_OFFSET] = 1;   // the previous version (one-byte worker ids, 64-bit voter masks)
        Frames.send(raw, badVersion);
        expected.put(RejectReason.BAD_VERSION, 1);
        Frames.send(raw, edit(chunk0, m -> m.jobId(JOB + 1)));
        expected.put(RejectReason.FOREIGN_JOB, 1);
        Frames.send(raw, edit(chunk0, m -> m.chunkWordOffset(7)));
        Frames.send(raw, edit(chunk0, m -> m.chunkWords(999)));
        expected.put(RejectReason.OUT_OF_RANGE, 2);
        Frames.send(raw, edit(chunk0, m -> m.round(1)));
        expected.put(RejectReason.FUTURE_ROUND, 1);
        Frames.send(raw, edit(chunk0, m -> m.workerId(9)));
        expected.put(RejectReason.UNKNOWN_WORKER, 1);
        Frames.send(raw, edit(chunk0, m -> m.slice(1)));
        expected.put(RejectReason.WRONG_SLICE, 1);
        Frames.send(raw, edit(chunk0, m -> m.writeHeader(MessageType.RESULT_CHUNK, Encoding.SIGN_BITS)));
        expected.put(RejectReason.UNEXPECTED_TYPE, 1);
        Frames.send(raw, chunk0);
        Frames.send(raw, chunk0);
        expected.put(RejectReason.DUPLICATE, 1);
        Frames.send(raw, chunk1);

        Frames.send(injector, chunk0);
        expected.put(RejectReason.UNAUTHENTICATED, 1);
        Frames.send(injector, hello);
        expected.put(RejectReason.REPLAYED_HELLO, 1);
        Frames.send(injector, GarbageFrames.hello(JOB, 0, 0, 0, PARAMS, injector.sessionId(), "not the job's secret, 32 bytes!!".getBytes(),
            System.currentTimeMillis(), 1));
        Frames.send(injector, GarbageFrames.hello(JOB, 0, 0, 0, PARAMS, injector.sessionId(), null, 0, 0));
        expected.put(RejectReason.BAD_CREDENTIALS, 2);
        // every bad frame read before the workers vote: a vote of round 1 read once they opened round 0 is held back
        // (not refused as future-round), and worker 0's frames behind it would never arrive
        Await.awaitValue(counters::rejectedTotal, expected.values().stream().mapToInt(Integer::intValue).sum(), "bad frames read");

        final List<Future<RoundResult>> results = new ArrayList<>();
        for (int i = 1; i < N; i++) {
            final AeronVoteExchange worker = workers.get(i - 1);
            final long[] vote = votes[i];
            results.add(fixture.pool().submit(() -> {
                worker.submit(0, vote, PARAMS);
                return worker.await(0, 10_000);
            }));
        }
        for (final Future<RoundResult> result : results) {
            NaiveVote.assertMatches(votes, PARAMS, VoteRule.MAJORITY, result.get(15, TimeUnit.SECONDS));
        }
        Await.awaitValue(counters.rounds()::get, 1, "rounds");
        Frames.send(raw, chunk0);
        expected.put(RejectReason.STALE_ROUND, 1);

        final int total = expected.values().stream().mapToInt(Integer::intValue).sum();
        Await.awaitValue(counters::rejectedTotal, total, "rejected messages");
        for (final RejectReason reason : RejectReason.values()) {
            assertEquals(expected.getOrDefault(reason, 0).longValue(), counters.rejected(reason).get(), reason.label());
        }
        assertEquals(N, counters.workersJoined().get(), "only the three real HELLOs bind a worker");
    }

    private static byte[] edit(final byte[] frame, final java.util.function.Consumer<MessageHeaderFlyweight> change) {
        final byte[] copy = frame.clone();
        change.accept(new MessageHeaderFlyweight().wrap(new UnsafeBuffer(copy), 0));
        return copy;
    }
}
