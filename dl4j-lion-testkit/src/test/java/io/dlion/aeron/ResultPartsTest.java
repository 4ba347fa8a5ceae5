package io.dlion.aeron;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.testkit.NaiveVote;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A sharded exchange hands each slice's part of the result over as soon as the slice is complete: the parts cover every
 * parameter once, and over its range every part's Delta is the naive vote's, for MaVo (odd and even N) and Avg.
 */
@Timeout(60)
class ResultPartsTest {
    private static final int JOB = 31;
    private final List<AggregationServer> servers = new ArrayList<>();
    private final List<AeronVoteExchange> workers = new ArrayList<>();
    private final AtomicReference<Throwable> serverError = new AtomicReference<>();
    private AeronRuntime runtime;
    private ExecutorService pool;

    @BeforeEach
    void setUp() {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
    }

    @AfterEach
    void tearDown() {
        if (pool != null) {
            pool.shutdownNow();
        }
        CloseHelper.closeAll(workers);
        CloseHelper.closeAll(servers);
        CloseHelper.close(runtime);
    }

    @ParameterizedTest
    @CsvSource({"3, MAJORITY", "4, MAJORITY", "3, AVERAGE"})
    void shouldGiveEverySliceOnceWithTheNaiveVotesDelta(final int n, final VoteRule rule) throws Exception {
        final long params = 3 * 64_000 + 77;
        final long[] bounds = {0, 64 * 1000, 64 * 2000, params};
        final List<SliceEndpoint> slices = new ArrayList<>();
        for (int s = 0; s < 3; s++) {
            final String ipc = Channels.ipc();
            servers.add(AggregationServer.launch(new AggregationServer.Context()
                .aeron(runtime.aeron()).jobId(JOB).workers(n).paramCount(params).rule(rule).slice(s).paramRange(bounds[s], bounds[s + 1])
                .voteChannel(ipc).voteStreamId(1801 + 2 * s).resultChannel(ipc).resultStreamId(1802 + 2 * s).errorHandler(serverError::set)));
            slices.add(new SliceEndpoint(s, bounds[s], s == 2 ? -1 : bounds[s + 1], ipc, 1801 + 2 * s, ipc, 1802 + 2 * s));
        }
        connect(n, id -> new AeronVoteExchange.Context().aeron(runtime.aeron()).jobId(JOB).workerId(id).workers(n).paramCount(params).rule(rule)
            .slices(slices));
        checkRounds(n, rule, params, 3);
    }

    /**
     * A sharded job over UDP loopback, with the job's secret and tagged frames, in which every worker's own slice is served
     * in its process: that slice's votes and results go by IPC (no network destination at its server), the others by UDP,
     * and every slice's part is still the naive vote's.
     */
    @ParameterizedTest
    @CsvSource({"3, MAJORITY", "4, MAJORITY", "3, AVERAGE"})
    void shouldGiveTheOwnSliceByIpcAndTheOthersByUdp(final int n, final VoteRule rule) throws Exception {
        final long params = 5 * 64_000 + 77;
        final byte[] secret = new byte[32];
        Arrays.fill(secret, (byte) 7);
        final Topology topology = Topology.sharded(Collections.nCopies(n, "127.0.0.1"), Channels.freeUdpPorts(InetAddress.getLoopbackAddress(), 2 * n));
        final int chunkWords = topology.chunkWords(params, 1000);
        for (int s = 0; s < n; s++) {
            servers.add(AggregationServer.launch(new AggregationServer.Context()
                .aeron(runtime.aeron()).jobId(JOB).workers(n).paramCount(params).rule(rule).chunkWords(chunkWords).secret(secret).frameMac(true)
                .slice(topology, s).errorHandler(serverError::set)));
        }
        connect(n, id -> new AeronVoteExchange.Context().aeron(runtime.aeron()).jobId(JOB).workerId(id).workers(n).paramCount(params).rule(rule)
            .chunkWords(chunkWords).secret(secret).frameMac(true)
            .slices(topology.servedHere(topology.endpoints(params, chunkWords, n, "127.0.0.1"), id)));
        checkRounds(n, rule, params, n);
        for (final AggregationServer server : servers) {
            assertEquals(n - 1, server.counters().resultDestinations().get(), "slice " + server.context().slice()
                + ": every worker but the one in its process is a network destination");
            assertEquals(0, server.counters().rejectedTotal(), "slice " + server.context().slice() + ": nothing rejected");
        }
    }

    private void connect(final int n, final IntFunction<AeronVoteExchange.Context> context) throws Exception {
        pool = Executors.newFixedThreadPool(n);
        final List<Future<AeronVoteExchange>> connecting = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final int id = i;
            connecting.add(pool.submit(() -> new AeronVoteExchange(context.apply(id))));
        }
        for (final Future<AeronVoteExchange> future : connecting) {
            workers.add(future.get(15, TimeUnit.SECONDS));
        }
    }

    private void checkRounds(final int n, final VoteRule rule, final long params, final int slices) throws Exception {
        for (int round = 0; round < 2; round++) {
            final long[][] votes = NaiveVote.randomVotes(77L * (round + 1) + n, n, params);
            final RoundResult expected = NaiveVote.reference(round, votes, params, rule);
            final long r = round;
            final List<Future<String>> checks = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                final AeronVoteExchange worker = workers.get(i);
                final long[] vote = votes[i];
                checks.add(pool.submit(() -> {
                    worker.submit(r, vote, params);
                    final int[] given = new int[(int) params];
                    final List<long[]> ranges = new ArrayList<>();
                    worker.await(r, 10_000, (part, from, to) -> {
                        ranges.add(new long[] {from, to});
                        for (long j = from; j < to; j++) {
                            given[(int) j]++;
                            assertEquals(delta(expected, j), delta(part, j), "Delta of parameter " + j + " in the part [" + from + ", " + to + ")");
                        }
                    });
                    for (int j = 0; j < params; j++) {
                        assertEquals(1, given[j], "parameter " + j + " given once");
                    }
                    return ranges.size() + " parts";
                }));
            }
            for (final Future<String> check : checks) {
                final String parts = check.get(20, TimeUnit.SECONDS);
                assertTrue(parts.equals(slices + " parts") || rule == VoteRule.AVERAGE, "one part per slice: " + parts);
            }
        }
        assertNull(serverError.get());
    }

    /** Delta of parameter j, from the specification of the packed layout (RoundResult). */
    private static double delta(final RoundResult result, final long j) {
        if (result.rule() == VoteRule.MAJORITY) {
            if (result.tie() != null && bit(result.tie(), j)) {
                return 0;
            }
            return bit(result.sign(), j) ? 1 : -1;
        }
        final int voters = result.votersAt(j);
        int k = 0;
        for (int p = 0; p < result.countPlanes().length; p++) {
            k |= (bit(result.countPlanes()[p], j) ? 1 : 0) << p;
        }
        return (2.0 * k - voters) / voters;
    }

    private static boolean bit(final long[] words, final long j) {
        final int shift = (int) (8 * ((j >>> 3) & 7) + 7 - (j & 7));
        return ((words[(int) (j >>> 6)] >>> shift) & 1L) != 0;
    }
}
