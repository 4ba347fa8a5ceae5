package io.dlion.aeron;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.testkit.Await;
import io.dlion.testkit.Frames;
import io.dlion.testkit.NaiveVote;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The server dies in the middle of a round (one worker's vote in, the other's not) and a new server starts on the same
 * channels: the workers, still inside {@code await}, say HELLO again, send the round again and get its correct result;
 * the next round runs normally.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ServerRestartTest {
    private static final int JOB = 44;
    private static final int N = 2;
    private static final long PARAMS = 150_001;
    private static final String IPC = Channels.ipc();

    private AeronRuntime runtime;
    private AggregationServer launched;
    private final List<AeronVoteExchange> workers = new ArrayList<>();
    private final List<ExecutorService> threads = new ArrayList<>();
    private final AtomicReference<Throwable> serverError = new AtomicReference<>();

    @AfterEach
    void tearDown() throws InterruptedException {
        for (final ExecutorService thread : threads) {
            thread.shutdownNow();
            thread.awaitTermination(5, TimeUnit.SECONDS);
        }
        CloseHelper.closeAll(workers);
        CloseHelper.closeAll(launched, runtime);
        assertNull(serverError.get(), "server agent error");
    }

    @Test
    void shouldResumeTheRoundOnARestartedServer() throws Exception {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        AggregationServer server = startServer();
        for (int i = 0; i < N; i++) {
            final ExecutorService thread = Executors.newSingleThreadExecutor();
            threads.add(thread);
            final int id = i;
            workers.add(thread.submit(() -> new AeronVoteExchange(new AeronVoteExchange.Context()
                .aeron(runtime.aeron()).jobId(JOB).workerId(id).workers(N).paramCount(PARAMS).secret(Frames.SECRET)
                .slices(List.of(new SliceEndpoint(0, 0, -1, IPC, 1701, IPC, 1702))))).get(10, TimeUnit.SECONDS));
        }
        check(0, List.of(round(0, 0), round(0, 1)));

        final Future<RoundResult> first = round(1, 0);
        final AggregationServer firstServer = server;
        final long twoVotes = 2 * oneVote(server);
        Await.awaitTrue(() -> workers.get(0).counters().bytesUp() == twoVotes && firstServer.counters().bytesIn().get()
            == workers.get(0).workerCounters().bytesUp().get() + workers.get(1).workerCounters().bytesUp().get(),
            "worker 0's round-1 vote (and every HELLO) in");
        launched.close();
        final long downNs = System.nanoTime();
        Thread.sleep(200);
        server = startServer();
        final Future<RoundResult> second = round(1, 1);
        check(1, List.of(first, second));
        final long recoveredMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - downNs);
        for (final AeronVoteExchange worker : workers) {
            assertEquals(1, worker.workerCounters().serverReconnects().get(), "worker " + worker.workerId() + " said HELLO again");
        }
        check(2, List.of(round(2, 0), round(2, 1)));
        assertEquals(2, server.counters().rounds().get(), "the new server ran rounds 1 and 2");
        System.out.println("ServerRestartTest: round 1 finished " + recoveredMs + " ms after the server went down (200 ms down)");
    }

    /** Bytes of one worker's vote of a round on the wire. */
    private static long oneVote(final AggregationServer server) {
        final int chunks = server.layout().chunkCount();
        final long full = io.dlion.aeron.wire.ChunkLayout.frameLength(server.layout().chunkWords() * Long.BYTES);
        final long last = io.dlion.aeron.wire.ChunkLayout.frameLength((int)((PARAMS - (chunks - 1L) * server.layout().chunkWords() * 64 + 7) / 8));
        return (chunks - 1) * full + last;
    }

    private AggregationServer startServer() {
        final AggregationServer server = AggregationServer.launch(new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(N).paramCount(PARAMS).rule(VoteRule.MAJORITY).secret(Frames.SECRET)
            .voteChannel(IPC).voteStreamId(1701).resultChannel(IPC).resultStreamId(1702).errorHandler(serverError::set));
        launched = server;
        return server;
    }

    private Future<RoundResult> round(final long round, final int worker) {
        final AeronVoteExchange exchange = workers.get(worker);
        return threads.get(worker).submit(() -> {
            exchange.submit(round, SyntheticVotes.vote(5, round, worker, PARAMS), PARAMS);
            return exchange.await(round, 10_000);
        });
    }

    private static void check(final long round, final List<Future<RoundResult>> futures) throws Exception {
        final long[][] votes = {SyntheticVotes.vote(5, round, 0, PARAMS), SyntheticVotes.vote(5, round, 1, PARAMS)};
        for (final Future<RoundResult> future : futures) {
            NaiveVote.assertMatches(votes, PARAMS, VoteRule.MAJORITY, future.get(15, TimeUnit.SECONDS));
        }
    }
}
