package io.dlion.aeron;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.aeron.ExclusivePublication;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.server.ServerCounters;
import io.dlion.cli.GarbageCommand;
import io.dlion.testkit.Await;
import io.dlion.testkit.Frames;
import io.dlion.testkit.GarbageFrames;
import io.dlion.testkit.NaiveVote;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link GarbageFrames} against a real server with a secret: every frame is rejected under
 * {@link GarbageFrames#GARBAGE_REASONS}, exactly once, while real workers' rounds still equal the naive vote; and the
 * {@link GarbageCommand} command that sends them.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GarbageFramesTest {
    private static final int JOB = 12;
    private static final int N = 3;
    private static final long PARAMS = 20_003;
    private static final int CHUNK_WORDS = 100;
    private static final int VOTE_STREAM = 1711;
    private static final int RESULT_STREAM = 1712;
    private static final String IPC = Channels.ipc();

    private AeronRuntime runtime;
    private AggregationServer launched;
    private AggregationServer unscheduledServer;
    private final List<AeronVoteExchange> workers = new ArrayList<>();
    private final AtomicReference<Throwable> serverError = new AtomicReference<>();
    private ExecutorService pool;

    @AfterEach
    void tearDown() throws InterruptedException {
        if (pool != null) {
            pool.shutdownNow();
            pool.awaitTermination(5, TimeUnit.SECONDS);
        }
        CloseHelper.closeAll(workers);
        CloseHelper.closeAll(launched, unscheduledServer, runtime);
        assertNull(serverError.get(), "server agent error");
    }

    @Test
    void shouldRejectEveryGarbageFrameUnderAGarbageReasonWhileTheRoundsVoteCorrectly() throws Exception {
        final AggregationServer server = startServer();
        final ExclusivePublication injector = runtime.aeron().addExclusivePublication(IPC, VOTE_STREAM);
        Await.awaitConnected(injector);
        final GarbageFrames garbage = new GarbageFrames(jobContext(2_026).maxFrameLength(injector.maxPayloadLength())
            .senderSessionId(injector.sessionId()));
        long sent = 0;
        // garbage before the workers' HELLOs too: a garbage HELLO that bound a worker id would show in workersJoined
        for (int f = 0; f < 2_000; f++) {
            Frames.send(injector, garbage.next());
            sent++;
        }
        pool = Executors.newFixedThreadPool(N);
        final List<Future<AeronVoteExchange>> connecting = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            final int id = i;
            connecting.add(pool.submit(() -> new AeronVoteExchange(new AeronVoteExchange.Context()
                .aeron(runtime.aeron()).jobId(JOB).workerId(id).workers(N).paramCount(PARAMS).secret(Frames.SECRET).chunkWords(CHUNK_WORDS)
                .slices(List.of(new SliceEndpoint(0, 0, -1, IPC, VOTE_STREAM, IPC, RESULT_STREAM))))));
        }
        for (final Future<AeronVoteExchange> future : connecting) {
            workers.add(future.get(15, TimeUnit.SECONDS));
        }

        final int rounds = 3;
        for (int r = 0; r < rounds; r++) {
            final long[][] votes = NaiveVote.randomVotes(700 + r, N, PARAMS);
            final List<Future<RoundResult>> results = new ArrayList<>();
            final long round = r;
            for (int i = 0; i < N; i++) {
                final AeronVoteExchange worker = workers.get(i);
                final long[] vote = votes[i];
                results.add(pool.submit(() -> {
                    worker.submit(round, vote, PARAMS);
                    return worker.await(round, 20_000);
                }));
            }
            for (int f = 0; f < 5_000; f++) {
                Frames.send(injector, garbage.next());
                sent++;
            }
            for (final Future<RoundResult> result : results) {
                NaiveVote.assertMatches(votes, PARAMS, VoteRule.MAJORITY, result.get(30, TimeUnit.SECONDS));
            }
        }
        final ServerCounters counters = server.counters();
        Await.awaitValue(() -> garbageRejections(counters), sent, "rejections under GARBAGE_REASONS == frames sent");
        assertOnlyGarbageReasons(counters);
        assertEquals(rounds, counters.rounds().get(), "rounds");
        assertEquals(N, counters.workersJoined().get(), "only the real workers' HELLOs were accepted");
        System.out.println("GarbageFramesTest: " + sent + " garbage frames, rejected: " + breakdown(counters));
    }

    @Test
    void shouldRejectGarbageFedStraightToTheDecoderNeverHoldingOneBack() {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        unscheduledServer = new AggregationServer(serverContext());
        final AggregationServer server = unscheduledServer;
        // every worker bound to its own session, and round 0 open with worker 0's first chunk in: the round checks are live
        for (int w = 0; w < N; w++) {
            assertEquals(ControlledFragmentHandler.Action.CONTINUE, feed(server, new UnsafeBuffer(GarbageFrames.hello(JOB, 0, w, 0, PARAMS, 100 + w,
                Frames.SECRET, System.currentTimeMillis(), w)), 100 + w));
        }
        final long[] vote = NaiveVote.randomVotes(5, 1, PARAMS)[0];
        feed(server, new UnsafeBuffer(GarbageFrames.vote(JOB, 0, 0, 0, server.layout(), 0, vote)), 100);
        assertEquals(0, server.counters().rejectedTotal(), "the real frames are accepted");
        assertEquals(0, server.currentRound(), "round 0 open");

        final GarbageFrames garbage = new GarbageFrames(jobContext(77).maxRound(3).senderSessionId(999));
        final int frames = 100_000;
        for (int f = 0; f < frames; f++) {
            assertEquals(ControlledFragmentHandler.Action.CONTINUE, feed(server, garbage.next(), 999), "frame " + f);
        }
        assertEquals(frames, garbageRejections(server.counters()), "rejections under GARBAGE_REASONS == frames fed");
        assertOnlyGarbageReasons(server.counters());
        assertEquals(N, server.counters().workersJoined().get(), "no garbage HELLO accepted");
        assertEquals(0, server.counters().chunksVoted().get(), "no garbage vote completed a chunk");
        System.out.println("GarbageFramesTest (decoder): " + frames + " garbage frames, rejected: " + breakdown(server.counters()));
    }

    @Test
    void shouldLetGarbageTakeOverWorkerIdsWhenTheServerHasNoSecretWhichIsWhyTheSenderRefusesToRun() {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        unscheduledServer = new AggregationServer(serverContext().secret(null));
        final GarbageFrames garbage = new GarbageFrames(jobContext(3).senderSessionId(999));
        for (int f = 0; f < 10_000; f++) {
            feed(unscheduledServer, garbage.next(), 999);
        }
        assertTrue(!unscheduledServer.joinedWorkers().isEmpty(), "a mutated HELLO bound a worker id to the garbage session");
    }

    @Test
    void shouldClassifyEveryRejectReasonAsGarbageOrReachableOnlyWhenAuthenticated() {
        final EnumSet<RejectReason> authenticatedOnly = EnumSet.of(RejectReason.STALE_ROUND, RejectReason.FUTURE_ROUND, RejectReason.DUPLICATE,
            RejectReason.LATE, RejectReason.FRAME_MAC_MISMATCH);
        for (final RejectReason reason : RejectReason.values()) {
            assertTrue(GarbageFrames.GARBAGE_REASONS.contains(reason) != authenticatedOnly.contains(reason),
                reason.label() + " must be in exactly one of GARBAGE_REASONS and the authenticated-only reasons");
        }
        assertThrows(UnsupportedOperationException.class, () -> GarbageFrames.GARBAGE_REASONS.add(RejectReason.LATE));
    }

    @Test
    void shouldGiveTheSameFramesForTheSameSeedAndClock() {
        final GarbageFrames a = new GarbageFrames(jobContext(5).epochClock(() -> 1_700_000_000_000L));
        final GarbageFrames b = new GarbageFrames(jobContext(5).epochClock(() -> 1_700_000_000_000L));
        final GarbageFrames c = new GarbageFrames(jobContext(6).epochClock(() -> 1_700_000_000_000L));
        boolean differs = false;
        for (int f = 0; f < 2_000; f++) {
            final byte[] fromA = bytes(a.next());
            assertArrayEquals(fromA, bytes(b.next()), "frame " + f);
            assertTrue(fromA.length >= 1 && fromA.length <= a.maxFrameLength(), "length " + fromA.length);
            differs |= !Arrays.equals(fromA, bytes(c.next()));
        }
        assertTrue(differs, "another seed gives other frames");
    }

    @Test
    void shouldNameTheFieldWhenTheJobCannotBeImitated() {
        final IllegalArgumentException tooShort = assertThrows(IllegalArgumentException.class,
            () -> new GarbageFrames(jobContext(1).chunkWords(1_000).maxFrameLength(1_408 - 32)));
        assertTrue(tooShort.getMessage().contains("maxFrameLength") && tooShort.getMessage().contains("chunkWords=1000"), tooShort.getMessage());
        final IllegalArgumentException noWorkers = assertThrows(IllegalArgumentException.class,
            () -> new GarbageFrames(jobContext(1).workers(0)));
        assertTrue(noWorkers.getMessage().startsWith("workers"), noWorkers.getMessage());
    }

    @Test
    void shouldRefuseToRunWithoutBeingToldTheServerHasASecret(@TempDir final Path dir) throws Exception {
        final String[] job = {"--job", "1", "--workers", "2", "--params", "1000", "--connect-timeout-ms", "1"};
        assertRefused(job, "--server-has-secret");
        final Path secret = Files.write(dir.resolve("secret"), Frames.SECRET);
        assertRefused(concat(job, "--server-has-secret", "--secret-file", secret.toString()), "--secret-file");
        assertRefused(concat(job, "--server-has-secret", "--rate", "0"), "--rate");
        assertRefused(concat(job, "--server-has-secret", "--duration-s", "-1"), "--duration-s");
        assertRefused(concat(job, "--server-has-secret", "--chunk-words", "7"), "chunkWords");
    }

    @Test
    void shouldSendForTheDurationThenPrintTheTotalTheServerRejected() throws Exception {
        final AggregationServer server = startServer();
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final CommandLine command = new CommandLine(new GarbageCommand()).setOut(new PrintWriter(out)).setErr(new PrintWriter(err));
        final int rate = 1_000;
        final int exitCode = command.execute("--job", "" + JOB, "--workers", "" + N, "--params", "" + PARAMS, "--chunk-words", "" + CHUNK_WORDS,
            "--rate", "" + rate, "--duration-s", "1", "--seed", "9", "--server-has-secret",
            "--aeron-dir", runtime.aeronDirectoryName(), "--vote-channel", IPC, "--vote-stream", "" + VOTE_STREAM);
        assertEquals(0, exitCode, "exit code; stderr: " + err);
        final Matcher total = Pattern.compile("^" + GarbageCommand.TOTAL_PREFIX + "(\\d+)$", Pattern.MULTILINE).matcher(out.toString());
        assertTrue(total.find(), "total line in: " + out);
        final long sent = Long.parseLong(total.group(1));
        assertFalse(total.find(), "the total is printed once: " + out);
        assertTrue(sent > 0 && sent <= rate + 1, "sent " + sent + " at " + rate + "/s for 1 s");
        assertEquals(sent, garbageRejections(server.counters()), "delivered before the total was printed: rejections under GARBAGE_REASONS");
        assertOnlyGarbageReasons(server.counters());
        assertEquals(0, server.counters().workersJoined().get(), "no garbage HELLO accepted");
        System.out.println("GarbageFramesTest (GarbageCommand): " + sent + " garbage frames, rejected: " + breakdown(server.counters()));
    }

    private AggregationServer startServer() {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        final AggregationServer server = AggregationServer.launch(serverContext().errorHandler(serverError::set));
        launched = server;
        return server;
    }

    private AggregationServer.Context serverContext() {
        return new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(N).paramCount(PARAMS).rule(VoteRule.MAJORITY).secret(Frames.SECRET)
            .chunkWords(CHUNK_WORDS).windowChunks(4)
            .voteChannel(IPC).voteStreamId(VOTE_STREAM).resultChannel(IPC).resultStreamId(RESULT_STREAM);
    }

    private static GarbageFrames.Context jobContext(final long seed) {
        return new GarbageFrames.Context().jobId(JOB).workers(N).paramCount(PARAMS).chunkWords(CHUNK_WORDS).seed(seed);
    }

    private static ControlledFragmentHandler.Action feed(final AggregationServer server, final DirectBuffer frame, final int sessionId) {
        return server.onMessage(frame, 0, frame.capacity(), FrameDescriptor.UNFRAGMENTED, sessionId);
    }

    private static long garbageRejections(final ServerCounters counters) {
        long sum = 0;
        for (final RejectReason reason : GarbageFrames.GARBAGE_REASONS) {
            sum += counters.rejected(reason).get();
        }
        return sum;
    }

    private static void assertOnlyGarbageReasons(final ServerCounters counters) {
        for (final RejectReason reason : RejectReason.values()) {
            if (!GarbageFrames.GARBAGE_REASONS.contains(reason)) {
                assertEquals(0, counters.rejected(reason).get(), reason.label());
            }
        }
    }

    private static String breakdown(final ServerCounters counters) {
        final StringBuilder sb = new StringBuilder();
        for (final RejectReason reason : RejectReason.values()) {
            final long value = counters.rejected(reason).get();
            if (value != 0) {
                sb.append(reason.label()).append('=').append(value).append(' ');
            }
        }
        return sb.toString().trim();
    }

    private static byte[] bytes(final DirectBuffer frame) {
        final byte[] bytes = new byte[frame.capacity()];
        frame.getBytes(0, bytes);
        return bytes;
    }

    private static String[] concat(final String[] head, final String... tail) {
        final String[] all = Arrays.copyOf(head, head.length + tail.length);
        System.arraycopy(tail, 0, all, head.length, tail.length);
        return all;
    }

    private static void assertRefused(final String[] args, final String option) {
        final StringWriter err = new StringWriter();
        final int exitCode = new CommandLine(new GarbageCommand()).setOut(new PrintWriter(new StringWriter())).setErr(new PrintWriter(err))
            .execute(args);
        assertEquals(CommandLine.ExitCode.USAGE, exitCode, String.join(" ", args) + ": " + err);
        assertTrue(err.toString().contains(option), "message names " + option + ": " + err);
    }
}
