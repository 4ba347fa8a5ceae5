package io.dlion.aeron;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import io.aeron.Publication;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.codec.CountEncoding;
import io.dlion.codec.SignEncoding;
import org.agrona.concurrent.UnsafeBuffer;

/** Hand-built wire messages for tests that talk to a server through a raw publication. */
final class Frames {
    static final byte[] SECRET = "dl4j-lion test secret, 32 bytes!".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private Frames() {
    }

    static byte[] vote(final int job, final long round, final int worker, final int shard, final ChunkLayout layout, final int chunk,
        final long[] vote) {
        final int wordOffset = layout.wordOffset(chunk);
        final int words = layout.wordsOf(chunk);
        final int body = Encoding.bodyLength(Encoding.SIGN_BITS, words, layout.paramsOf(wordOffset, words), 1);
        final byte[] bytes = new byte[MessageHeaderFlyweight.HEADER_LENGTH + body];
        new MessageHeaderFlyweight().wrap(new UnsafeBuffer(bytes), 0)
            .writeHeader(MessageType.VOTE_CHUNK, Encoding.SIGN_BITS)
            .jobId(job).round(round).chunkWordOffset(wordOffset).chunkWords(words).workerId(worker).shard(shard).voterMask(0);
        SignEncoding.INSTANCE.encode(new long[][] {vote}, layout.paramCount(), wordOffset, wordOffset + words, ByteBuffer.wrap(bytes),
            MessageHeaderFlyweight.HEADER_LENGTH);
        return bytes;
    }

    /** A server's AVERAGE result chunk: bit planes of the +1 count of the workers in {@code voterMask}. */
    static byte[] averageResult(final int job, final long round, final int shard, final ChunkLayout layout, final int chunk,
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

    static byte[] hello(final int job, final long round, final int worker, final int shard, final long params, final byte[] secret,
        final long timestampMs, final long nonce) {
        final byte[] bytes = new byte[MessageHeaderFlyweight.HEADER_LENGTH + (secret == null ? 0 : HelloCredentials.BODY_LENGTH)];
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        new MessageHeaderFlyweight().wrap(buffer, 0)
            .writeHeader(MessageType.HELLO, secret == null ? Encoding.NONE : Encoding.HMAC_SHA256)
            .jobId(job).round(round).chunkWordOffset(0).chunkWords(0).workerId(worker).shard(shard).paramCount(params);
        if (secret != null) {
            new HelloCredentials(secret).sign(buffer, 0, nonce, timestampMs);
        }
        return bytes;
    }

    /** Offer until accepted (10 s at most). */
    static void send(final Publication publication, final byte[] bytes) {
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (publication.offer(buffer) < 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("offer not accepted: " + publication);
            }
            Thread.onSpinWait();
        }
    }
}
