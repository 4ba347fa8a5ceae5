package io.dlion.aeron;

import java.util.List;
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
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A worker in round r that holds slice 0's result of round r, while slice 1's is still to come, when slice 0's server
 * restarts (or the slice moves to a fresh server): its HELLO to the new server names round r + 1, the round it is in as
 * far as that slice goes. A chaos soak (seed 3103) found what naming r did: the other worker going on, whose process hosted
 * the new server, had named r + 1, so the fresh server took this one for a worker that lost the dead server's last result
 * and told it to rejoin, which left the job below its quorum. Played with two hand-made servers on one driver, so the
 * frames come in the order chosen here.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RestartedSliceHelloTest {
    private static final int JOB = 59;
    private static final int WORKERS = 3;
    private static final int CHUNK_WORDS = 20;
    private static final long SPLIT = 2L * CHUNK_WORDS * 64;
    private static final long PARAMS = 2 * SPLIT;

    private PlayedServer slice0;
    private PlayedServer slice1;
    private AeronVoteExchange worker;
    private final ExecutorService thread = Executors.newSingleThreadExecutor();

    @AfterEach
    void tearDown() throws InterruptedException {
        thread.shutdownNow();
        thread.awaitTermination(5, TimeUnit.SECONDS);
        CloseHelper.closeAll(worker, slice1, slice0);
    }

    @Test
    void shouldNameTheNextRoundToARestartedServerOfASliceWhoseResultItHolds() throws Exception {
        slice0 = PlayedServer.launch(1921, 1922);
        slice1 = slice0.slice(1, SPLIT, -1, 1923, 1924);
        worker = slice0.connectWith(() -> new AeronVoteExchange(new AeronVoteExchange.Context()
            .aeron(slice0.aeron()).jobId(JOB).workerId(0).workers(WORKERS).paramCount(PARAMS).rule(VoteRule.AVERAGE)
            .chunkWords(CHUNK_WORDS).slices(List.of(new SliceEndpoint(0, 0, SPLIT, Channels.ipc(), 1921, Channels.ipc(), 1922), slice1.slice()))),
            hello -> {
                slice0.answer(hello, HelloAckFlyweight.NO_JOIN, JoinNoticeFlyweight.NO_DONOR, null);
                slice1.answer(slice1.takeHello(), HelloAckFlyweight.NO_JOIN, JoinNoticeFlyweight.NO_DONOR, null);
            });
        final ChunkLayout[] layouts = {new ChunkLayout(PARAMS, 0, SPLIT, CHUNK_WORDS), new ChunkLayout(PARAMS, SPLIT, PARAMS, CHUNK_WORDS)};
        final long[][] raw = NaiveVote.randomVotes(9, WORKERS, PARAMS);
        final long[][] planes = new long[2][(int) (PARAMS >>> 6)];

        worker.submit(0, raw[0], PARAMS);
        slice0.sendAverageResult(JOB, 0, layouts[0], 0b111, planes);
        slice1.sendAverageResult(JOB, 0, layouts[1], 0b111, planes);
        assertEquals(WORKERS, worker.await(0, 10_000).voters());

        // round 1: slice 0's result comes whole, slice 1's not yet; then slice 0's server restarts
        worker.submit(1, raw[0], PARAMS);
        final Future<RoundResult> round1 = thread.submit(() -> worker.await(1, 60_000));
        slice0.sendAverageResult(JOB, 1, layouts[0], 0b111, planes);
        slice0.restart();
        final PlayedServer.Hello hello = slice0.takeHello();
        assertEquals(0, hello.workerId());
        assertEquals(0, hello.slice());
        assertEquals(2, hello.round(), "the worker holds slice 0's result of round 1: to slice 0's new server it is at round 2");

        // the fresh server answers; slice 1's result of round 1 comes, and the round completes without a rejoin
        slice0.answer(hello, HelloAckFlyweight.NO_JOIN, JoinNoticeFlyweight.NO_DONOR, null);
        slice1.sendAverageResult(JOB, 1, layouts[1], 0b111, planes);
        assertEquals(WORKERS, round1.get(15, TimeUnit.SECONDS).voters());
        assertEquals(0, worker.workerCounters().rejectedResults().get(), "no frame rejected");

        // round 2 runs on the restarted server of slice 0
        worker.submit(2, raw[0], PARAMS);
        slice0.sendAverageResult(JOB, 2, layouts[0], 0b111, planes);
        slice1.sendAverageResult(JOB, 2, layouts[1], 0b111, planes);
        assertEquals(WORKERS, worker.await(2, 10_000).voters());
    }
}
