package io.dlion.aeron.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.logbuffer.BufferClaim;
import io.dlion.aeron.Channels;
import io.dlion.aeron.wire.HandOverBeginFlyweight;
import io.dlion.aeron.wire.HandOverChunkFlyweight;
import io.dlion.aeron.wire.Hmac;
import io.dlion.dist.DLionAccumulator;
import io.dlion.dist.DLionCheckpoint;
import io.dlion.exchange.JoinNotice;
import org.agrona.CloseHelper;

/**
 * The donor's side of the network hand-over ({@link AeronHandOver}): the publication up to the server's relay (the
 * first slice's vote channel, the hand-over stream), the hand-overs given and not yet sent, oldest first, and the
 * sending of their frames, a {@code HANDOVER_BEGIN} and then {@code HANDOVER_CHUNK}s of the checkpoint file, only as
 * many as the publication takes without waiting. Not thread-safe: the training thread only.
 */
final class HandOverDonor implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(AeronHandOver.class.getName());

    private final AeronHandOver.Context ctx;
    private ExclusivePublication publication;
    private String voteChannel;
    private final Hmac mac;
    private final long runHash;
    private final BufferClaim claim = new BufferClaim();
    private final HandOverBeginFlyweight beginOut = new HandOverBeginFlyweight();
    private final HandOverChunkFlyweight chunkOut = new HandOverChunkFlyweight();
    private final ArrayDeque<Outgoing> outgoing = new ArrayDeque<>();
    private final byte[] piece;

    /** A hand-over being sent. */
    private static final class Outgoing {
        final JoinNotice notice;
        final Path file;
        final FileChannel channel;
        final long length;
        final byte[] digest;
        final long deadlineNs;
        boolean begun;
        long sent;

        Outgoing(final JoinNotice notice, final Path file, final FileChannel channel, final long length, final byte[] digest,
            final long deadlineNs) {
            this.notice = notice;
            this.file = file;
            this.channel = channel;
            this.length = length;
            this.digest = digest;
            this.deadlineNs = deadlineNs;
        }
    }

    /**
     * @param ctx the hand-over's concluded configuration.
     * @param mac HMAC of the job's secret, or null for a job without one.
     */
    HandOverDonor(final AeronHandOver.Context ctx, final Hmac mac) {
        this.ctx = ctx;
        this.mac = mac;
        this.runHash = ctx.run().runHash();
        this.voteChannel = ctx.slice().voteChannel();
        this.publication = ctx.aeron().addExclusivePublication(voteChannel, ctx.streamId());
        this.piece = new byte[Math.min(publication.maxPayloadLength(), Channels.MAX_FRAME_LENGTH) - HandOverChunkFlyweight.DATA_OFFSET];
    }

    /**
     * The relay is the server of the first slice: when that slice moved to another rank ({@code SliceOwners}), the
     * hand-overs go up a new publication to it, a hand-over under way from its beginning.
     *
     * @param channel the first slice's vote channel now.
     */
    void follow(final String channel) {
        if (channel.equals(voteChannel)) {
            // keep the exchange's own string: the check on every pass of its wait is then one reference compare
            voteChannel = channel;
            return;
        }
        final ExclusivePublication old = publication;
        publication = ctx.aeron().addExclusivePublication(channel, ctx.streamId());
        voteChannel = channel;
        CloseHelper.quietClose(old);
        final Outgoing o = outgoing.peek();
        if (o != null) {
            o.begun = false;
            o.sent = 0;
        }
    }

    /**
     * Write the donor's checkpoint to a local temporary file, take its SHA-256 and queue it; the frames go out from
     * {@link #doWork()}.
     *
     * @param notice      the joining worker and its first round.
     * @param accumulator the donor's state.
     * @return where the hand-over goes, for the log.
     * @throws IOException when the checkpoint cannot be written.
     */
    String give(final JoinNotice notice, final DLionAccumulator accumulator) throws IOException {
        final Path file = Files.createTempFile(ctx.tempDir(), "dlion-handover-" + notice.worker() + "-" + notice.round() + "-", ".zip");
        try {
            DLionCheckpoint.write(file, accumulator.model(), accumulator, ctx.run());
            final byte[] digest = sha256(file);
            final long length = Files.size(file);
            final FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
            outgoing.add(new Outgoing(notice, file, channel, length, digest,
                ctx.nanoClock().nanoTime() + TimeUnit.MILLISECONDS.toNanos(ctx.timeoutMs())));
            doWork();
            return String.format("through the server (stream %d): %,d bytes, sha256 %s, sent while this worker trains on", ctx.streamId(),
                length, HexFormat.of().formatHex(digest));
        } catch (final IOException | RuntimeException ex) {
            Files.deleteIfExists(file);
            throw ex;
        }
    }

    /**
     * Send what the publication takes now of the hand-overs given, oldest first.
     *
     * @return frames sent.
     */
    int doWork() {
        final Outgoing o = outgoing.peek();
        if (o == null) {
            return 0;
        }
        if (ctx.nanoClock().nanoTime() - o.deadlineNs > 0) {
            LOG.log(System.Logger.Level.WARNING, String.format("worker %d: hand-over to worker %d (round %d) abandoned after %d ms: %,d of %,d"
                + " bytes sent (is the joining worker alive?)", ctx.workerId(), o.notice.worker(), o.notice.round(), ctx.timeoutMs(), o.sent,
                o.length));
            finish(o);
            return 1;
        }
        int frames = 0;
        if (!o.begun) {
            final int length = HandOverBeginFlyweight.length(mac != null);
            if (!claim(length)) {
                return 0;
            }
            beginOut.wrap(claim.buffer(), claim.offset()).encode(ctx.jobId(), o.notice.round(), ctx.workerId(), ctx.slice().slice(),
                o.notice.worker(), runHash, o.length, o.digest, mac);
            claim.commit();
            o.begun = true;
            frames++;
        }
        while (frames < ctx.framesPerCycle() && o.sent < o.length) {
            final int n = (int) Math.min(piece.length, o.length - o.sent);
            if (!claim(HandOverChunkFlyweight.length(n))) {
                break;
            }
            try {
                readFully(o.channel, o.sent, n);
            } catch (final IOException ex) {
                claim.abort();
                finish(o);
                throw new UncheckedIOException("worker " + ctx.workerId() + ": cannot read the hand-over file " + o.file, ex);
            }
            chunkOut.wrap(claim.buffer(), claim.offset()).encode(ctx.jobId(), o.notice.round(), ctx.workerId(), ctx.slice().slice(),
                o.notice.worker(), o.sent, piece, 0, n);
            claim.commit();
            o.sent += n;
            frames++;
        }
        if (o.sent == o.length) {
            LOG.log(System.Logger.Level.INFO, String.format("worker %d: hand-over to worker %d (round %d) sent: %,d bytes", ctx.workerId(),
                o.notice.worker(), o.notice.round(), o.length));
            finish(o);
        }
        return frames;
    }

    /** @return hand-overs given and not yet sent completely. */
    int pending() {
        return outgoing.size();
    }

    private boolean claim(final int length) {
        final long result = publication.tryClaim(length, claim);
        if (result > 0) {
            return true;
        }
        if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED) {
            throw new IllegalStateException("worker " + ctx.workerId() + ": hand-over publication cannot send (" + result + "): "
                + voteChannel);
        }
        return false;
    }

    private void readFully(final FileChannel channel, final long position, final int n) throws IOException {
        final ByteBuffer dst = ByteBuffer.wrap(piece, 0, n);
        long at = position;
        while (dst.hasRemaining()) {
            final int read = channel.read(dst, at);
            if (read < 0) {
                throw new IOException("unexpected end of file at byte " + at);
            }
            at += read;
        }
    }

    private void finish(final Outgoing o) {
        outgoing.remove(o);
        try {
            o.channel.close();
            Files.deleteIfExists(o.file);
        } catch (final IOException ex) {
            LOG.log(System.Logger.Level.WARNING, "cannot delete " + o.file + ": " + ex.getMessage());
        }
    }

    private static byte[] sha256(final Path file) throws IOException {
        final MessageDigest digest = AeronHandOver.newDigest();
        final byte[] buf = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(file)) {
            for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
                digest.update(buf, 0, n);
            }
        }
        return digest.digest();
    }

    /** Close the publication; hand-overs not sent completely are dropped and their files deleted. */
    @Override
    public void close() {
        while (!outgoing.isEmpty()) {
            finish(outgoing.peek());
        }
        CloseHelper.close(publication);
    }
}
