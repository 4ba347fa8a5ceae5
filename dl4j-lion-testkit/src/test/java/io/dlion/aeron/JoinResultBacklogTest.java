package io.dlion.aeron;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.exchange.JoinNotice;
import io.dlion.testkit.Frames;
import io.dlion.testkit.PlayedServer;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A worker that joined at round R must not hold back the other workers' results while it cannot vote yet. Found by a
 * chaos soak: after every restarted worker's join the whole job stalled 15 to 28 s, three rounds after the join round
 * (six with sign results): the joining worker left the results of rounds R and later in Aeron's log while it waited for
 * its donor's hand-over and then restored its parameters and replayed its data's shuffles, and the result stream waits
 * for its slowest receiver, a window of a few rounds. Here the real exchange joins a played server whose result
 * publication is an IPC stream with a 64 KiB term, so that unread results hold it back after about five rounds, exactly
 * as a result stream over UDP does: the test thread never calls the exchange while the server sends twelve rounds (the
 * worker is busy elsewhere), and every offer must still be taken. Then the worker applies every round, from what it kept
 * and from the log, and each result must be the one the server sent, in order.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JoinResultBacklogTest {
    private static final int JOB = 73;
    private static final int WORKERS = 3;
    private static final int JOINER = 2;
    private static final int CHUNK_WORDS = 400;
    private static final int CHUNKS = 2;
    private static final long PARAMS = (long) CHUNKS * CHUNK_WORDS * 64;
    private static final int WORDS = (int) (PARAMS >>> 6);
    /** Three voters: count planes of 2 bits a parameter, 6.4 KB a chunk, 12.8 KB a round. */
    private static final long VOTERS = 0b111;
    private static final String SHORT_TERM = Channels.ipc() + "|term-length=65536";
    private static final long SEND_WAIT_NS = TimeUnit.SECONDS.toNanos(5);

    private PlayedServer played;
    private AeronVoteExchange worker;
    private ExecutorService sender;

    @AfterEach
    void tearDown() {
        if (sender != null) {
            sender.shutdownNow();
        }
        CloseHelper.closeAll(worker, played);
    }

    @Test
    void shouldKeepReadingItsRoundsResultsUntilItVotesSoThatItHoldsNobodyBack() throws Exception {
        played = PlayedServer.launch(1971, 1972, SHORT_TERM);
        final long first = 9;
        final JoinNotice joined = join(first, AeronVoteExchange.Context.RESULT_BACKLOG_BYTES_DEFAULT);
        assertEquals(first, joined.round());
        final long[][][] planes = planes(first + 20, 11);
        final ChunkLayout layout = new ChunkLayout(PARAMS, 0, PARAMS, CHUNK_WORDS);

        // the worker takes its donor's parameters and restores itself: it does not call its exchange meanwhile; the server
        // sends the round before its first (which it drops), then twelve rounds, 154 KB, more than twice the stream's window
        for (long round = first - 1; round < first + 12; round++) {
            sendRound(layout, round, planes[(int) round], SEND_WAIT_NS);
        }
        assertTrue(worker.resultBacklogBytes() > 65_536, "the results it cannot use yet are kept off the log: " + worker.resultBacklogBytes());

        // it votes from its first round on and applies each round's result, the kept ones first, while the others' rounds
        // go on coming (kept behind the ones it holds, or read from the log once it has caught up)
        sender = Executors.newSingleThreadExecutor();
        final Future<?> later = sender.submit(() -> {
            for (long round = first + 12; round < first + 20; round++) {
                sendRound(layout, round, planes[(int) round], TimeUnit.SECONDS.toNanos(30));
            }
            return null;
        });
        final long[] vote = new long[WORDS];
        for (long round = first; round < first + 20; round++) {
            worker.submit(round, vote, PARAMS);
            assertApplied(round, planes[(int) round], worker.await(round, 10_000));
        }
        later.get(10, TimeUnit.SECONDS);
        assertEquals(0, worker.resultBacklogBytes(), "every kept frame was applied");
    }

    @Test
    void shouldLeaveWhatItCannotKeepInTheLogAndLoseNothing() throws Exception {
        played = PlayedServer.launch(1973, 1974, SHORT_TERM);
        final long first = 4;
        final JoinNotice joined = join(first, 30_000); // two rounds' results and a bit
        assertEquals(first, joined.round());
        final long[][][] planes = planes(first + 16, 13);
        final ChunkLayout layout = new ChunkLayout(PARAMS, 0, PARAMS, CHUNK_WORDS);
        sender = Executors.newSingleThreadExecutor();
        final Future<?> sent = sender.submit(() -> {
            for (long round = first; round < first + 16; round++) {
                sendRound(layout, round, planes[(int) round], TimeUnit.SECONDS.toNanos(30));
            }
            return null;
        });
        // the server gets ahead by what the backlog keeps plus what the log holds, and waits for the worker there
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (System.nanoTime() - deadline < 0 && !sent.isDone()) {
            Thread.sleep(10);
        }
        assertTrue(!sent.isDone(), "16 rounds cannot fit the backlog and the log");
        assertTrue(worker.resultBacklogBytes() <= 30_000, "kept at most its bound: " + worker.resultBacklogBytes());
        final long[] vote = new long[WORDS];
        for (long round = first; round < first + 16; round++) {
            worker.submit(round, vote, PARAMS);
            assertApplied(round, planes[(int) round], worker.await(round, 10_000));
        }
        sent.get(10, TimeUnit.SECONDS);
        assertEquals(0, worker.resultBacklogBytes());
    }

    /** Connect a joining worker, answer its HELLO with its first round (donor 0), and wait until it joined. */
    private JoinNotice join(final long first, final long backlogBytes) throws Exception {
        worker = played.connectWith(() -> new AeronVoteExchange(new AeronVoteExchange.Context()
                .aeron(played.aeron()).jobId(JOB).workerId(JOINER).workers(WORKERS).paramCount(PARAMS).rule(VoteRule.AVERAGE)
                .chunkWords(CHUNK_WORDS).join(true).slices(List.of(played.slice())).resultBacklogBytes(backlogBytes)),
            hello -> played.answer(hello, first, 0, null));
        return worker.awaitJoin(10_000);
    }

    /** Random count planes of 3 voters for rounds 0 .. rounds - 1: the plain reference every result is compared to. */
    private static long[][][] planes(final long rounds, final long seed) {
        final SplittableRandom random = new SplittableRandom(seed);
        final long[][][] planes = new long[(int) rounds][2][WORDS];
        for (final long[][] round : planes) {
            for (final long[] plane : round) {
                for (int w = 0; w < WORDS; w++) {
                    plane[w] = random.nextLong();
                }
            }
        }
        return planes;
    }

    /** Offer a round's result chunks, each until taken: fails when the stream is held back for {@code waitNs}. */
    private void sendRound(final ChunkLayout layout, final long round, final long[][] planes, final long waitNs) {
        for (int c = 0; c < layout.chunkCount(); c++) {
            final UnsafeBuffer frame = new UnsafeBuffer(Frames.averageResult(JOB, round, 0, layout, c, VOTERS, planes));
            if (!played.offerWithin(frame, waitNs)) {
                fail("round " + round + "'s result held back for " + TimeUnit.NANOSECONDS.toSeconds(waitNs)
                    + " s by the joined worker's unread results (position " + played.results().position() + ")");
            }
        }
    }

    private static void assertApplied(final long round, final long[][] planes, final RoundResult result) {
        assertEquals(round, result.round());
        assertEquals(3, result.voters(), "round " + round);
        final List<String> wrong = new ArrayList<>();
        for (int p = 0; p < planes.length; p++) {
            if (!Arrays.equals(planes[p], Arrays.copyOf(result.countPlanes()[p], WORDS))) {
                wrong.add("plane " + p);
            }
        }
        assertEquals(List.of(), wrong, "round " + round + "'s result is the one the server sent");
    }
}
