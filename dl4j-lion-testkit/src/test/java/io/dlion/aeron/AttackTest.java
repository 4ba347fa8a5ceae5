package io.dlion.aeron;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.aeron.ChannelUri;
import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.aeron.logbuffer.FrameDescriptor;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.ServerCounters;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.HelloAckFlyweight;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.aeron.wire.ResultChunkFlyweight;
import io.dlion.codec.SignEncoding;
import io.dlion.testkit.Await;
import io.dlion.testkit.Frames;
import io.dlion.testkit.GarbageFrames;
import io.dlion.testkit.NaiveVote;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import io.dlion.vote.VoterSet;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A stranger's attacks on a running job over real Aeron UDP loopback: the job (server and workers) on one media driver,
 * the attacker on a driver of its own, as on another host. Every test runs the job's rounds through the attack and
 * asserts that every worker gets, every round, the result of an undisturbed job (the naive vote of the workers' seeded
 * votes: the same Δ every round, hence the same parameters), and that the attack was refused and counted.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AttackTest {
    private static final int N = 3;
    private static final long PARAMS = 1_000_003;
    private static final long SEED = 17;
    private static final byte[] WRONG_SECRET = "not this job's secret, 32 bytes".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] LOOPBACK = {127, 0, 0, 1};

    private final List<AutoCloseable> resources = new ArrayList<>();
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @TempDir
    Path dir;

    @AfterEach
    void tearDown() throws InterruptedException {
        pool.shutdownNow();
        pool.awaitTermination(5, TimeUnit.SECONDS);
        for (int i = resources.size() - 1; i >= 0; i--) {
            CloseHelper.quietClose(resources.get(i));
        }
    }

    /**
     * A process subscribes to the result broadcast (dynamic MDC at the server's port, and a plain listener) and never
     * polls. With dynamic MDC and {@code fc=min} it held the broadcast back once a receiver window (128 KB) of results
     * had gone out; with manual destinations it is never sent a frame. Every round here sends 125 KB of results.
     */
    @Test
    void shouldKeepRoundsGoingWhileAStrangerSubscribesToTheResultsAndNeverPolls() throws Exception {
        final LocalAeronJob job = launch(LocalAeronJob.Transport.UDP, Frames.SECRET, null);
        final List<AeronVoteExchange> workers = connect(job);
        final AeronRuntime attacker = attacker();
        final int controlPort = port(job.resultChannel(0), "control");
        final int resultStream = job.slices().get(0).resultStreamId();
        final Subscription dynamic = attacker.aeron().addSubscription(
            "aeron:udp?endpoint=127.0.0.1:0|control=127.0.0.1:" + controlPort + "|control-mode=dynamic", resultStream);
        final Subscription listener = attacker.aeron().addSubscription(Channels.udpResultsSubscription("127.0.0.1", N), resultStream);
        resources.add(dynamic);
        resources.add(listener);

        rounds(workers, SEED, 0, 30);

        assertEquals(0, dynamic.imageCount(), "the stranger's dynamic subscription was never sent a frame");
        assertEquals(0, listener.imageCount(), "nor its plain listener");
        assertEquals(N, job.serverCounters().resultDestinations().get(), "results go to the job's workers only");
    }

    /**
     * A stranger sets up an image on a worker's result port and publishes forged results of the rounds to come (every
     * sign +1) and a HELLO_ACK it cannot sign. The worker reads none of it and rejects the image.
     */
    @Test
    void shouldRejectAStrangersImageOnAWorkersResultPort() throws Exception {
        final LocalAeronJob job = launch(LocalAeronJob.Transport.UDP, Frames.SECRET, null);
        final List<AeronVoteExchange> workers = connect(job);
        final AeronVoteExchange victim = workers.get(0);
        final AeronRuntime attacker = attacker();
        final ExclusivePublication forger = attacker.aeron().addExclusivePublication(
            "aeron:udp?endpoint=" + victim.resultEndpoint(0) + "|mtu=8k", job.slices().get(0).resultStreamId());
        resources.add(forger);
        Await.awaitConnected(forger);
        int forged = 0;
        for (long round = 0; round < 3; round++) {
            forged += sendForgedResults(forger, round);
        }
        Frames.send(forger, forgedAck());
        forged++;

        rounds(workers, SEED, 0, 3);
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (victim.workerCounters().refusedImages().get() == 0 && System.nanoTime() < deadline) {
            victim.pollIdle();
            Thread.sleep(10);
        }
        rounds(workers, SEED, 3, 6);

        assertEquals(1, victim.workerCounters().refusedImages().get(), "the stranger's image was rejected");
        assertEquals(forged, victim.workerCounters().unprovenFrames().get() + victim.workerCounters().staleResults().get(),
            "every forged frame dropped and counted (the answer to a HELLO never sent as stale)");
        assertEquals(0, victim.workerCounters().rejectedResults().get(), "no frame of the real server refused");
    }

    /** A stranger says HELLO for a live worker id, unsigned and signed with a guessed secret, asking for the results. */
    @Test
    void shouldRefuseAHelloWithoutTheSecretForALiveWorker() throws Exception {
        final LocalAeronJob job = launch(LocalAeronJob.Transport.UDP, Frames.SECRET, null);
        final List<AeronVoteExchange> workers = connect(job);
        rounds(workers, SEED, 0, 1);
        final AeronRuntime attacker = attacker();
        final SliceEndpoint slice = job.slices().get(0);
        final ExclusivePublication impostor = attacker.aeron().addExclusivePublication(slice.voteChannel(), slice.voteStreamId());
        final Subscription results = attacker.aeron().addSubscription(Channels.udpResultsSubscription("127.0.0.1", N), slice.resultStreamId());
        resources.add(impostor);
        resources.add(results);
        Await.awaitConnected(impostor);
        final int port = resolvedPort(results);
        final long now = System.currentTimeMillis();
        Frames.send(impostor, GarbageFrames.hello(1, 1, 1, 0, PARAMS, impostor.sessionId(), LOOPBACK, port, null, now, 1));
        Frames.send(impostor, GarbageFrames.hello(1, 1, 1, 0, PARAMS, impostor.sessionId(), LOOPBACK, port, WRONG_SECRET, now, 2));
        final ServerCounters counters = job.serverCounters();
        Await.awaitValue(() -> counters.rejected(RejectReason.BAD_CREDENTIALS).get(), 2, "both HELLOs refused");

        final List<List<Long>> masks = rounds(workers, SEED, 1, 4);
        assertEquals(0b111L, masks.get(1).get(2), "worker 1 still votes");
        assertEquals(0, results.imageCount(), "the impostor is never sent a result");
        assertEquals(N, counters.resultDestinations().get());
        assertEquals(N, counters.workersJoined().get(), "only the workers' own HELLOs accepted");
    }

    /**
     * An eavesdropper copies a worker's HELLO and vote frames off the wire (here: a spy on the workers' driver) and
     * sends them again from its own session: the HELLO names another session and is not newer than the last, the votes
     * come from a session no HELLO bound.
     */
    @Test
    void shouldRefuseReplayedHelloAndVoteFrames() throws Exception {
        final LocalAeronJob job = launch(LocalAeronJob.Transport.UDP, Frames.SECRET, null);
        final SliceEndpoint slice = job.slices().get(0);
        final Subscription spy = job.aeron().addSubscription("aeron-spy:" + slice.voteChannel(), slice.voteStreamId());
        resources.add(spy);
        final List<AeronVoteExchange> workers = connect(job);
        rounds(workers, SEED, 0, 1);
        final List<byte[]> hellos = new ArrayList<>();
        final List<byte[]> votes = new ArrayList<>();
        final MessageHeaderFlyweight header = new MessageHeaderFlyweight();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        final ChunkLayout layout = new ChunkLayout(PARAMS, 0, PARAMS, Configuration.chunkWords());
        while (votes.size() < layout.chunkCount() && System.nanoTime() < deadline) {
            spy.poll((buffer, offset, length, h) -> {
                header.wrapForRead(buffer, offset);
                if (h.flags() == FrameDescriptor.UNFRAGMENTED && header.workerId() == 1) {
                    final byte[] copy = new byte[length];
                    buffer.getBytes(offset, copy);
                    (header.type() == MessageType.HELLO ? hellos : votes).add(copy);
                }
            }, 100);
        }
        spy.close();
        assertTrue(!hellos.isEmpty() && votes.size() == layout.chunkCount(), "captured worker 1's HELLO and its round-0 vote");

        final AeronRuntime attacker = attacker();
        final ExclusivePublication replayer = attacker.aeron().addExclusivePublication(slice.voteChannel(), slice.voteStreamId());
        resources.add(replayer);
        Await.awaitConnected(replayer);
        for (final byte[] hello : hellos) {
            Frames.send(replayer, hello);
        }
        for (final byte[] vote : votes) {
            Frames.send(replayer, vote);
            Frames.send(replayer, edit(vote, 1));
        }
        final ServerCounters counters = job.serverCounters();
        Await.awaitValue(() -> counters.rejected(RejectReason.REPLAYED_HELLO).get(), hellos.size(), "replayed HELLOs");
        Await.awaitValue(() -> counters.rejected(RejectReason.UNAUTHENTICATED).get(), 2L * votes.size(), "replayed vote frames");

        final List<List<Long>> masks = rounds(workers, SEED, 1, 4);
        assertEquals(0b111L, masks.get(1).get(0), "worker 1 still votes, from its own session only");
        assertEquals(N, counters.workersJoined().get());
    }

    /**
     * Two jobs with the same job id and the default stream ids on one media driver, each with its own secret. Over IPC
     * every frame of one reaches the other: HELLOs are refused, votes are unauthenticated, results come from an image
     * that never proves itself. Over UDP nothing crosses: results go only to the destinations each server added.
     */
    @Test
    void shouldRunTwoJobsOnOneDriverWithDefaultStreamIdsUndisturbed() throws Exception {
        final AeronRuntime driver = AeronRuntime.launch(new AeronRuntime.Context().aeronDirectoryName(dir.resolve("driver").toString()));
        resources.add(driver);
        final byte[] otherSecret = Arrays.copyOf(WRONG_SECRET, WRONG_SECRET.length);
        for (final LocalAeronJob.Transport transport : LocalAeronJob.Transport.values()) {
            final LocalAeronJob a = launch(transport, Frames.SECRET, driver.aeronDirectoryName());
            final LocalAeronJob b = launch(transport, otherSecret, driver.aeronDirectoryName());
            assertEquals(a.slices().get(0).voteStreamId(), b.slices().get(0).voteStreamId(), "the same stream ids");
            final Future<List<AeronVoteExchange>> connectingA = pool.submit(() -> connect(a));
            final List<AeronVoteExchange> workersB = connect(b);
            final List<AeronVoteExchange> workersA = connectingA.get(60, TimeUnit.SECONDS);
            // each job closes its exchanges once its rounds are done, as a job does: over IPC an open subscription
            // that no longer polls holds back every publication on its stream, the other job's results included
            final Future<Long> jobA = pool.submit(() -> roundsThenClose(workersA, SEED));
            roundsThenClose(workersB, SEED + 1);
            final long unproven = jobA.get(60, TimeUnit.SECONDS);

            final ServerCounters serverA = a.serverCounters();
            if (transport == LocalAeronJob.Transport.IPC) {
                assertTrue(serverA.rejected(RejectReason.BAD_CREDENTIALS).get() >= N, "the other job's HELLOs refused: "
                    + serverA.rejected(RejectReason.BAD_CREDENTIALS).get());
                assertTrue(serverA.rejected(RejectReason.UNAUTHENTICATED).get() > 0, "the other job's votes refused");
                assertTrue(unproven > 0, "the other job's results dropped");
            } else {
                assertEquals(0, serverA.rejectedTotal(), "over UDP nothing of the other job arrives");
                assertEquals(0, unproven);
            }
            b.close();
            a.close();
        }
    }

    /** @return the result frames of unproven images the workers dropped, read before they are closed. */
    private long roundsThenClose(final List<AeronVoteExchange> workers, final long seed) throws Exception {
        rounds(workers, seed, 0, 8);
        long unproven = 0;
        for (final AeronVoteExchange w : workers) {
            unproven += w.workerCounters().unprovenFrames().get();
        }
        CloseHelper.closeAll(workers);
        return unproven;
    }

    private LocalAeronJob launch(final LocalAeronJob.Transport transport, final byte[] secret, final String sharedDriver) {
        final LocalAeronJob.Context ctx = new LocalAeronJob.Context().jobId(1).workers(N).paramCount(PARAMS).rule(VoteRule.MAJORITY)
            .transport(transport).secret(secret).roundTimeoutNs(TimeUnit.SECONDS.toNanos(30)).connectTimeoutNs(TimeUnit.SECONDS.toNanos(20));
        if (sharedDriver != null) {
            ctx.embeddedDriver(false).aeronDirectoryName(sharedDriver);
        }
        final LocalAeronJob job = LocalAeronJob.launch(ctx);
        resources.add(job);
        return job;
    }

    private static List<AeronVoteExchange> connect(final LocalAeronJob job) {
        final List<AeronVoteExchange> workers = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            workers.add((AeronVoteExchange)job.exchange(i));
        }
        return workers;
    }

    private AeronRuntime attacker() {
        final AeronRuntime runtime = AeronRuntime.launch(new AeronRuntime.Context());
        resources.add(runtime);
        return runtime;
    }

    /**
     * Run rounds {@code [from, to)} on every worker, each on its own thread, and check every result against the naive
     * vote of the workers' seeded votes.
     *
     * @return per worker, the voter mask of each round.
     */
    private List<List<Long>> rounds(final List<AeronVoteExchange> workers, final long seed, final int from, final int to)
        throws Exception {
        final List<Future<List<Long>>> digests = new ArrayList<>();
        final List<List<Long>> masks = new ArrayList<>();
        for (int w = 0; w < workers.size(); w++) {
            final AeronVoteExchange worker = workers.get(w);
            final int id = w;
            final List<Long> kept = new ArrayList<>();
            masks.add(kept);
            digests.add(pool.submit(() -> {
                final List<Long> out = new ArrayList<>();
                for (int r = from; r < to; r++) {
                    worker.submit(r, SyntheticVotes.vote(seed, r, id, PARAMS), PARAMS);
                    final RoundResult result = worker.await(r, 20_000);
                    out.add(SyntheticVotes.digest(result));
                    kept.add(result.voterSet().word(0));
                }
                return out;
            }));
        }
        final List<Long> expected = new ArrayList<>();
        for (int r = from; r < to; r++) {
            final long[][] votes = new long[workers.size()][];
            for (int w = 0; w < votes.length; w++) {
                votes[w] = SyntheticVotes.vote(seed, r, w, PARAMS);
            }
            expected.add(SyntheticVotes.digest(NaiveVote.reference(r, votes, PARAMS, VoteRule.MAJORITY)));
        }
        for (int w = 0; w < workers.size(); w++) {
            assertEquals(expected, digests.get(w).get(60, TimeUnit.SECONDS), "worker " + w + ": every round the undisturbed job's result");
        }
        return masks;
    }

    /** Every sign +1 for the whole vector, as result frames of a round, as a forger would send them. */
    private static int sendForgedResults(final ExclusivePublication forger, final long round) {
        final ChunkLayout layout = new ChunkLayout(PARAMS, 0, PARAMS, Configuration.chunkWords());
        final long[] ones = new long[(int)((PARAMS + 63) >>> 6)];
        Arrays.fill(ones, -1L);
        int frames = 0;
        for (int c = 0; c < layout.chunkCount(); c++) {
            final int wordOffset = layout.wordOffset(c);
            final int words = layout.wordsOf(c);
            final byte[] frame = new byte[ResultChunkFlyweight.length(1, SignEncoding.INSTANCE, PARAMS, wordOffset, wordOffset + words)];
            new ResultChunkFlyweight().wrap(new UnsafeBuffer(frame), 0).encode(Encoding.SIGN_BITS, 1, round, wordOffset, words, 0, VoterSet.all(N),
                SignEncoding.INSTANCE, new long[][] {ones}, PARAMS, wordOffset);
            Frames.send(forger, frame);
            frames++;
        }
        return frames;
    }

    /** A HELLO_ACK for worker 0: the stranger knows no nonce of the worker's and not the secret. */
    private static byte[] forgedAck() {
        final byte[] ack = new byte[HelloAckFlyweight.SIGNED_LENGTH];
        new HelloAckFlyweight().wrap(new UnsafeBuffer(ack), 0).encode(1, HelloAckFlyweight.NO_JOIN, 0, JoinNoticeFlyweight.NO_DONOR, 0, 0,
            PARAMS, 42, 7, new HelloCredentials(WRONG_SECRET));
        return ack;
    }

    private static byte[] edit(final byte[] frame, final long round) {
        final byte[] copy = frame.clone();
        new MessageHeaderFlyweight().wrap(new UnsafeBuffer(copy), 0).round(round);
        return copy;
    }

    private static int port(final String channel, final String param) {
        final String value = ChannelUri.parse(channel).get(param);
        return Integer.parseInt(value.substring(value.lastIndexOf(':') + 1));
    }

    private static int resolvedPort(final Subscription subscription) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        String endpoint;
        while ((endpoint = subscription.resolvedEndpoint()) == null) {
            assertTrue(System.nanoTime() < deadline, "endpoint resolved");
            Thread.sleep(1);
        }
        return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }
}
