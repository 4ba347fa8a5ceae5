package io.dlion.aeron;

import java.util.List;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.client.AeronHandOver;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.client.RejoinRequiredException;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.dist.JobRun;
import io.dlion.exchange.JoinNotice;
import io.dlion.testkit.PlayedServer;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A joined worker waiting for its donor's hand-over stops waiting when the server says that donor is gone: a notice of
 * its own join, at the round it joined at, naming no donor, from the slice that named the donor. A chaos soak's joining
 * workers waited out the hand-over's 30 s begin timeout each time their donor was killed after it was named, and came
 * back a minute late. Here the real exchange and the real hand-over join a played server, which then sends that notice:
 * the hand-over's wait (pumping the exchange, as {@code DLionJob} does) must end with a {@link RejoinRequiredException}
 * long before its begin timeout. A late repeat of the join notice naming the same donor changes nothing, and neither
 * does the notice once the worker has voted (it has the parameters by then).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LostDonorTest {
    private static final int JOB = 75;
    private static final int WORKERS = 3;
    private static final int JOINER = 2;
    private static final int DONOR = 0;
    private static final long PARAMS = 1_000;
    private static final long FIRST = 9;
    private static final long BEGIN_TIMEOUT_MS = 30_000;

    private PlayedServer played;
    private AeronVoteExchange worker;
    private AeronHandOver handOver;

    @AfterEach
    void tearDown() {
        CloseHelper.closeAll(handOver, worker, played);
    }

    @Test
    void shouldStopWaitingForAHandOverWhenTheServerSaysTheDonorIsGone() throws Exception {
        played = PlayedServer.launch(1975, 1976);
        handOver = new AeronHandOver(new AeronHandOver.Context().aeron(played.aeron()).jobId(JOB).workers(WORKERS).workerId(JOINER)
            .run(new JobRun(JOB, "run-a")).slice(played.slice()).streamId(1901).join(true).beginTimeoutMs(BEGIN_TIMEOUT_MS));
        final JoinNotice joined = join();
        assertEquals(new JoinNotice(JOINER, FIRST, DONOR), joined);

        // a late repeat of the same join is no news
        played.joinNotice(JOB, JOINER, FIRST, DONOR);
        final long quiet = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
        while (System.nanoTime() - quiet < 0) {
            worker.pollIdle();
        }

        // the donor dies: the server announces the join again naming no donor, while the worker waits for the hand-over
        played.joinNotice(JOB, JOINER, FIRST, JoinNoticeFlyweight.NO_DONOR);
        final long start = System.nanoTime();
        final RejoinRequiredException ex = assertThrows(RejoinRequiredException.class,
            () -> handOver.take(joined, 60_000, worker::pollIdle));
        final long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(waitedMs < BEGIN_TIMEOUT_MS / 2, "the wait ended on the server's word, not at the begin timeout: " + waitedMs + " ms");
        assertEquals(FIRST, ex.round());
    }

    @Test
    void shouldIgnoreALostDonorOnceItHasVoted() throws Exception {
        played = PlayedServer.launch(1977, 1978);
        final JoinNotice joined = join();
        assertEquals(FIRST, joined.round());
        worker.submit(FIRST, new long[(int) ((PARAMS + 63) >>> 6)], PARAMS); // it took the parameters and votes
        played.joinNotice(JOB, JOINER, FIRST, JoinNoticeFlyweight.NO_DONOR);
        // the notice is read with the round's frames: nothing but the round's own result may end the wait, and none comes
        final java.util.concurrent.TimeoutException timeout = assertThrows(java.util.concurrent.TimeoutException.class,
            () -> worker.await(FIRST, 500));
        assertFalse(timeout.getMessage().contains("rejoin"), timeout.getMessage());
    }

    /** Connect a joining worker and answer its HELLO with its first round and donor. */
    private JoinNotice join() throws Exception {
        worker = played.connectWith(() -> new AeronVoteExchange(new AeronVoteExchange.Context()
                .aeron(played.aeron()).jobId(JOB).workerId(JOINER).workers(WORKERS).paramCount(PARAMS).rule(VoteRule.MAJORITY)
                .join(true).slices(List.of(played.slice()))),
            hello -> played.answer(hello, FIRST, DONOR, null));
        return worker.awaitJoin(10_000);
    }
}
