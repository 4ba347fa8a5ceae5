package io.dlion.aeron;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.ServerCounters;
import io.dlion.vote.RoundResult;
import io.dlion.exchange.VoteExchange;
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
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Who may vote: a HELLO needs the job's HMAC; workers with a wrong or no secret, or of another job, cannot vote. */
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
            final AeronVoteExchange wrongSecret = pool.submit(() -> stranger(job, JOB, "a guessed secret of 32 bytes!!!!".getBytes(StandardCharsets.US_ASCII)))
                .get(10, TimeUnit.SECONDS);
            final AeronVoteExchange noSecret = pool.submit(() -> stranger(job, JOB, null)).get(10, TimeUnit.SECONDS);
            final AeronVoteExchange otherJob = pool.submit(() -> stranger(job, JOB + 1, Frames.SECRET)).get(10, TimeUnit.SECONDS);
            try {
                final ServerCounters counters = job.serverCounters();
                Await.awaitValue(() -> counters.rejected(RejectReason.BAD_CREDENTIALS).get(), 2, "HELLOs with a wrong or no HMAC");
                Await.awaitValue(() -> counters.rejected(RejectReason.FOREIGN_JOB).get(), 1, "HELLO of another job");

                final long[] memberVote = SyntheticVotes.vote(1, 0, 0, PARAMS);
                final Future<RoundResult> result = pool.submit(() -> {
                    member.submit(0, memberVote, PARAMS);
                    return member.await(0, 10_000);
                });
                final Future<RoundResult> eavesdropped = pool.submit(() -> {
                    wrongSecret.submit(0, new long[(int)((PARAMS + 63) >>> 6)], PARAMS);
                    return wrongSecret.await(0, 10_000);
                });
                pool.submit(() -> {
                    noSecret.submit(0, new long[(int)((PARAMS + 63) >>> 6)], PARAMS);
                    otherJob.submit(0, new long[(int)((PARAMS + 63) >>> 6)], PARAMS);
                    return null;
                }).get(10, TimeUnit.SECONDS);

                final RoundResult applied = result.get(10, TimeUnit.SECONDS);
                assertEquals(0b01L, applied.voterMask(), "only the member voted");
                NaiveVote.assertMatches(new long[][] {memberVote}, PARAMS, VoteRule.MAJORITY, applied);
                assertEquals(SyntheticVotes.digest(applied), SyntheticVotes.digest(eavesdropped.get(10, TimeUnit.SECONDS)),
                    "results are not confidential: a stranger subscribed to the result stream reads them");
                Await.awaitValue(() -> counters.rejected(RejectReason.UNAUTHENTICATED).get(), 2, "the strangers' vote chunks");
                Await.awaitValue(() -> counters.rejected(RejectReason.FOREIGN_JOB).get(), 2, "HELLO and vote of another job");
                assertEquals(1, counters.workersJoined().get(), "only the member's HELLO was accepted");
            } finally {
                CloseHelper.closeAll(wrongSecret, noSecret, otherJob);
            }

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
            assertEquals(0b11L, a.get(10, TimeUnit.SECONDS).voterMask(), "a member with the secret votes");
            assertEquals(SyntheticVotes.digest(a.get()), SyntheticVotes.digest(b.get(10, TimeUnit.SECONDS)));
        }
    }

    @Test
    void shouldRefuseShortSecrets() {
        assertThrows(IllegalArgumentException.class, () -> new LocalAeronJob.Context().jobId(1).workers(1).paramCount(10)
            .secret(new byte[15]).conclude());
    }

    private static AeronVoteExchange stranger(final LocalAeronJob job, final int jobId, final byte[] secret) {
        return new AeronVoteExchange(new AeronVoteExchange.Context().aeron(job.aeron()).jobId(jobId).workerId(1).workers(2)
            .paramCount(PARAMS).shards(job.shards()).secret(secret));
    }
}
