package io.dlion.aeron;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import io.aeron.Publication;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Helpers for tests that talk to a server through a raw publication: the job's secret and a blocking offer. The frames
 * themselves are built by {@link io.dlion.aeron.fault.GarbageFrames#vote} and {@link io.dlion.aeron.fault.GarbageFrames#hello}.
 */
final class Frames {
    static final byte[] SECRET = "dl4j-lion test secret, 32 bytes!".getBytes(StandardCharsets.US_ASCII);

    private Frames() {
    }

    /** Offer until accepted (10 s at most). */
    static void send(final Publication publication, final byte[] bytes) {
        send(publication, new UnsafeBuffer(bytes));
    }

    /** Offer the whole buffer until accepted (10 s at most). */
    static void send(final Publication publication, final DirectBuffer frame) {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (publication.offer(frame) < 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("offer not accepted: " + publication);
            }
            Thread.onSpinWait();
        }
    }
}
