package io.dlion.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.HelloAckFlyweight;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.aeron.wire.ResultChunkFlyweight;
import io.dlion.codec.CountEncoding;
import io.dlion.vote.VoterSet;
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

    /**
     * A server's AVERAGE result chunk for a job of at most 64 workers (a voter set of one word).
     *
     * @param voterMask bit i: worker i is counted.
     */
    public static byte[] averageResult(final int job, final long round, final int shard, final ChunkLayout layout, final int chunk,
        final long voterMask, final long[][] countPlanes) {
        return averageResult(job, round, shard, layout, chunk, new VoterSet(Long.SIZE).word(0, voterMask), countPlanes);
    }

    /** A server's AVERAGE result chunk: bit planes of the +1 count of the workers in {@code voters}. */
    public static byte[] averageResult(final int job, final long round, final int shard, final ChunkLayout layout, final int chunk,
        final VoterSet voters, final long[][] countPlanes) {
        final int wordOffset = layout.wordOffset(chunk);
        final int words = layout.wordsOf(chunk);
        final CountEncoding encoding = new CountEncoding(voters.count());
        final byte[] bytes = new byte[ResultChunkFlyweight.length(voters.wordCount(), encoding, layout.paramCount(), wordOffset, wordOffset + words)];
        new ResultChunkFlyweight().wrap(new UnsafeBuffer(bytes), 0).encode(Encoding.COUNT_PLANES, job, round, wordOffset, words, shard, voters,
            encoding, countPlanes, layout.paramCount(), wordOffset);
        return bytes;
    }

    /**
     * Write {@link #SECRET} into a file readable by its owner only, as {@code --secret-file} wants it.
     *
     * @param file the file (replaced).
     * @return the file.
     */
    public static Path writeSecret(final Path file) {
        try {
            Files.write(file, SECRET);
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
            return file;
        } catch (final IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Play a shard's server in the handshake: read the vote stream until a HELLO arrives (10 s at most; other frames are
     * skipped) and answer it with a HELLO_ACK on the result publication, which proves that publication's session to the
     * worker.
     *
     * @param votes   the server's vote subscription.
     * @param results the server's result publication.
     * @param secret  the job's secret, or null.
     */
    public static void answerHello(final Subscription votes, final ExclusivePublication results, final byte[] secret) {
        final HelloFlyweight hello = new HelloFlyweight();
        final byte[] ack = new byte[HelloAckFlyweight.SIGNED_LENGTH];
        final int[] length = {0};
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (length[0] == 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no HELLO on " + votes.channel());
            }
            votes.poll((buffer, offset, frameLength, header) -> {
                hello.wrapForRead(buffer, offset);
                if (length[0] == 0 && hello.header().type() == MessageType.HELLO) {
                    final MessageHeaderFlyweight h = hello.header();
                    length[0] = new HelloAckFlyweight().wrap(new UnsafeBuffer(ack), 0).encode(h.jobId(), HelloAckFlyweight.NO_JOIN,
                        h.chunkWordOffset(), JoinNoticeFlyweight.NO_DONOR, h.workerId(), h.shard(), hello.paramCount(), hello.nonce(),
                        results.sessionId(), secret == null ? null : new HelloCredentials(secret));
                }
            }, 1);
            Thread.onSpinWait();
        }
        send(results, new UnsafeBuffer(ack, 0, length[0]));
    }

    /**
     * Connect a worker against a server this test plays: run {@code connect} (which blocks until a server answers the
     * worker's HELLO) on another thread, answer the HELLO with {@link #answerHello}, and return what it built.
     *
     * @param connect builds the worker's exchange.
     * @param votes   the played server's vote subscription.
     * @param results the played server's result publication.
     * @param secret  the job's secret, or null.
     * @param <T>     the exchange's type.
     * @return the connected exchange (within 10 s).
     * @throws Exception when connecting failed or took longer.
     */
    public static <T> T connectAnswered(final Callable<T> connect, final Subscription votes, final ExclusivePublication results,
        final byte[] secret) throws Exception {
        final ExecutorService connecting = Executors.newSingleThreadExecutor();
        try {
            final Future<T> connected = connecting.submit(connect);
            answerHello(votes, results, secret);
            return connected.get(10, TimeUnit.SECONDS);
        } finally {
            connecting.shutdownNow();
        }
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
