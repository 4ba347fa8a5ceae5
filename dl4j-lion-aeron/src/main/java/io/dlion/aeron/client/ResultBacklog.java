package io.dlion.aeron.client;

import java.util.ArrayDeque;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The frames of one slice's result stream that a worker read off Aeron's log before it could use them, in the order they
 * came, up to a number of bytes. A worker that joined at round R and has not voted yet (it waits for its donor's
 * hand-over, then restores and fast-forwards its data) cannot apply the results of rounds R and later yet; left in
 * Aeron's log they would hold back every worker's results, since the result stream waits for its slowest receiver
 * ({@code fc=min}, a window of a few rounds). Kept here, they are handed to the link's frame handler again, oldest first,
 * from the worker's next round on, as if they were still in the log.
 * <p>
 * Frames are copied whole (header, body, frame tag) with the Aeron session and flags they came with, so that every check
 * the link makes is made on them when they are handed on, not when they are kept. Memory: one array per frame kept, from
 * a pool of the arrays freed; nothing while the backlog stays empty. Not thread-safe: the link's reader.
 */
final class ResultBacklog {
    /** A frame kept: its bytes, length, Aeron flags and session. */
    private static final class Frame {
        byte[] bytes;
        int length;
        byte flags;
        int sessionId;
    }

    private final long capacity;
    private final ArrayDeque<Frame> frames = new ArrayDeque<>();
    private final ArrayDeque<Frame> free = new ArrayDeque<>();
    private final UnsafeBuffer head = new UnsafeBuffer(new byte[0]);
    private long bytes;
    private long kept;

    /**
     * @param capacity most bytes of frames kept at once; 0 keeps none.
     */
    ResultBacklog(final long capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must be >= 0, got " + capacity);
        }
        this.capacity = capacity;
    }

    /** @return true when no frame is kept. */
    boolean isEmpty() {
        return frames.isEmpty();
    }

    /** @return bytes of the frames kept now. */
    long bytes() {
        return bytes;
    }

    /** @return frames kept since the backlog was made (including those handed on since). */
    long kept() {
        return kept;
    }

    /**
     * Keep a copy of a frame at the end, if it fits.
     *
     * @param buffer    holding the frame.
     * @param offset    of the frame.
     * @param length    of the frame.
     * @param flags     its Aeron frame flags.
     * @param sessionId the Aeron session it came on.
     * @return true when it was kept; false when the backlog is full (the frame must stay in Aeron's log).
     */
    boolean offer(final DirectBuffer buffer, final int offset, final int length, final byte flags, final int sessionId) {
        if (bytes + length > capacity) {
            return false;
        }
        Frame f = free.poll();
        if (f == null) {
            f = new Frame();
        }
        if (f.bytes == null || f.bytes.length < length) {
            f.bytes = new byte[length];
        }
        buffer.getBytes(offset, f.bytes, 0, length);
        f.length = length;
        f.flags = flags;
        f.sessionId = sessionId;
        frames.addLast(f);
        bytes += length;
        kept++;
        return true;
    }

    /** @return the oldest frame, wrapped from offset 0 for {@link #headLength()} bytes; valid until {@link #removeHead()}. */
    DirectBuffer head() {
        final Frame f = frames.getFirst();
        head.wrap(f.bytes, 0, f.length);
        return head;
    }

    /** @return the oldest frame's length. */
    int headLength() {
        return frames.getFirst().length;
    }

    /** @return the oldest frame's Aeron flags. */
    byte headFlags() {
        return frames.getFirst().flags;
    }

    /** @return the Aeron session the oldest frame came on. */
    int headSessionId() {
        return frames.getFirst().sessionId;
    }

    /** The oldest frame was handed on: drop it (its array goes back to the pool). */
    void removeHead() {
        final Frame f = frames.removeFirst();
        bytes -= f.length;
        free.addLast(f);
        if (frames.isEmpty()) {
            free.clear(); // a backlog is the exception (a worker catching up): give its memory back once it is read
        }
    }
}
