package io.dlion.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;

import io.aeron.Publication;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.ResultChunkFlyweight;
import io.dlion.codec.CountEncoding;
import io.dlion.vote.VoterSet;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Helpers for tests that talk to a server through a raw publication: the job's secret, a blocking offer and a server's
 * AVERAGE result chunk ({@link PlayedServer} plays the server itself). Vote and HELLO frames are built by
 * {@link GarbageFrames#vote} and {@link GarbageFrames#hello}.
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
    public static byte[] averageResult(final int job, final long round, final int slice, final ChunkLayout layout, final int chunk,
        final long voterMask, final long[][] countPlanes) {
        return averageResult(job, round, slice, layout, chunk, new VoterSet(Long.SIZE).word(0, voterMask), countPlanes);
    }

    /** A server's AVERAGE result chunk: bit planes of the +1 count of the workers in {@code voters}. */
    public static byte[] averageResult(final int job, final long round, final int slice, final ChunkLayout layout, final int chunk,
        final VoterSet voters, final long[][] countPlanes) {
        final int wordOffset = layout.wordOffset(chunk);
        final int words = layout.wordsOf(chunk);
        final CountEncoding encoding = new CountEncoding(voters.count());
        final byte[] bytes = new byte[ResultChunkFlyweight.length(voters.wordCount(), encoding, layout.paramCount(), wordOffset, wordOffset + words)];
        new ResultChunkFlyweight().wrap(new UnsafeBuffer(bytes), 0).encode(Encoding.COUNT_PLANES, job, round, wordOffset, words, slice, voters,
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
