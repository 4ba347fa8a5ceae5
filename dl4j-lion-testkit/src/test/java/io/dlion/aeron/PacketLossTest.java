package io.dlion.aeron;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.aeron.Aeron;
import io.aeron.driver.ext.DebugReceiveChannelEndpoint;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.testkit.EmbeddedServer;
import io.dlion.testkit.NaiveVote;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.testkit.TestPorts;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * 5% of the data frames every UDP receive endpoint of the driver gets are dropped (aeron-driver's
 * {@link DebugReceiveChannelEndpoint} with a seeded random loss, as {@link AeronRuntime.Context#receiveLossRate} sets it up and
 * {@code aeron.debug.receive.data.loss.rate=0.05} configures): votes to the server and MDC results to the workers are
 * both hit, Aeron's NAK/retransmit recovers them, and every round is bit-identical to the naive vote.
 */
@Tag("slow")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PacketLossTest {
    private static final int JOB = 55;
    private static final int N = 3;
    private static final long PARAMS = 1_000_003;
    private static final int ROUNDS = 40;

    private EmbeddedServer fixture;

    @AfterEach
    void tearDown() {
        if (fixture != null) {
            fixture.close();
            assertNull(fixture.error(), "server agent error");
        }
    }

    @ParameterizedTest(name = "receive data loss {0}")
    @ValueSource(doubles = {0.0, 0.05})
    void shouldGiveBitIdenticalResultsUnderLossOverUdp(final double lossRate) throws Exception {
        final long framesBefore = AeronRuntime.framesReceived();
        final long droppedBefore = AeronRuntime.framesDropped();
        final int votePort = TestPorts.freeUdpPort();
        final int controlPort = TestPorts.freeUdpPort();
        fixture = EmbeddedServer.launch(new AeronRuntime.Context().receiveLossRate(lossRate).lossSeed(42), new AggregationServer.Context()
            .jobId(JOB).workers(N).paramCount(PARAMS).rule(VoteRule.MAJORITY)
            .voteChannel(Channels.udpVotes("127.0.0.1", votePort, N))
            .resultChannel(Channels.udpResultsPublication("127.0.0.1", controlPort, N)), N);
        final AggregationServer server = fixture.server();
        final List<SliceEndpoint> slices = List.of(new SliceEndpoint(0, 0, -1, Channels.udpVotes("127.0.0.1", votePort, N),
            Configuration.VOTE_STREAM_ID_DEFAULT, Channels.udpResultsSubscription("127.0.0.1", N),
            Configuration.RESULT_STREAM_ID_DEFAULT));
        final List<AeronVoteExchange> workers = fixture.connect(0, N, id -> new AeronVoteExchange.Context()
            .jobId(JOB).workerId(id).workers(N).paramCount(PARAMS).slices(slices));

        final long start = System.nanoTime();
        for (int r = 0; r < ROUNDS; r++) {
            final long round = r;
            final List<Future<RoundResult>> futures = new ArrayList<>();
            for (int i = 0; i < N; i++) {
                final AeronVoteExchange worker = workers.get(i);
                final int id = i;
                futures.add(fixture.pool().submit(() -> {
                    worker.submit(round, SyntheticVotes.vote(9, round, id, PARAMS), PARAMS);
                    return worker.await(round, 30_000);
                }));
            }
            final long[][] votes = new long[N][];
            for (int i = 0; i < N; i++) {
                votes[i] = SyntheticVotes.vote(9, round, i, PARAMS);
            }
            final long expected = SyntheticVotes.digest(NaiveVote.reference(round, votes, PARAMS, VoteRule.MAJORITY));
            for (final Future<RoundResult> future : futures) {
                assertEquals(expected, SyntheticVotes.digest(future.get(60, TimeUnit.SECONDS)), "round " + r);
            }
        }
        final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        final long frames = AeronRuntime.framesReceived() - framesBefore;
        final long dropped = AeronRuntime.framesDropped() - droppedBefore;
        final long naks = systemCounter("NAKs sent");
        final long retransmits = systemCounter("Retransmits sent");
        System.out.printf("PacketLossTest: %d rounds of %d params, N=%d, %.0f%% receive data loss: %d of %d data frames dropped, "
            + "%d NAKs, %d retransmits, %d ms (%.1f ms/round), all rounds bit-identical%n", ROUNDS, PARAMS, N, lossRate * 100,
            dropped, frames, naks, retransmits, ms, ms / (double)ROUNDS);
        if (lossRate > 0) {
            assertTrue(dropped > 50, "loss was injected: " + dropped);
            assertTrue(retransmits > 0, "and repaired by retransmits");
        }
        assertEquals(0, server.counters().rejectedTotal());
        assertEquals(ROUNDS, server.counters().rounds().get());
    }

    private long systemCounter(final String label) {
        final Aeron aeron = fixture.runtime().aeron();
        final long[] value = {-1};
        aeron.countersReader().forEach((counterId, typeId, keyBuffer, counterLabel) -> {
            if (counterLabel.startsWith(label)) {
                value[0] = aeron.countersReader().getCounterValue(counterId);
            }
        });
        return value[0];
    }
}
