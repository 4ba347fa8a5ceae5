package io.dlion.aeron;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.HelloAckFlyweight;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.testkit.NaiveVote;
import io.dlion.testkit.PlayedServer;
import io.dlion.testkit.StoppableClock;
import io.dlion.testkit.TestPorts;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A slice that moves to another rank on the same host keeps the worker's vote session: the new server's port is the old
 * one's, so the worker's vote publication is the same channel and stays. A chaos soak (seed 4904) lost its quorum after a
 * move on one host: the fresh server, bound on the slice's port, had taken a worker's vote from its old session before the
 * worker moved the slice; the move made a new publication, the old session's image closed, and at the round deadline the
 * server judged the worker, which had voted and whose session was gone, dead (the likely order, from the counters).
 * <p>
 * Played over UDP loopback at a sharded topology's vote ports, with the worker's real exchange and its own
 * {@link SliceOwners}, on a clock that stands still one silence after the death (the vote publication loses its
 * connection on the media driver's own clock). Three ranks on one host, each serving its own slice; the worker is rank 0.
 * In round 0 it holds slice 0's and slice 2's results when rank 1 dies; awaiting slice 1, it finds rank 1 dead, and the
 * rule moves slice 1 to rank 2, whose fresh server on the same port hears the worker's HELLO on the session the dead
 * server had. Before the change, the HELLO came on a new session.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SameHostMoveTest {
    private static final int JOB = 63;
    private static final int WORKERS = 3;
    private static final int CHUNK_WORDS = 20;
    private static final long SPLIT = 2L * CHUNK_WORDS * 64;
    private static final long PARAMS = 3 * SPLIT;

    private PlayedServer slice0;
    private PlayedServer slice1;
    private PlayedServer slice2;
    private PlayedServer moved;
    private AeronVoteExchange worker;
    private final ExecutorService thread = Executors.newSingleThreadExecutor();

    @AfterEach
    void tearDown() throws InterruptedException {
        thread.shutdownNow();
        thread.awaitTermination(10, TimeUnit.SECONDS);
        CloseHelper.closeAll(worker, moved, slice2, slice1, slice0);
    }

    @Test
    void shouldKeepTheVoteSessionWhenASliceMovesToAnotherRankOnTheSameHost() throws Exception {
        final Topology topology = Topology.sharded(List.of("127.0.0.1", "127.0.0.1", "127.0.0.1"), TestPorts.freeUdpPorts(2 * WORKERS));
        slice0 = PlayedServer.launch(0, 0, SPLIT, topology.serverVoteChannel(0, WORKERS), 1961, 1962);
        slice1 = slice0.slice(1, SPLIT, 2 * SPLIT, topology.serverVoteChannel(1, WORKERS), 1963, 1964);
        slice2 = slice0.slice(2, 2 * SPLIT, -1, topology.serverVoteChannel(2, WORKERS), 1965, 1966);
        final StoppableClock clock = new StoppableClock();
        final SliceOwners owners = new SliceOwners(topology, 0, SliceOwners.DEFAULT_SILENCE_NS, (slice, dead) -> {
            throw new AssertionError("rank 0 is named for no slice here, got " + slice);
        });
        final int[] firstSession = {0};
        worker = slice0.connectWith(() -> new AeronVoteExchange(new AeronVoteExchange.Context()
            .aeron(slice0.aeron()).jobId(JOB).workerId(0).workers(WORKERS).paramCount(PARAMS).rule(VoteRule.AVERAGE)
            .chunkWords(CHUNK_WORDS).nanoClock(clock).owners(owners)
            .slices(List.of(slice0.slice(), slice1.slice(), slice2.slice()))),
            hello -> {
                slice0.answer(hello, HelloAckFlyweight.NO_JOIN, JoinNoticeFlyweight.NO_DONOR, null);
                final PlayedServer.Hello toSlice1 = slice1.takeHello();
                firstSession[0] = toSlice1.sessionId();
                slice1.answer(toSlice1, 1);
                slice2.answer(slice2.takeHello(), 2);
            });
        final long[][] raw = NaiveVote.randomVotes(17, WORKERS, PARAMS);
        final long[][] planes = new long[2][(int) (PARAMS >>> 6)];

        // round 0: slices 0's and 2's results come whole, slice 1's not
        worker.submit(0, raw[0], PARAMS);
        final CountDownLatch held = new CountDownLatch(2);
        final Future<RoundResult> round0 = thread.submit(() -> worker.await(0, 600_000, (part, from, to) -> held.countDown()));
        slice0.sendAverageResult(JOB, 0, new ChunkLayout(PARAMS, 0, SPLIT, CHUNK_WORDS), 0b111, planes);
        slice2.sendAverageResult(JOB, 0, new ChunkLayout(PARAMS, 2 * SPLIT, PARAMS, CHUNK_WORDS), 0b111, planes);
        assertTrue(held.await(20, TimeUnit.SECONDS), "the worker holds slice 0's and slice 2's results of round 0");

        // rank 1 dies, and the worker's clock stands still one silence later: the rule moves slice 1 to rank 2
        CloseHelper.closeAll(slice1);
        slice1 = null;
        clock.stopAhead(SliceOwners.DEFAULT_SILENCE_NS + TimeUnit.SECONDS.toNanos(1));
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (owners.owner(1) != 2 && System.nanoTime() - deadline < 0) {
            Thread.sleep(10);
        }
        assertEquals(2, owners.owner(1), "slice 1 moved to rank 2");

        // rank 2's fresh server of slice 1, on the slice's port of the same host
        moved = slice0.slice(1, SPLIT, 2 * SPLIT, topology.serverVoteChannel(1, WORKERS), 1963, 1964);
        final PlayedServer.Hello again = moved.takeHello();
        assertEquals(0, again.workerId());
        assertEquals(0L, again.round());
        assertEquals(firstSession[0], again.sessionId(), "the worker's vote session to slice 1 is the one the dead server had");
        assertFalse(round0.isDone(), "still in round 0: " + (round0.isDone() ? round0 : ""));
    }
}
