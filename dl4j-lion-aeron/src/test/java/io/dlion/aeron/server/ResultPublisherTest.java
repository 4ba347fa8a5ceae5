package io.dlion.aeron.server;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.aeron.wire.ResultChunkFlyweight;
import io.dlion.aeron.wire.RoundAbortFlyweight;
import io.dlion.codec.CountEncoding;
import io.dlion.vote.VoteAggregator;
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
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link ResultPublisher} on a real IPC publication of an embedded driver. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ResultPublisherTest {
    private static final String CHANNEL = "aeron:ipc?mtu=8k";
    private static final int STREAM = 1791;
    private static final int CHUNK_WORDS = 1000;
    /** Past 64: voter sets of two words. */
    private static final int WORKERS = 100;
    private static final long PARAMS = 3L * CHUNK_WORDS * 64;

    private final ChunkLayout layout = new ChunkLayout(PARAMS, 0, PARAMS, CHUNK_WORDS);
    private AeronRuntime runtime;
    private ServerCounters counters;
    private ExclusivePublication publication;
    private Subscription subscription;

    @BeforeEach
    void setUp() {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        counters = new ServerCounters(runtime.aeron(), 1, 2);
        publication = runtime.aeron().addExclusivePublication(CHANNEL, STREAM);
    }

    @AfterEach
    void tearDown() {
        CloseHelper.closeAll(subscription, publication, counters, runtime);
    }

    @Test
    void shouldCountRefusedOffersWithoutRetryingAndHoldTheAbortUntilItGoesOut() throws InterruptedException {
        final ResultPublisher publisher = new ResultPublisher(publication, null, 1, 2, layout, WORKERS, counters, null);
        assertFalse(publisher.publishJoinNotice(1, 7, 0), "no subscriber: not connected");
        assertEquals(1, counters.backPressure().get());
        publisher.queueAbort(4, VoterSet.of(WORKERS, 0, 70));
        assertEquals(0, publisher.publishAbort());
        assertTrue(publisher.isAbortPending());
        assertEquals(2, counters.backPressure().get());

        connect();
        assertEquals(1, publisher.publishAbort());
        assertFalse(publisher.isAbortPending());
        assertEquals(0, publisher.publishAbort(), "sent once");
        final List<byte[]> frames = receive(1);
        final RoundAbortFlyweight abort = new RoundAbortFlyweight().wrapForRead(new UnsafeBuffer(frames.get(0)), 0);
        assertEquals(MessageType.ROUND_ABORT, abort.header().type());
        assertEquals(4, abort.round());
        final VoterSet voters = new VoterSet(WORKERS);
        assertTrue(abort.readVoters(voters, frames.get(0).length));
        assertEquals(VoterSet.of(WORKERS, 0, 70), voters);
        assertEquals(2, abort.header().slice());
        assertEquals(ChunkLayout.frameLength(2 * Long.BYTES), counters.bytesOut().get(), "a voter set of two words");
    }

    @Test
    void shouldSendAJoinNoticeNamingTheWorkerTheRoundAndTheDonor() throws InterruptedException {
        connect();
        final ResultPublisher publisher = new ResultPublisher(publication, null, 1, 2, layout, WORKERS, counters, null);
        assertTrue(publisher.publishJoinNotice(5, 12, JoinNoticeFlyweight.NO_DONOR));
        final JoinNoticeFlyweight notice = new JoinNoticeFlyweight().wrapForRead(new UnsafeBuffer(receive(1).get(0)), 0);
        assertEquals(5, notice.joiningWorker());
        assertEquals(12, notice.firstRound());
        assertEquals(JoinNoticeFlyweight.NO_DONOR, notice.donor());
    }

    @ParameterizedTest
    @ValueSource(ints = {64, 1024})
    void shouldSplitACountChunkTooLargeForOneFrameIntoFramesThatReassembleIt(final int voters) throws InterruptedException {
        connect();
        final CountEncoding encoding = new CountEncoding(voters);
        final long[][] out = new long[VoteAggregator.planes(voters)][CHUNK_WORDS];
        final SplittableRandom random = new SplittableRandom(3);
        for (final long[] plane : out) {
            for (int i = 0; i < plane.length; i++) {
                plane[i] = random.nextLong();
            }
        }
        final VoterSet all = VoterSet.all(voters);
        final ResultPublisher publisher = new ResultPublisher(publication, null, 1, 2, layout, voters, counters, null);
        assertTrue(publisher.publishResult(9, 1, all, voters, Encoding.COUNT_PLANES, encoding, out));

        final int planes = encoding.planes();
        final int maxFrameWords = (publication.maxPayloadLength() - 32 - 8 * ((voters + 63) / 64)) / (planes * Long.BYTES);
        final int expectedFrames = (CHUNK_WORDS + maxFrameWords - 1) / maxFrameWords;
        final List<byte[]> frames = receive(expectedFrames);
        final long[][] read = new long[planes][CHUNK_WORDS];
        int nextWord = layout.wordOffset(1);
        for (final byte[] bytes : frames) {
            final ResultChunkFlyweight frame = new ResultChunkFlyweight().wrapForRead(new UnsafeBuffer(bytes), 0);
            assertEquals(nextWord, frame.header().chunkWordOffset(), "frames in word order, no gap");
            assertEquals(9, frame.header().round());
            final VoterSet counted = new VoterSet(voters);
            assertTrue(frame.readVoters(counted, bytes.length));
            assertEquals(all, counted, "every frame names the voters");
            final int words = frame.header().chunkWords();
            final long[][] part = new long[planes][words];
            frame.decode(encoding, (long)words * 64, part);
            for (int p = 0; p < planes; p++) {
                System.arraycopy(part[p], 0, read[p], nextWord - layout.wordOffset(1), words);
            }
            nextWord += words;
        }
        assertEquals(layout.wordOffset(2), nextWord);
        for (int p = 0; p < planes; p++) {
            assertArrayEquals(out[p], read[p], "plane " + p);
        }
    }

    private void connect() throws InterruptedException {
        subscription = runtime.aeron().addSubscription(CHANNEL, STREAM);
        while (!publication.isConnected()) {
            Thread.sleep(1);
        }
    }

    private List<byte[]> receive(final int count) throws InterruptedException {
        final List<byte[]> frames = new ArrayList<>();
        while (frames.size() < count) {
            if (subscription.poll((buffer, offset, length, header) -> {
                final byte[] bytes = new byte[length];
                buffer.getBytes(offset, bytes);
                frames.add(bytes);
            }, 10) == 0) {
                Thread.sleep(1);
            }
        }
        return frames;
    }
}
