package io.dlion.aeron;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.aeron.ExclusivePublication;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.testkit.Await;
import io.dlion.testkit.EmbeddedServer;
import io.dlion.testkit.Frames;
import io.dlion.testkit.GarbageFrames;
import io.dlion.testkit.NaiveVote;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Seeded random mutations ({@link GarbageFrames}: bit flips, byte overwrites, truncation, extension, header fields set to
 * edge values, bodies swapped between frames) of a corpus of valid frames (each round's real votes, HELLOs signed with the
 * job's secret but out of date or with a wrong secret), sent from a raw publication to the server's vote stream while
 * three real workers run rounds: the server never fails, every mutated frame is rejected and counted, and every round
 * still equals the naive vote.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FrameFuzzTest {
    private static final int JOB = 8;
    private static final int N = 3;
    private static final long PARAMS = 20_003;
    private static final int CHUNK_WORDS = 100;
    private static final int ROUNDS = 5;
    private static final int FRAMES_PER_ROUND = 10_000;
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
    void shouldRejectEveryMutatedFrameAndKeepTheVote() throws Exception {
        fixture = EmbeddedServer.launch(new AeronRuntime.Context(), new AggregationServer.Context()
            .jobId(JOB).workers(N).paramCount(PARAMS).rule(VoteRule.MAJORITY).secret(Frames.SECRET)
            .chunkWords(CHUNK_WORDS).windowChunks(4)
            .voteChannel(IPC).voteStreamId(1701).resultChannel(IPC).resultStreamId(1702), N);
        final AggregationServer server = fixture.server();
        final ChunkLayout layout = server.layout();
        final ExclusivePublication injector = fixture.runtime().aeron().addExclusivePublication(IPC, 1701);
        Await.awaitConnected(injector);
        final List<AeronVoteExchange> workers = fixture.connect(0, N, id -> new AeronVoteExchange.Context()
            .jobId(JOB).workerId(id).workers(N).paramCount(PARAMS).secret(Frames.SECRET).chunkWords(CHUNK_WORDS)
            .slices(List.of(new SliceEndpoint(0, 0, -1, IPC, 1701, IPC, 1702))));

        final SplittableRandom random = new SplittableRandom(20_251_122L);
        long sent = 0;
        for (int r = 0; r < ROUNDS; r++) {
            final long[][] votes = NaiveVote.randomVotes(500 + r, N, PARAMS);
            final List<byte[]> corpus = new ArrayList<>();
            for (int w = 0; w < N; w++) {
                for (int c = 0; c < layout.chunkCount(); c++) {
                    corpus.add(GarbageFrames.vote(JOB, r, w, 0, layout, c, votes[w]));
                }
                corpus.add(GarbageFrames.hello(JOB, r, w, 0, PARAMS, 0, Frames.SECRET, System.currentTimeMillis() - 3_600_000, random.nextLong()));
                corpus.add(GarbageFrames.hello(JOB, r, w, 0, PARAMS, 0, "another job's secret, 32 bytes!!".getBytes(), System.currentTimeMillis(),
                    random.nextLong()));
            }
            final List<Future<RoundResult>> results = new ArrayList<>();
            final long round = r;
            for (int i = 0; i < N; i++) {
                final AeronVoteExchange worker = workers.get(i);
                final long[] vote = votes[i];
                results.add(fixture.pool().submit(() -> {
                    worker.submit(round, vote, PARAMS);
                    return worker.await(round, 20_000);
                }));
            }
            final GarbageFrames garbage = new GarbageFrames(corpus, injector.maxPayloadLength(), random.nextLong());
            for (int f = 0; f < FRAMES_PER_ROUND; f++) {
                Frames.send(injector, garbage.next());
                sent++;
            }
            for (final Future<RoundResult> result : results) {
                NaiveVote.assertMatches(votes, PARAMS, VoteRule.MAJORITY, result.get(30, TimeUnit.SECONDS));
            }
        }
        Await.awaitValue(server.counters()::rejectedTotal, sent, "every mutated frame rejected");
        for (final RejectReason reason : RejectReason.values()) {
            if (!GarbageFrames.GARBAGE_REASONS.contains(reason)) {
                assertEquals(0, server.counters().rejected(reason).get(), "no mutated frame from an unauthenticated session gets as far as "
                    + reason.label());
            }
        }
        assertEquals(ROUNDS, server.counters().rounds().get());
        assertEquals(N, server.counters().workersJoined().get(), "no mutated HELLO binds a worker");
        final StringBuilder byReason = new StringBuilder();
        for (final RejectReason reason : RejectReason.values()) {
            byReason.append(reason.label()).append('=').append(server.counters().rejected(reason).get()).append(' ');
        }
        System.out.println("FrameFuzzTest: " + sent + " mutated frames rejected: " + byReason);
    }
}
