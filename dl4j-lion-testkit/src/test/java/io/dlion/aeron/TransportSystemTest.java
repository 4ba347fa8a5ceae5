package io.dlion.aeron;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.testkit.NaiveVote;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.testkit.TestPorts;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** N workers and the aggregation server(s) in one JVM on a real embedded media driver. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TransportSystemTest {
    private static final int JOB = 77;

    private AeronRuntime runtime;
    private final List<AggregationServer> servers = new ArrayList<>();
    private final List<AeronVoteExchange> workers = new ArrayList<>();
    private final AtomicReference<Throwable> serverError = new AtomicReference<>();
    private ExecutorService pool;

    @BeforeEach
    void setUp() {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        if (pool != null) {
            pool.shutdownNow();
            pool.awaitTermination(5, TimeUnit.SECONDS);
        }
        CloseHelper.closeAll(workers);
        CloseHelper.closeAll(servers);
        CloseHelper.close(runtime);
        assertNull(serverError.get(), "server agent error");
    }

    @ParameterizedTest
    @CsvSource({
        "1, MAJORITY, 1000",
        "2, MAJORITY, 100000",
        "3, MAJORITY, 100003",
        "4, MAJORITY, 64000",
        "5, MAJORITY, 99999",
        "3, MAJORITY, 200003",
        "3, AVERAGE, 100001",
        "4, AVERAGE, 100000",
        "8, AVERAGE, 70007"
    })
    void shouldMatchNaiveVoteOverIpc(final int n, final VoteRule rule, final long params) throws Exception {
        final String ipc = Channels.ipc();
        startServer(0, n, params, rule, 0, params, ipc, 1701, ipc, 1702);
        final List<SliceEndpoint> slices = List.of(new SliceEndpoint(0, 0, -1, ipc, 1701, ipc, 1702));
        connectWorkers(n, params, rule, i -> slices);
        runAndCheck(n, params, rule, 3);
    }

    @Test
    void shouldMatchNaiveVoteOverUdpWithMdcResults() throws Exception {
        final int n = 3;
        final long params = 100_000;
        final int votePort = TestPorts.freeUdpPort();
        final int controlPort = TestPorts.freeUdpPort();
        startServer(0, n, params, VoteRule.MAJORITY, 0, params, Channels.udpVotes("127.0.0.1", votePort, n), 1701,
            Channels.udpResultsPublication("127.0.0.1", controlPort, n), 1702);
        final List<SliceEndpoint> slices = List.of(new SliceEndpoint(0, 0, -1, Channels.udpVotes("127.0.0.1", votePort, n), 1701,
            Channels.udpResultsSubscription("127.0.0.1", n), 1702));
        connectWorkers(n, params, VoteRule.MAJORITY, i -> slices);
        runAndCheck(n, params, VoteRule.MAJORITY, 3);

        final AeronVoteExchange worker = workers.get(0);
        final int chunks = new ChunkLayout(params, 0, params, ChunkLayout.DEFAULT_CHUNK_WORDS).chunkCount();
        final long expectedUp = 3L * (ChunkLayout.frameLength(8 * 1000) * (chunks - 1) + ChunkLayout.frameLength(8 * ((1563 - 1) % 1000 + 1)));
        assertEquals(expectedUp, worker.counters().bytesUp(), "bytes up");
        final long expectedDown = 3L * (ChunkLayout.frameLength(8 + 8 * 1000) * (chunks - 1) + ChunkLayout.frameLength(8 + 8 * ((1563 - 1) % 1000 + 1)));
        assertEquals(expectedDown, worker.counters().bytesDown(), "bytes down: odd-N majority results are votes and a voter set of one word");
    }

    @Test
    void shouldMatchNaiveVoteWithTwoSlices() throws Exception {
        final int n = 3;
        final long params = 100_000;
        final long split = 64 * 700;
        final String ipc = Channels.ipc();
        startServer(0, n, params, VoteRule.MAJORITY, 0, split, ipc, 1701, ipc, 1702);
        startServer(1, n, params, VoteRule.MAJORITY, split, params, ipc, 1703, ipc, 1704);
        final List<SliceEndpoint> slices = List.of(
            new SliceEndpoint(0, 0, split, ipc, 1701, ipc, 1702),
            new SliceEndpoint(1, split, -1, ipc, 1703, ipc, 1704));
        connectWorkers(n, params, VoteRule.MAJORITY, i -> slices);
        runAndCheck(n, params, VoteRule.MAJORITY, 2);
    }

    @Test
    void shouldMatchNaiveVoteOverUdpWhenWorkersRunRoundsWithoutBarrier() throws Exception {
        final int n = 3;
        final long params = 200_003;
        final int rounds = 4;
        final int votePort = TestPorts.freeUdpPort();
        final int controlPort = TestPorts.freeUdpPort();
        startServer(0, n, params, VoteRule.MAJORITY, 0, params, Channels.udpVotes("127.0.0.1", votePort, n), 1701,
            Channels.udpResultsPublication("127.0.0.1", controlPort, n), 1702);
        final List<SliceEndpoint> slices = List.of(new SliceEndpoint(0, 0, -1, Channels.udpVotes("127.0.0.1", votePort, n), 1701,
            Channels.udpResultsSubscription("127.0.0.1", n), 1702));
        connectWorkers(n, params, VoteRule.MAJORITY, i -> slices);
        final List<Future<Integer>> futures = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final int id = i;
            futures.add(pool.submit(() -> {
                for (int r = 0; r < rounds; r++) {
                    workers.get(id).submit(r, SyntheticVotes.vote(17, r, id, params), params);
                    final RoundResult result = workers.get(id).await(r, 10_000);
                    // a result is valid until the next submit: check it now
                    final long[][] votes = new long[n][];
                    for (int w = 0; w < n; w++) {
                        votes[w] = SyntheticVotes.vote(17, r, w, params);
                    }
                    NaiveVote.assertMatches(votes, params, VoteRule.MAJORITY, result);
                    assertEquals(SyntheticVotes.digest(NaiveVote.reference(r, votes, params, VoteRule.MAJORITY)),
                        SyntheticVotes.digest(result), "digest of round " + r);
                }
                return rounds;
            }));
        }
        for (final Future<Integer> future : futures) {
            assertEquals(rounds, future.get(20, TimeUnit.SECONDS));
        }
    }

    private void startServer(final int slice, final int n, final long params, final VoteRule rule, final long from, final long to,
        final String voteChannel, final int voteStream, final String resultChannel, final int resultStream) {
        final AggregationServer server = AggregationServer.launch(new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(n).paramCount(params).rule(rule).slice(slice).paramRange(from, to)
            .voteChannel(voteChannel).voteStreamId(voteStream).resultChannel(resultChannel).resultStreamId(resultStream)
            .windowChunks(8).errorHandler(serverError::set));
        servers.add(server);
    }

    private void connectWorkers(final int n, final long params, final VoteRule rule, final IntFunction<List<SliceEndpoint>> slices)
        throws Exception {
        pool = Executors.newFixedThreadPool(n);
        final List<Future<AeronVoteExchange>> futures = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final int id = i;
            futures.add(pool.submit(() -> new AeronVoteExchange(new AeronVoteExchange.Context()
                .aeron(runtime.aeron()).jobId(JOB).workerId(id).workers(n).paramCount(params).rule(rule).slices(slices.apply(id)))));
        }
        for (final Future<AeronVoteExchange> future : futures) {
            workers.add(future.get(15, TimeUnit.SECONDS));
        }
    }

    private void runAndCheck(final int n, final long params, final VoteRule rule, final int rounds) throws Exception {
        for (int round = 0; round < rounds; round++) {
            final long[][] votes = NaiveVote.randomVotes(1234L * (round + 1) + n, n, params);
            final List<Future<RoundResult>> futures = new ArrayList<>();
            final long r = round;
            for (int i = 0; i < n; i++) {
                final AeronVoteExchange worker = workers.get(i);
                final long[] vote = votes[i];
                futures.add(pool.submit(() -> {
                    worker.submit(r, vote, params);
                    return worker.await(r, 10_000);
                }));
            }
            RoundResult first = null;
            for (final Future<RoundResult> future : futures) {
                final RoundResult result = future.get(15, TimeUnit.SECONDS);
                assertEquals(r, result.round());
                if (first == null) {
                    first = result;
                    NaiveVote.assertMatches(votes, params, rule, result);
                } else if (rule == VoteRule.MAJORITY) {
                    assertArrayEquals(first.sign(), result.sign(), "every worker applies the same sign");
                    assertArrayEquals(first.tie(), result.tie(), "every worker applies the same ties");
                } else {
                    assertArrayEquals(first.countPlanes(), result.countPlanes(), "every worker applies the same counts");
                }
            }
        }
        for (final AeronVoteExchange worker : workers) {
            assertEquals(rounds, worker.counters().rounds());
            assertTrue(worker.counters().bytesUp() > params / 8 * rounds);
        }
    }
}
