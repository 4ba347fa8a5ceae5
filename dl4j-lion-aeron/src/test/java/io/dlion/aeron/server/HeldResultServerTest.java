package io.dlion.aeron.server;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import io.aeron.Subscription;
import io.aeron.logbuffer.FrameDescriptor;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.RejectReason;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.aeron.wire.ResultChunkFlyweight;
import io.dlion.aeron.wire.VoteChunkFlyweight;
import io.dlion.codec.DownlinkEncoding;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoteRule;
import io.dlion.vote.VoterSet;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A server that takes a dead rank's slice over with the old server's last result (round 7) as its host holds it: the host
 * says HELLO naming round 8, a worker whose part of round 7's result was cut off names round 7. The worker is sent round
 * 7's result again, every chunk with the voters and the encoding the old server gave it (sign bits for an odd number of
 * voters, ternary for an even one, count planes when averaging), instead of being told to rejoin; its votes of round 7 are
 * stale, and round 8 goes on with both, whichever opens it. Expected words are the ones the test made the held result of, decoded from the
 * frames as a worker decodes them. The agent is pumped on the test thread with a clock of its own that never reaches the
 * deadline.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HeldResultServerTest {
    private static final String IPC = "aeron:ipc?mtu=8k";
    private static final int JOB = 6;
    private static final int WORKERS = 3;
    private static final long PARAMS = 3_000;
    private static final int CHUNK_WORDS = 20;
    private static final int WORDS = (int) ((PARAMS + 63) >>> 6);
    private static final int CHUNKS = (WORDS + CHUNK_WORDS - 1) / CHUNK_WORDS;
    /** The held result's runs: chunks 0 and 2 counted all three workers, chunk 1 only workers 0 and 1. */
    private static final int[] RUN_STARTS = {0, CHUNK_WORDS, 2 * CHUNK_WORDS};
    private static final VoterSet[] RUN_VOTERS = {VoterSet.of(WORKERS, 0, 1, 2), VoterSet.of(WORKERS, 0, 1), VoterSet.of(WORKERS, 0, 1, 2)};

    private AeronRuntime runtime;
    private AggregationServer server;
    private Subscription results;
    private final long[] now = {0};
    private final UnsafeBuffer frame = new UnsafeBuffer(new byte[VoteChunkFlyweight.length((long) CHUNK_WORDS * 64)]);
    private final long[][] signs = {new long[WORDS]};

    @AfterEach
    void tearDown() {
        CloseHelper.closeAll(results, server, runtime);
    }

    @Test
    void shouldSendTheHeldMajorityResultToALaggardAndGoOnWithTheNextRound() throws InterruptedException {
        shouldSendTheHeldResultAndGoOn(VoteRule.MAJORITY);
    }

    @Test
    void shouldSendTheHeldAverageResultToALaggardAndGoOnWithTheNextRound() throws InterruptedException {
        shouldSendTheHeldResultAndGoOn(VoteRule.AVERAGE);
    }

    @Test
    void shouldRefuseAHeldResultThatIsNotTheSlices() {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        final HeldResult shortOne = new HeldResult(7, 0, new long[2][WORDS - 1], new int[] {0}, new VoterSet[] {VoterSet.of(WORKERS, 0)});
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(WORKERS).paramCount(PARAMS).held(shortOne).conclude());
        assertTrue(e.getMessage().contains("held"), e.getMessage());
        final HeldResult dense = new HeldResult(7, 0, new long[2][WORDS], new int[] {0}, new VoterSet[] {VoterSet.of(WORKERS, 0)});
        final IllegalArgumentException f = assertThrows(IllegalArgumentException.class, () -> new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(WORKERS).paramCount(PARAMS).payload(Payload.FP32).held(dense).conclude());
        assertTrue(f.getMessage().contains("held"), f.getMessage());
    }

    private void shouldSendTheHeldResultAndGoOn(final VoteRule rule) throws InterruptedException {
        final long[][] words = heldWords(rule, new SplittableRandom(29));
        start(rule, new HeldResult(7, 0, copy(words), RUN_STARTS.clone(), RUN_VOTERS.clone()));
        hello(0, 8, 10); // the host: it holds round 7's result whole
        cycle();
        hello(1, 7, 11); // the laggard
        cycle();
        assertEquals(1, server.counters().laggardsServed().get());
        assertEquals(0, server.counters().laggardsResynced().get(), "nobody is told to rejoin");

        final List<long[][]> frames = new ArrayList<>();
        final List<VoterSet> voters = new ArrayList<>();
        final List<Integer> offsets = new ArrayList<>();
        final List<Integer> encodings = new ArrayList<>();
        readResults(rule, 7, frames, voters, offsets, encodings);
        assertEquals(CHUNKS, frames.size(), "one frame a chunk, sent once");
        final long[][] received = new long[words.length][WORDS];
        for (int f = 0; f < frames.size(); f++) {
            final int from = offsets.get(f);
            final int chunkIndex = from / CHUNK_WORDS;
            assertEquals(RUN_VOTERS[chunkIndex], voters.get(f), "the voters of the chunk at word " + from);
            assertEquals(expectedEncoding(rule, RUN_VOTERS[chunkIndex].count()), encodings.get(f), "the encoding at word " + from);
            for (int p = 0; p < frames.get(f).length; p++) {
                System.arraycopy(frames.get(f)[p], 0, received[p], from, frames.get(f)[p].length);
            }
        }
        for (int p = 0; p < words.length; p++) {
            assertArrayEquals(words[p], received[p], "plane " + p + " of round 7's result, as the host held it");
        }

        vote(1, 7, 0, 11);
        cycle();
        assertEquals(1, server.counters().rejected(RejectReason.STALE_ROUND).get(), "the laggard's vote of round 7");
        for (int chunk = 0; chunk < CHUNKS; chunk++) {
            vote(1, 8, chunk, 11); // the laggard's vote may open round 8: it named round 7, and was sent it
            vote(0, 8, chunk, 10);
            cycle();
        }
        assertEquals(0, server.counters().rejected(RejectReason.FUTURE_ROUND).get());
        assertEquals(CHUNKS, server.counters().chunksVoted().get(), "round 8 voted by the host and the laggard");
        assertEquals(1, server.counters().rounds().get());
        frames.clear();
        readResults(rule, 8, frames, voters, offsets, encodings);
        assertTrue(frames.size() >= CHUNKS, "round 8's result went out after round 7's: " + frames.size() + " frames");

        hello(2, 7, 12); // a worker naming round 7 once round 8's result went out: round 7's is no use to it now
        assertEquals(1, server.counters().laggardsResynced().get(), "told to rejoin");
        assertEquals(1, server.counters().laggardsServed().get());
    }

    /** Random result words over the slice, valid for each run's voter count, the bits past the last parameter clear. */
    private static long[][] heldWords(final VoteRule rule, final SplittableRandom random) {
        final int planes = rule == VoteRule.AVERAGE ? VoteAggregator.planes(WORKERS) : 2;
        final long[][] words = new long[planes][WORDS];
        for (int w = 0; w < WORDS; w++) {
            final int count = RUN_VOTERS[w / CHUNK_WORDS].count();
            for (int bit = 0; bit < 64 && (long) w * 64 + bit < PARAMS; bit++) {
                if (rule == VoteRule.AVERAGE) {
                    final int votesFor = random.nextInt(count + 1);
                    for (int p = 0; p < planes; p++) {
                        words[p][w] |= (long) ((votesFor >>> p) & 1) << bit;
                    }
                } else if ((count & 1) == 0 && random.nextInt(4) == 0) {
                    words[1][w] |= 1L << bit; // a tie: sign 0, as the aggregator writes it
                } else {
                    words[0][w] |= (long) random.nextInt(2) << bit;
                }
            }
        }
        return words;
    }

    private static int expectedEncoding(final VoteRule rule, final int voters) {
        if (rule == VoteRule.AVERAGE) {
            return Encoding.COUNT_PLANES;
        }
        return (voters & 1) == 1 ? Encoding.SIGN_BITS : Encoding.TERNARY;
    }

    private static long[][] copy(final long[][] words) {
        final long[][] out = new long[words.length][];
        for (int p = 0; p < words.length; p++) {
            out[p] = words[p].clone();
        }
        return out;
    }

    /** Decode every RESULT_CHUNK of a round on the result stream, frame-local, as a worker decodes it. */
    private void readResults(final VoteRule rule, final long round, final List<long[][]> frames, final List<VoterSet> voters,
        final List<Integer> offsets, final List<Integer> encodings) {
        final ResultChunkFlyweight result = new ResultChunkFlyweight();
        final int[] read = {0};
        for (int i = 0; i < 100; i++) {
            read[0] = results.poll((buffer, offset, length, header) -> {
                final MessageHeaderFlyweight msg = result.wrapForRead(buffer, offset).header();
                if (msg.type() != MessageType.RESULT_CHUNK || msg.round() != round) {
                    return;
                }
                final VoterSet set = new VoterSet(WORKERS);
                assertTrue(result.readVoters(set, length));
                final int words = msg.chunkWords();
                final DownlinkEncoding downlink = DownlinkEncoding.of(rule, set.count());
                final long[][] planes = new long[downlink.planes()][words];
                result.decode(downlink, Math.min(64L * words, PARAMS - 64L * msg.chunkWordOffset()), planes);
                frames.add(planes);
                voters.add(set);
                offsets.add(msg.chunkWordOffset());
                encodings.add(msg.encoding());
            }, 100);
        }
    }

    private void start(final VoteRule rule, final HeldResult held) throws InterruptedException {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        server = new AggregationServer(new AggregationServer.Context()
            .aeron(runtime.aeron()).jobId(JOB).workers(WORKERS).paramCount(PARAMS).rule(rule).chunkWords(CHUNK_WORDS).minVoters(2)
            .roundTimeoutNs(TimeUnit.SECONDS.toNanos(2)).nanoClock(() -> now[0]).absent(VoterSet.of(WORKERS, 2)).held(held)
            .voteChannel(IPC).voteStreamId(1795).resultChannel(IPC).resultStreamId(1796));
        results = runtime.aeron().addSubscription(IPC, 1796);
        while (!server.isConnected() || !results.isConnected()) {
            Thread.sleep(1);
        }
    }

    private void hello(final int worker, final long round, final int session) {
        final int length = new HelloFlyweight().wrap(frame, 0).encode(JOB, round, 0, worker, 0, PARAMS, session, null, 0, null, 0, 0);
        server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, session);
    }

    private void vote(final int worker, final long round, final int chunk, final int session) {
        final int words = Math.min(CHUNK_WORDS, WORDS - chunk * CHUNK_WORDS);
        final int length = new VoteChunkFlyweight().wrap(frame, 0).encode(JOB, round, chunk * CHUNK_WORDS, words, worker, 0, signs, PARAMS,
            chunk * CHUNK_WORDS);
        server.onMessage(frame, 0, length, FrameDescriptor.UNFRAGMENTED, session);
    }

    private void cycle() {
        now[0] += TimeUnit.MILLISECONDS.toNanos(1);
        server.doWork();
    }
}
