package io.dlion.testkit;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import io.aeron.Publication;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.codec.CountEncoding;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Helpers for tests that talk to a server through a raw publication: the job's secret, a blocking offer and a server's
 * AVERAGE result chunk. Vote and HELLO frames are built by {@link io.dlion.testkit.GarbageFrames#vote} and {@link io.dlion.testkit.GarbageFrames#hello}.
 */
public final class Frames {
    public static final byte[] SECRET = "dl4j-lion test secret, 32 bytes!".getBytes(StandardCharsets.US_ASCII);

    private Frames() {
    }

    /** A server's AVERAGE result chunk: bit planes of the +1 count of the workers in {@code voterMask}. */
    public static byte[] averageResult(final int job, final long round, final int shard, final ChunkLayout layout, final int chunk,
        final long voterMask, final long[][] countPlanes) {
        final int wordOffset = layout.wordOffset(chunk);
        final int words = layout.wordsOf(chunk);
        final int voters = Long.bitCount(voterMask);
        final int body = Encoding.bodyLength(Encoding.COUNT_PLANES, words, layout.paramsOf(wordOffset, words), voters);
        final byte[] bytes = new byte[MessageHeaderFlyweight.HEADER_LENGTH + body];
        new MessageHeaderFlyweight().wrap(new UnsafeBuffer(bytes), 0)
            .writeHeader(MessageType.RESULT_CHUNK, Encoding.COUNT_PLANES)
            .jobId(job).round(round).chunkWordOffset(wordOffset).chunkWords(words).workerId(MessageHeaderFlyweight.SERVER_WORKER_ID)
            .shard(shard).voterMask(voterMask);
        new CountEncoding(voters).encode(countPlanes, layout.paramCount(), wordOffset, wordOffset + words, ByteBuffer.wrap(bytes),
            MessageHeaderFlyweight.HEADER_LENGTH);
        return bytes;
    }

    /** Offer until accepted (10 s at most). */
    public static void send(final Publication publication, final byte[] bytes) {
        send(publication, new UnsafeBuffer(bytes));
    }

    /** Offer the whole buffer until accepted (10 s at most). */
    public static void send(final Publication publication, final DirectBuffer frame) {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (publication.offer(frame) < 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("offer not accepted: " + publication);
            }
            Thread.onSpinWait();
        }
    }
}
