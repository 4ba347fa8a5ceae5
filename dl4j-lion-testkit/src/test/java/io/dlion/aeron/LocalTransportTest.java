package io.dlion.aeron;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.aeron.ExclusivePublication;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.testkit.Await;
import io.dlion.testkit.Frames;
import io.dlion.testkit.GarbageFrames;
import io.dlion.testkit.NaiveVote;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A sharded slice server reads votes by UDP and, from a worker in its own process, by IPC: a worker is bound to the
 * transport its HELLO came by as well as to its session. Worker 0 says HELLO over UDP from a vote publication whose
 * session id the test chose; a vote for worker 0 from an IPC publication with that same session id is refused as
 * unauthenticated, and the round counts only worker 0's real vote.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LocalTransportTest {
    private static final int JOB = 41;
    private static final int WORKERS = 2;
    private static final long PARAMS = 2 * 64_000 + 13;
    private static final int SESSION = 424_242;

    private final List<AggregationServer> servers = new ArrayList<>();
    private AeronRuntime runtime;
    private AeronVoteExchange worker;

    @AfterEach
    void tearDown() {
        CloseHelper.closeAll(worker);
        CloseHelper.closeAll(servers);
        CloseHelper.close(runtime);
    }

    @Test
    void shouldRefuseAVoteFromTheOtherTransportWithTheBoundSession() throws Exception {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        final Topology topology = Topology.sharded(Collections.nCopies(WORKERS, "127.0.0.1"),
            Channels.freeUdpPorts(InetAddress.getLoopbackAddress(), 2 * WORKERS));
        final int chunkWords = topology.chunkWords(PARAMS, 1000);
        for (int s = 0; s < WORKERS; s++) {
            servers.add(AggregationServer.launch(new AggregationServer.Context()
                .aeron(runtime.aeron()).jobId(JOB).workers(WORKERS).paramCount(PARAMS).rule(VoteRule.MAJORITY).chunkWords(chunkWords)
                .minVoters(1).roundTimeoutNs(TimeUnit.MILLISECONDS.toNanos(500)).secret(Frames.SECRET).slice(topology, s)));
        }
        final List<SliceEndpoint> slices = new ArrayList<>(topology.endpoints(PARAMS, chunkWords, WORKERS, "127.0.0.1"));
        final SliceEndpoint udp = slices.get(0);
        slices.set(0, new SliceEndpoint(0, udp.fromParam(), udp.toParam(), udp.voteChannel() + "|session-id=" + SESSION, udp.voteStreamId(),
            udp.resultChannel(), udp.resultStreamId()));
        worker = new AeronVoteExchange(new AeronVoteExchange.Context().aeron(runtime.aeron()).jobId(JOB).workerId(0).workers(WORKERS)
            .paramCount(PARAMS).rule(VoteRule.MAJORITY).chunkWords(chunkWords).secret(Frames.SECRET).slices(slices));
        final AggregationServer server0 = servers.get(0);
        assertEquals(1, server0.counters().workersJoined().get(), "worker 0's HELLO over UDP was accepted");

        final long[] forged = new long[(int) ((PARAMS + 63) >>> 6)];
        try (ExclusivePublication local = runtime.aeron().addExclusivePublication(topology.localChannel(WORKERS) + "|session-id=" + SESSION,
            topology.localVoteStreamId(0))) {
            Await.awaitConnected(local);
            Frames.send(local, GarbageFrames.vote(JOB, 0, 0, 0, server0.layout(), 0, forged));
            Await.awaitValue(() -> server0.counters().rejected(RejectReason.UNAUTHENTICATED).get(), 1,
                "a vote for worker 0 by IPC, with the session worker 0 is bound to over UDP");
        }
        final long[] vote = SyntheticVotes.vote(5, 0, 0, PARAMS);
        worker.submit(0, vote, PARAMS);
        final RoundResult result = worker.await(0, 20_000);
        assertEquals(0b01L, result.voterSet().word(0), "only worker 0 voted");
        NaiveVote.assertMatches(new long[][] {vote}, PARAMS, VoteRule.MAJORITY, result);
    }
}
