package io.dlion.aeron;

import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.aeron.ExclusivePublication;
import io.dlion.aeron.client.AeronMeanExchange;
import io.dlion.aeron.client.RejoinRequiredException;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.GradientChunkFlyweight;
import io.dlion.aeron.wire.MeanChunkFlyweight;
import io.dlion.testkit.Frames;
import io.dlion.testkit.PlayedServer;
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
 * The dense client reads its means over the vote client's link: only from the result image its server proved with a
 * HELLO_ACK (a stranger's image on the same stream is dropped and counted), and a frame of a later round while the mean
 * is incomplete ends the round at once. Played against a hand-made server, so the order of frames is chosen.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DenseLinkTest {
    private static final int JOB = 61;
    private static final int WORKERS = 2;
    private static final long PARAMS = 2L * GradientChunkFlyweight.CHUNK_WORDS * 64 + 5;   // two full dense chunks and a short one

    private PlayedServer server;
    private AeronMeanExchange worker;
    private ExclusivePublication stranger;
    private ExecutorService awaiting;

    @AfterEach
    void tearDown() {
        if (awaiting != null) {
            awaiting.shutdownNow();
        }
        CloseHelper.closeAll(worker, stranger, server);
    }

    @Test
    void shouldTakeMeansOnlyFromTheProvenServerAndEndTheRoundWhenALaterRoundArrivesFirst() throws Exception {
        server = PlayedServer.launch(1931, 1932);
        worker = server.connect(() -> new AeronMeanExchange(new AeronMeanExchange.Context()
            .aeron(server.aeron()).jobId(JOB).workerId(0).workers(WORKERS).paramCount(PARAMS).slices(List.of(server.slice()))), null);
        // another publication on the result stream: a session the worker never saw proven
        stranger = server.aeron().addExclusivePublication(server.slice().resultChannel(), server.slice().resultStreamId());
        final ChunkLayout layout = new ChunkLayout(PARAMS, 0, PARAMS, GradientChunkFlyweight.CHUNK_WORDS);
        final SplittableRandom random = new SplittableRandom(5);
        final float[] mean = new float[(int) PARAMS];
        final float[] forged = new float[(int) PARAMS];
        for (int j = 0; j < PARAMS; j++) {
            mean[j] = (float) random.nextGaussian();
            forged[j] = 666f;
        }

        worker.submit(0, new float[(int) PARAMS]);
        awaiting = Executors.newSingleThreadExecutor();
        final Future<float[]> round0 = awaiting.submit(() -> worker.await(0, 30_000).clone());
        for (int c = 0; c < layout.chunkCount(); c++) {
            Frames.send(stranger, meanChunk(0, layout, c, forged));
        }
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (worker.workerCounters().unprovenFrames().get() < layout.chunkCount() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(layout.chunkCount(), worker.workerCounters().unprovenFrames().get(), "the stranger's mean chunks are dropped");
        for (int c = 0; c < layout.chunkCount(); c++) {
            server.send(meanChunk(0, layout, c, mean));
        }
        assertArrayEquals(mean, round0.get(30, TimeUnit.SECONDS), "the proven server's means, none of the stranger's");

        worker.submit(1, new float[(int) PARAMS]);
        server.send(meanChunk(1, layout, 0, mean));
        server.send(meanChunk(2, layout, 0, mean));
        final RejoinRequiredException lost = assertThrows(RejoinRequiredException.class, () -> worker.await(1, 600_000));
        assertTrue(lost.getMessage().contains("round 2"), lost.getMessage());
        assertEquals(0, worker.workerCounters().rejectedResults().get(), "no frame of the server rejected");
    }

    /** A MEAN_CHUNK of every worker: chunk {@code chunk}'s values of {@code values}. */
    private static UnsafeBuffer meanChunk(final long round, final ChunkLayout layout, final int chunk, final float[] values) {
        final int wordOffset = layout.wordOffset(chunk);
        final int words = layout.wordsOf(chunk);
        final int params = (int) layout.paramsOf(wordOffset, words);
        final float[] local = new float[params];
        System.arraycopy(values, wordOffset << 6, local, 0, params);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[MeanChunkFlyweight.length(VoterSet.wordsFor(WORKERS), params)]);
        new MeanChunkFlyweight().wrap(buffer, 0).encode(JOB, round, wordOffset, words, 0, VoterSet.all(WORKERS), local, params);
        return buffer;
    }
}
