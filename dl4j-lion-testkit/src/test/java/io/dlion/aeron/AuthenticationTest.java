package io.dlion.aeron;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.ServerCounters;
import io.aeron.ExclusivePublication;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.exchange.VoteExchange;
import io.dlion.testkit.Await;
import io.dlion.testkit.Frames;
import io.dlion.testkit.GarbageFrames;
import io.dlion.testkit.NaiveVote;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Who may vote: a HELLO needs the job's HMAC; workers with a wrong or no secret, or of another job, are never answered
 * (so never connect), and votes from a session no accepted HELLO bound are refused.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AuthenticationTest {
    private static final int JOB = 21;
    private static final long PARAMS = 30_011;

    private ExecutorService pool;

    @AfterEach
    void tearDown() throws InterruptedException {
        if (pool != null) {
            pool.shutdownNow();
            pool.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldRefuseVotesOfWorkersWithoutTheSecretOrOfAnotherJob() throws Exception {
        try (LocalAeronJob job = LocalAeronJob.launch(new LocalAeronJob.Context().jobId(JOB).workers(2).paramCount(PARAMS).minVoters(1)
            .secret(Frames.SECRET).roundTimeoutNs(TimeUnit.MILLISECONDS.toNanos(300)))) {
            pool = Executors.newFixedThreadPool(4);
            final VoteExchange member = pool.submit(() -> job.exchange(0)).get(10, TimeUnit.SECONDS);
            final List<Future<String>> strangers = List.of(
                pool.submit(() -> connectFails(job, JOB, "a guessed secret of 32 bytes!!!!".getBytes(StandardCharsets.US_ASCII))),
                pool.submit(() -> connectFails(job, JOB, null)),
                pool.submit(() -> connectFails(job, JOB + 1, Frames.SECRET)));
            for (final Future<String> stranger : strangers) {
                assertTrue(stranger.get(20, TimeUnit.SECONDS).contains("server proven: false"), "a stranger is never answered");
            }
            final ServerCounters counters = job.serverCounters();
            assertTrue(counters.rejected(RejectReason.BAD_CREDENTIALS).get() >= 2, "HELLOs with a wrong or no HMAC");
            assertTrue(counters.rejected(RejectReason.FOREIGN_JOB).get() >= 1, "HELLOs of another job");
            assertEquals(1, counters.workersJoined().get(), "only the member's HELLO was accepted");
            assertEquals(1, counters.helloAnswers().get(), "only the member was answered");

            final SliceEndpoint slice = job.slices().get(0);
            try (ExclusivePublication raw = job.aeron().addExclusivePublication(slice.voteChannel(), slice.voteStreamId())) {
                Await.awaitConnected(raw);
                final ChunkLayout layout = new ChunkLayout(PARAMS, 0, PARAMS, Configuration.chunkWords());
                Frames.send(raw, GarbageFrames.vote(JOB, 0, 1, 0, layout, 0, new long[(int)((PARAMS + 63) >>> 6)]));
                Await.awaitValue(() -> counters.rejected(RejectReason.UNAUTHENTICATED).get(), 1, "a stranger's vote for worker 1");
            }
            final long[] memberVote = SyntheticVotes.vote(1, 0, 0, PARAMS);
            member.submit(0, memberVote, PARAMS);
            final RoundResult applied = member.await(0, 10_000);
            assertEquals(0b01L, applied.voterSet().word(0), "only the member voted");
            NaiveVote.assertMatches(new long[][] {memberVote}, PARAMS, VoteRule.MAJORITY, applied);

            final VoteExchange second = pool.submit(() -> job.exchange(1, 1)).get(10, TimeUnit.SECONDS);
            // the round must not open before the server has taken the new member's HELLO (a race under load)
            Await.awaitValue(() -> job.serverCounters().workersJoined().get(), 2, "the second member's HELLO");
            final Future<RoundResult> a = pool.submit(() -> {
                member.submit(1, SyntheticVotes.vote(1, 1, 0, PARAMS), PARAMS);
                return member.await(1, 10_000);
            });
            final Future<RoundResult> b = pool.submit(() -> {
                second.submit(1, SyntheticVotes.vote(1, 1, 1, PARAMS), PARAMS);
                return second.await(1, 10_000);
            });
            assertEquals(0b11L, a.get(10, TimeUnit.SECONDS).voterSet().word(0), "a member with the secret votes");
            assertEquals(SyntheticVotes.digest(a.get()), SyntheticVotes.digest(b.get(10, TimeUnit.SECONDS)));
        }
    }

    @Test
    void shouldRefuseShortSecrets() {
        assertThrows(IllegalArgumentException.class, () -> new LocalAeronJob.Context().jobId(1).workers(1).paramCount(10)
            .secret(new byte[15]).conclude());
    }

    /** A worker with a wrong secret, no secret or another job id: its HELLOs are never answered, so it never connects. */
    private static String connectFails(final LocalAeronJob job, final int jobId, final byte[] secret) {
        final IllegalStateException refused = assertThrows(IllegalStateException.class, () -> new AeronVoteExchange(
            new AeronVoteExchange.Context().aeron(job.aeron()).jobId(jobId).workerId(1).workers(2).paramCount(PARAMS).slices(job.slices())
                .secret(secret).connectTimeoutNs(TimeUnit.SECONDS.toNanos(2))));
        return refused.getMessage();
    }
}
