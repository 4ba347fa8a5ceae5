package io.dlion.aeron.client;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.aeron.Subscription;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.dlion.aeron.wire.HandOverBeginFlyweight;
import io.dlion.aeron.wire.HandOverChunkFlyweight;
import io.dlion.aeron.wire.Hmac;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.dist.DLionCheckpoint;
import io.dlion.exchange.JoinNotice;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

/**
 * The joining worker's side of the network hand-over ({@link AeronHandOver}): the subscription to the server's relay
 * (the first slice's result channel, the hand-over stream + 1), open from {@link #subscribe()} (before the exchange's
 * join HELLO) until the hand-over is taken, and the reading and checking of its donor's frames. Not thread-safe: the
 * training thread only.
 */
final class HandOverJoiner implements AutoCloseable {
    private final AeronHandOver.Context ctx;
    private final Hmac mac;
    private final long runHash;
    private final HandOverBeginFlyweight beginIn = new HandOverBeginFlyweight();
    private final HandOverChunkFlyweight chunkIn = new HandOverChunkFlyweight();
    private final MessageHeaderFlyweight headerIn = new MessageHeaderFlyweight();
    private byte[] received = new byte[0];
    private Subscription subscription;
    private long framesIgnored;
    private final ControlledFragmentHandler drain = this::onOtherFrame;

    /**
     * @param ctx the hand-over's concluded configuration.
     * @param mac HMAC of the job's secret, or null for a job without one.
     */
    HandOverJoiner(final AeronHandOver.Context ctx, final Hmac mac) {
        this.ctx = ctx;
        this.mac = mac;
        this.runHash = ctx.run().runHash();
    }

    /** Subscribe to the relay now, if not yet. */
    void subscribe() {
        if (subscription == null) {
            subscription = ctx.aeron().addSubscription(ctx.slice().resultChannel(), ctx.streamId() + 1);
        }
    }

    /**
     * While this worker waits to learn its own join (and before {@link #take}), read and drop the frames of other joining
     * workers' hand-overs: the relay's publication waits for its slowest subscriber (fc=min), so a subscription nobody
     * reads would hold back another worker's hand-over once its window is full. Two workers restarted together did exactly
     * that in the chaos soak: the first's hand-over stopped after 251,720 of 1,502,624 bytes while the second waited for
     * its own join. A frame of this worker's own transfer stays in the log for {@link #take}, and so do the frames after it.
     *
     * @return frames read.
     */
    int drainOthers() {
        return subscription == null ? 0 : subscription.controlledPoll(drain, ctx.fragmentLimit());
    }

