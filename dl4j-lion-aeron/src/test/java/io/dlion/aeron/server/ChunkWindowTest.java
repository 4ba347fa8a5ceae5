package io.dlion.aeron.server;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.RejectReason;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.VoteChunkFlyweight;
import io.dlion.vote.VoteRule;
import io.dlion.vote.VoterSet;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link ChunkWindow} with the {@link VoteAggregation} of sign votes, fed real vote frames, with its counters on an embedded driver. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ChunkWindowTest {
    private static final int WORKERS = 3;
    private static final int CHUNK_WORDS = 20;
    private static final long PARAMS = 5 * CHUNK_WORDS * 64 - 37;
    private static final VoterSet ALL = VoterSet.all(WORKERS);
    private static final long TIMEOUT_NS = 1_000;

    private final ChunkLayout layout = new ChunkLayout(PARAMS, 0, PARAMS, CHUNK_WORDS);
    private final UnsafeBuffer frame = new UnsafeBuffer(new byte[VoteChunkFlyweight.length(CHUNK_WORDS * 64L)]);
    private final VoteChunkFlyweight vote = new VoteChunkFlyweight();
    private AeronRuntime runtime;
    private ServerCounters counters;
    private VoteAggregation aggregation;

    @BeforeEach
    void setUp() {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        counters = new ServerCounters(runtime.aeron(), 1, 0);
    }

    @AfterEach
    void tearDown() {
        CloseHelper.closeAll(counters, runtime);
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5})
    void shouldVoteEveryChunkWhateverTheArrivalOrderAndPublishInChunkOrder(final long seed) {
        final ChunkWindow window = window(layout.chunkCount(), VoteRule.MAJORITY);
        final long[][] votes = randomVotes(seed);
        final List<int[]> arrivals = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++) {
            for (int c = 0; c < layout.chunkCount(); c++) {
                arrivals.add(new int[] {w, c});
            }
        }
        Collections.shuffle(arrivals, new Random(seed));
        window.open(0, 0);
        int voted = 0;
        for (final int[] arrival : arrivals) {
            assertNull(add(window, 0, arrival[0], arrival[1], votes[arrival[0]]));
            window.arrived(arrival[1], ALL);
            voted += window.aggregateReady(ALL);
            assertFalse(window.aggregateDue());
        }
        assertEquals(layout.chunkCount(), voted, "every chunk voted as soon as its last vote came in");
        final long[] result = new long[votes[0].length];
        for (int c = 0; c < layout.chunkCount(); c++) {
            final ChunkSlot slot = window.nextToPublish();
            assertNotNull(slot, "chunk " + c);
            assertEquals(c, slot.chunk);
            assertEquals(ALL, slot.voters);
            assertEquals(Encoding.SIGN_BITS, aggregation.encoding(slot));
            System.arraycopy(aggregation.out(slot)[0], 0, result, layout.wordOffset(c), layout.wordsOf(c));
            assertEquals(c == layout.chunkCount() - 1, window.published(c, ALL));
        }
        assertNull(window.nextToPublish());
        assertFalse(window.isOpen());
        assertTrue(window.hasCompletedRound());
        assertArrayEquals(majority(votes), result);
        assertEquals(1, counters.rounds().get());
        assertEquals(WORKERS, counters.votersLastRound().get());
    }

    @Test
    void shouldHoldBackAChunkBeyondTheWindowUntilTheOldestIsPublished() {
        final ChunkWindow window = window(2, VoteRule.MAJORITY);
        final long[][] votes = randomVotes(7);
        window.open(3, 0);
        assertFalse(window.isBeyond(1));
        assertTrue(window.isBeyond(2));
        for (int w = 0; w < WORKERS; w++) {
            assertNull(add(window, 3, w, 0, votes[w]));
            window.arrived(0, ALL);
        }
        assertNull(window.nextToPublish(), "nothing is published before the duty cycle votes");
        assertEquals(1, window.aggregateReady(ALL));
        assertNotNull(window.nextToPublish());
        window.published(1, ALL);
        assertFalse(window.isBeyond(2));
        assertEquals(RejectReason.DUPLICATE, window.checkArrival(0, 0), "a published chunk");
    }

    @Test
    void shouldFixTheVotersWithTheFirstChunkVotedAndRefuseALateWorker() {
        final ChunkWindow window = window(layout.chunkCount(), VoteRule.MAJORITY);
        final long[][] votes = randomVotes(11);
        final VoterSet active = bits(0b011);
        window.open(0, 0);
        assertNull(add(window, 0, 0, 2, votes[0]));
        window.arrived(2, active);
        assertFalse(window.aggregateDue());
        assertNull(add(window, 0, 1, 2, votes[1]));
        window.arrived(2, active);
        assertTrue(window.aggregateDue());
        assertEquals(1, window.aggregateReady(active));
        assertEquals(active, window.roundVoters());
        assertEquals(RejectReason.LATE, window.checkArrival(0, 2));
        assertNull(window.checkArrival(0, 1));
        assertEquals(RejectReason.DUPLICATE, add(window, 0, 0, 2, votes[0]), "a vote of a voted chunk");
    }

    @Test
    void shouldGoOnWithTheWorkersPresentAtTheDeadline() {
        final ChunkWindow window = window(layout.chunkCount(), VoteRule.MAJORITY);
        final long[][] votes = randomVotes(13);
        window.open(0, 0);
        for (int w = 0; w < 2; w++) {
            assertNull(add(window, 0, w, 0, votes[w]));
            window.arrived(0, ALL);
        }
        assertEquals(0, window.aggregateReady(ALL));
        assertFalse(window.deadlinePassed(TIMEOUT_NS, TIMEOUT_NS));
        assertTrue(window.deadlinePassed(TIMEOUT_NS + 1, TIMEOUT_NS));
        assertFalse(window.isOldestChunkAggregated());
        assertEquals(bits(0b011), window.presentInOldestChunk());
        assertEquals(ALL, window.required(ALL));
        window.goOnWith(bits(0b011), TIMEOUT_NS + 1);
        assertEquals(1, window.aggregateReady(bits(0b011)));
        final ChunkSlot slot = window.nextToPublish();
        assertEquals(bits(0b011), slot.voters);
        assertEquals(Encoding.TERNARY, aggregation.encoding(slot), "two voters can tie");
        assertFalse(window.deadlinePassed(2 * TIMEOUT_NS + 1, TIMEOUT_NS), "the deadline restarts when the round goes on");
    }

    @Test
    void shouldLetAnExcusedWorkerLeaveTheVotersOnlyAboveTheQuorum() {
        final ChunkWindow window = window(layout.chunkCount(), VoteRule.AVERAGE);
        final long[][] votes = randomVotes(17);
        window.open(0, 0);
        for (int w = 0; w < WORKERS; w++) {
            assertNull(add(window, 0, w, 0, votes[w]));
            window.arrived(0, ALL);
        }
        assertEquals(1, window.aggregateReady(ALL));
        window.excuse(2, 3);
        assertEquals(ALL, window.roundVoters(), "two left of a quorum of three: the worker stays a voter");
        window.excuse(2, 2);
        assertEquals(bits(0b011), window.roundVoters());
        for (int w = 0; w < 2; w++) {
            assertNull(add(window, 0, w, 1, votes[w]));
            window.arrived(1, ALL);
        }
        assertEquals(1, window.aggregateReady(ALL));
        window.published(1, ALL);
        final ChunkSlot slot = window.nextToPublish();
        assertEquals(1, slot.chunk);
        assertEquals(bits(0b011), slot.voters);
        assertEquals(Encoding.COUNT_PLANES, aggregation.encoding(slot));
    }

    @Test
    void shouldRefuseFramesOffThisSlicesGrid() {
        final ChunkWindow window = window(4, VoteRule.MAJORITY);
        final long[] signs = new long[(int)((PARAMS + 63) >>> 6)];
        final int length = vote.wrap(frame, 0).encode(1, 0, CHUNK_WORDS, CHUNK_WORDS, 0, 0, new long[][] {signs}, PARAMS, CHUNK_WORDS);
        assertNull(window.checkFrame(vote.header(), length));
        assertEquals(RejectReason.BAD_LENGTH, window.checkFrame(vote.header(), length - 1));
        vote.header().slice(1);
        assertEquals(RejectReason.WRONG_SLICE, window.checkFrame(vote.header(), length));
        vote.header().slice(0).chunkWordOffset(CHUNK_WORDS + 1);
        assertEquals(RejectReason.OUT_OF_RANGE, window.checkFrame(vote.header(), length));
        vote.header().chunkWordOffset(CHUNK_WORDS).writeHeader(io.dlion.aeron.wire.MessageType.VOTE_CHUNK, Encoding.TERNARY);
        assertEquals(RejectReason.MALFORMED, window.checkFrame(vote.header(), length));
    }

    private RejectReason add(final ChunkWindow window, final long round, final int worker, final int chunk, final long[] signs) {
        final int words = layout.wordsOf(chunk);
        final int length = vote.wrap(frame, 0).encode(1, round, layout.wordOffset(chunk), words, worker, 0, new long[][] {signs}, PARAMS,
            layout.wordOffset(chunk));
        assertNull(window.checkFrame(vote.header(), length));
        assertEquals(chunk, window.chunkOf(vote.header()));
        final RejectReason arrival = window.checkArrival(chunk, worker);
        return arrival != null ? arrival : window.add(frame, 0, chunk, worker);
    }

    private ChunkWindow window(final int windowChunks, final VoteRule rule) {
        aggregation = new VoteAggregation(WORKERS, CHUNK_WORDS, windowChunks, rule, counters);
        return new ChunkWindow(layout, 0, WORKERS, windowChunks, aggregation, 1, counters);
    }

    private static VoterSet bits(final long word) {
        return new VoterSet(WORKERS).word(0, word);
    }

    private static long[][] randomVotes(final long seed) {
        final SplittableRandom random = new SplittableRandom(seed);
        final int words = (int)((PARAMS + 63) >>> 6);
        final long[][] votes = new long[WORKERS][words];
        for (final long[] v : votes) {
            for (int i = 0; i < words; i++) {
                v[i] = random.nextLong();
            }
            v[words - 1] &= ChunkLayout.lastWordMask(PARAMS);
        }
        return votes;
    }

    private static long[] majority(final long[][] votes) {
        final long[] out = new long[votes[0].length];
        for (int i = 0; i < out.length; i++) {
            final long a = votes[0][i];
            final long b = votes[1][i];
            final long c = votes[2][i];
            out[i] = (a & b) | (a & c) | (b & c);
        }
        return out;
    }
}