    private ControlledFragmentHandler.Action onOtherFrame(final DirectBuffer buffer, final int offset, final int length, final Header header) {
        if (header.flags() == FrameDescriptor.UNFRAGMENTED && length >= MessageHeaderFlyweight.HEADER_LENGTH) {
            final MessageHeaderFlyweight msg = headerIn.wrapForRead(buffer, offset);
            if (msg.magic() == (MessageHeaderFlyweight.MAGIC & 0xFF) && msg.jobId() == ctx.jobId() && msg.joiningWorker() == ctx.workerId()) {
                return ControlledFragmentHandler.Action.ABORT; // this worker's own: for take()
            }
        }
        framesIgnored++;
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    /** @return frames of the relay stream the joining worker ignored: another joining worker's, unauthenticated, or malformed. */
    long framesIgnored() {
        return framesIgnored;
    }

    /**
     * Wait for the donor's hand-over and read it into a checkpoint, checked end to end; the subscription is closed
     * afterwards, so that it never holds back a later hand-over.
     *
     * @param notice        this worker's first round and donor.
     * @param timeoutMillis longest wait.
     * @param idle          run while waiting.
     * @return the donor's checkpoint.
     * @throws IOException          when it is refused or cannot be read.
     * @throws TimeoutException     when it did not complete in time.
     * @throws InterruptedException when interrupted.
     */
    DLionCheckpoint take(final JoinNotice notice, final long timeoutMillis, final Runnable idle)
        throws IOException, TimeoutException, InterruptedException {
        subscribe();
        final Incoming in = new Incoming(notice);
        final FragmentHandler handler = in::onFragment;
        final long startNs = ctx.nanoClock().nanoTime();
        final long deadline = startNs + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        final long beginDeadline = startNs + TimeUnit.MILLISECONDS.toNanos(ctx.beginTimeoutMs());
        final long stallNs = TimeUnit.MILLISECONDS.toNanos(ctx.stallTimeoutMs());
        final IdleStrategy idleStrategy = new BackoffIdleStrategy(100, 10, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MILLISECONDS.toNanos(1));
        try {
            while (!in.done()) {
                final int work = subscription.poll(handler, ctx.fragmentLimit());
                if (in.error != null) {
                    throw in.error;
                }
                if (in.done()) {
                    break;
                }
                final long now = ctx.nanoClock().nanoTime();
                if (!in.begun && now - beginDeadline > 0) {
                    throw timedOut(in, "did not begin within " + ctx.beginTimeoutMs() + " ms");
                }
                if (in.begun && now - in.lastPieceNs > stallNs) {
                    throw timedOut(in, "stalled: nothing for " + ctx.stallTimeoutMs() + " ms (is the donor alive?)");
                }
                if (now - deadline > 0) {
                    throw timedOut(in, "did not complete within " + timeoutMillis + " ms");
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted while taking a hand-over");
                }
                idle.run();
                idleStrategy.idle(work);
            }
            in.close();
            final byte[] digest = in.digest.digest();
            if (!MessageDigest.isEqual(digest, in.expectedDigest)) {
                throw new IOException("worker " + ctx.workerId() + ": hand-over from worker " + notice.donor() + " refused: SHA-256 of the "
                    + in.length + " bytes received is " + HexFormat.of().formatHex(digest) + ", the donor sent "
                    + HexFormat.of().formatHex(in.expectedDigest));
            }
            final DLionCheckpoint checkpoint = DLionCheckpoint.read(in.file);
            ctx.run().check("hand-over from worker " + notice.donor(), checkpoint.run());
            return checkpoint;
        } catch (final IOException | TimeoutException | InterruptedException | RuntimeException ex) {
            in.close();
            if (in.file != null) {
                Files.deleteIfExists(in.file);
            }
            throw ex;
        } finally {
            // a subscriber that does not poll would hold back the relay (fc=min): never keep it
            CloseHelper.close(subscription);
            subscription = null;
        }
    }

    /** The hand-over {@code in} timed out: {@code why}, and what had arrived. */
    private TimeoutException timedOut(final Incoming in, final String why) {
        return new TimeoutException("worker " + ctx.workerId() + ": the hand-over from donor worker " + in.notice.donor() + " for round "
            + in.notice.round() + " " + why + ": " + in.progress());
    }

    /** A hand-over being received. */
    private final class Incoming {
        final JoinNotice notice;
        final byte[] expectedDigest = new byte[HandOverBeginFlyweight.DIGEST_LENGTH];
        final MessageDigest digest = AeronHandOver.newDigest();
        int session;
        boolean begun;
        /** When the last piece of this hand-over arrived (the begin frame's time before the first). */
        long lastPieceNs;
        long length;
        long received;
        Path file;
        FileChannel channel;
        IOException error;

        Incoming(final JoinNotice notice) {
            this.notice = notice;
        }

        boolean done() {
            return begun && received == length;
        }

        String progress() {
            return begun ? String.format("%,d of %,d bytes received", received, length)
                : "no hand-over began (is the donor alive, and does it reach the server?); " + framesIgnored + " frames ignored";
        }

        void onFragment(final DirectBuffer buffer, final int offset, final int length, final Header header) {
            if (error != null || done()) {
                return;
            }
            if (header.flags() != FrameDescriptor.UNFRAGMENTED || length < MessageHeaderFlyweight.HEADER_LENGTH) {
                framesIgnored++;
                return;
            }
            final MessageHeaderFlyweight msg = headerIn.wrapForRead(buffer, offset);
            if (msg.magic() != (MessageHeaderFlyweight.MAGIC & 0xFF) || msg.version() != MessageHeaderFlyweight.VERSION
                || msg.jobId() != ctx.jobId() || msg.joiningWorker() != ctx.workerId() || msg.round() != notice.round()
                || msg.workerId() != notice.donor()) {
                framesIgnored++;
                return;
            }
            try {
                if (msg.type() == MessageType.HANDOVER_BEGIN) {
                    onBegin(beginIn.wrapForRead(buffer, offset), length, header.sessionId());
                } else if (msg.type() == MessageType.HANDOVER_CHUNK && begun && header.sessionId() == session
                    && length > HandOverChunkFlyweight.DATA_OFFSET) {
                    onChunk(chunkIn.wrapForRead(buffer, offset), length);
                } else if (msg.type() == MessageType.HANDOVER_CHUNK && !begun) {
                    // a piece of this worker's own transfer before its begin frame: the begin went out before this
                    // subscription listened, and the relay cannot send it again; waiting would only time out
                    error = new IOException("worker " + ctx.workerId() + ": the hand-over from worker " + notice.donor() + " for round "
                        + notice.round() + " began before this worker listened to the relay (a piece at byte "
                        + chunkIn.wrapForRead(buffer, offset).payloadOffset() + " came first); subscribe before the exchange's join HELLO"
                        + " (AeronHandOver.Context.join(true), or prepareTake()) and join again");
                } else {
                    framesIgnored++;
                }
            } catch (final IOException ex) {
                error = ex;
            }
        }

        private void onBegin(final HandOverBeginFlyweight begin, final int frameLength, final int sessionId) throws IOException {
            if (begun || !begin.hasValidLength(frameLength) || (mac != null && !begin.verify(mac))) {
                framesIgnored++;
                return;
            }
            if (begin.runId() != runHash) {
                error = new IOException("worker " + ctx.workerId() + ": hand-over from worker " + notice.donor() + " refused: it is of run #"
                    + Long.toHexString(begin.runId()) + ", this worker's " + ctx.run() + " is run #" + Long.toHexString(runHash)
                    + " (give every worker of the job the same run id)");
                return;
            }
            if (begin.payloadLength() <= 0 || begin.payloadLength() > ctx.maxBytes()) {
                error = new IOException("worker " + ctx.workerId() + ": hand-over from worker " + notice.donor() + " refused: length "
                    + begin.payloadLength() + " not in [1, maxBytes=" + ctx.maxBytes() + "]");
                return;
            }
            begin.digest(expectedDigest);
            length = begin.payloadLength();
            session = sessionId;
            file = Files.createTempFile(ctx.tempDir(), "dlion-handover-" + ctx.workerId() + "-" + notice.round() + "-", ".zip");
            file.toFile().deleteOnExit();
            channel = FileChannel.open(file, StandardOpenOption.WRITE);
            lastPieceNs = ctx.nanoClock().nanoTime();
            begun = true;
        }

        private void onChunk(final HandOverChunkFlyweight chunk, final int frameLength) throws IOException {
            final int n = frameLength - HandOverChunkFlyweight.DATA_OFFSET;
            lastPieceNs = ctx.nanoClock().nanoTime();
            if (chunk.payloadOffset() != received || received + n > length) {
                throw new IOException("worker " + ctx.workerId() + ": hand-over from worker " + notice.donor() + " broken: a piece at byte "
                    + chunk.payloadOffset() + " of " + n + " bytes, expected byte " + received + " of " + length);
            }
            if (HandOverJoiner.this.received.length < n) {
                HandOverJoiner.this.received = new byte[n];
            }
            final byte[] data = HandOverJoiner.this.received;
            chunk.header().buffer().getBytes(chunk.dataOffset(), data, 0, n);
            digest.update(data, 0, n);
            final ByteBuffer src = ByteBuffer.wrap(data, 0, n);
            long at = received;
            while (src.hasRemaining()) {
                at += channel.write(src, at);
            }
            received += n;
        }

        void close() throws IOException {
            if (channel != null) {
                channel.close();
                channel = null;
            }
        }
    }

    @Override
    public void close() {
        CloseHelper.close(subscription);
        subscription = null;
    }
}
