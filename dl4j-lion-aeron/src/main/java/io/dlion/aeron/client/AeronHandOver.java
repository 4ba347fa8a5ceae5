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
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import javax.crypto.Mac;

import io.aeron.Aeron;
import io.aeron.ChannelUri;
import io.aeron.CommonContext;
import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.ShardEndpoint;
import io.dlion.aeron.wire.HandOverBeginFlyweight;
import io.dlion.aeron.wire.HandOverChunkFlyweight;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.dist.DLionAccumulator;
import io.dlion.dist.DLionCheckpoint;
import io.dlion.dist.JobRun;
import io.dlion.exchange.JoinNotice;
import io.dlion.exchange.VoteExchange;
import io.dlion.job.HandOver;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

/**
 * A {@link HandOver} over Aeron, relayed by the server of the first shard: no shared directory is needed.
 * <p>
 * <b>Donor.</b> {@link #give} writes the donor's {@link DLionCheckpoint} (parameters, updater state, round, job and run)
 * to a local temporary file, takes its SHA-256, and queues it; nothing is sent yet. {@link #doWork()} sends a
 * {@code HANDOVER_BEGIN} (job, run id, joining worker, first round, length, digest, and an HMAC of the job's secret when
 * it has one) and then {@code HANDOVER_CHUNK}s of the file, at most {@link Context#framesPerCycle()} frames per call and
 * only as many as the publication takes without waiting. It is called between rounds by the job and, through
 * {@link AeronVoteExchange.Context#sideAgent(Agent)}, on every pass of the exchange's wait for a result: the donor
 * submits its own vote at once and the hand-over goes out while it waits for the round, which cannot complete before
 * the joining worker votes. A hand-over not sent within {@link Context#timeoutMs()} is abandoned, with a warning.
 * <p>
 * <b>Joining worker.</b> Made with {@link Context#join(boolean) join(true)}, it subscribes to the server's relay before
 * its exchange says HELLO. {@link #take} reads the frames of its donor for its first round, writes the payload to a
 * local temporary file, and checks it: the begin frame's HMAC (when the job has a secret; others are ignored and
 * counted), the job and run ids (another's are refused with a message naming both), contiguous offsets, the total length
 * and the SHA-256 digest. It closes the subscription when done, so that it never holds back a later hand-over.
 * <p>
 * Not thread-safe: the training thread only.
 */
public final class AeronHandOver implements HandOver, Agent, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(AeronHandOver.class.getName());

    private final Context ctx;
    private final ExclusivePublication publication;
    private final Mac mac;
    private final long runHash;
    private final BufferClaim claim = new BufferClaim();
    private final HandOverBeginFlyweight beginOut = new HandOverBeginFlyweight();
    private final HandOverChunkFlyweight chunkOut = new HandOverChunkFlyweight();
    private final HandOverBeginFlyweight beginIn = new HandOverBeginFlyweight();
    private final HandOverChunkFlyweight chunkIn = new HandOverChunkFlyweight();
    private final MessageHeaderFlyweight headerIn = new MessageHeaderFlyweight();
    private final ArrayDeque<Outgoing> outgoing = new ArrayDeque<>();
    private final byte[] slice;
    private byte[] received = new byte[0];
    private Subscription subscription;
    private long framesIgnored;

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
     * Add the publication to the relay (and, for a joining worker, the subscription to it).
     *
     * @param ctx configuration, concluded here.
     */
    public AeronHandOver(final Context ctx) {
        this.ctx = ctx.conclude();
        this.mac = ctx.secret == null ? null : HandOverBeginFlyweight.mac(ctx.secret);
        this.runHash = ctx.run.runHash();
        ExclusivePublication pub = null;
        try {
            pub = ctx.aeron.addExclusivePublication(ctx.shard.voteChannel(), ctx.streamId);
            if (ctx.join) {
                subscription = ctx.aeron.addSubscription(ctx.shard.resultChannel(), ctx.streamId + 1);
            }
        } catch (final RuntimeException ex) {
            CloseHelper.quietClose(pub);
            throw ex;
        }
        this.publication = pub;
        this.slice = new byte[publication.maxPayloadLength() - HandOverChunkFlyweight.DATA_OFFSET];
    }

    @Override
    public String roleName() {
        return "dlion-handover-worker" + ctx.workerId;
    }

    @Override
    public String give(final JoinNotice notice, final DLionAccumulator accumulator) throws IOException {
        final Path file = Files.createTempFile(ctx.tempDir, "dlion-handover-" + notice.worker() + "-" + notice.round() + "-", ".zip");
        try {
            DLionCheckpoint.write(file, accumulator.model(), accumulator, ctx.run);
            final byte[] digest = sha256(file);
            final long length = Files.size(file);
            final FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
            outgoing.add(new Outgoing(notice, file, channel, length, digest,
                ctx.nanoClock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ctx.timeoutMs)));
            doWork();
            return String.format("through the server (stream %d): %,d bytes, sha256 %s, sent while this worker trains on", ctx.streamId,
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
    @Override
    public int doWork() {
        final Outgoing o = outgoing.peek();
        if (o == null) {
            return 0;
        }
        if (ctx.nanoClock.nanoTime() - o.deadlineNs > 0) {
            LOG.log(System.Logger.Level.WARNING, String.format("worker %d: hand-over to worker %d (round %d) abandoned after %d ms: %,d of %,d"
                + " bytes sent (is the joining worker alive?)", ctx.workerId, o.notice.worker(), o.notice.round(), ctx.timeoutMs, o.sent,
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
            beginOut.wrap(claim.buffer(), claim.offset()).encode(ctx.jobId, o.notice.round(), ctx.workerId, ctx.shard.shard(),
                o.notice.worker(), runHash, o.length, o.digest, mac);
            claim.commit();
            o.begun = true;
            frames++;
        }
        while (frames < ctx.framesPerCycle && o.sent < o.length) {
            final int n = (int) Math.min(slice.length, o.length - o.sent);
            if (!claim(HandOverChunkFlyweight.length(n))) {
                break;
            }
            try {
                readFully(o.channel, o.sent, n);
            } catch (final IOException ex) {
                claim.abort();
                finish(o);
                throw new UncheckedIOException("worker " + ctx.workerId + ": cannot read the hand-over file " + o.file, ex);
            }
            chunkOut.wrap(claim.buffer(), claim.offset()).encode(ctx.jobId, o.notice.round(), ctx.workerId, ctx.shard.shard(),
                o.notice.worker(), o.sent, slice, 0, n);
            claim.commit();
            o.sent += n;
            frames++;
        }
        if (o.sent == o.length) {
            LOG.log(System.Logger.Level.INFO, String.format("worker %d: hand-over to worker %d (round %d) sent: %,d bytes", ctx.workerId,
                o.notice.worker(), o.notice.round(), o.length));
            finish(o);
        }
        return frames;
    }

    /** @return hand-overs given and not yet sent completely. */
    public int pending() {
        return outgoing.size();
    }

    /** @return frames of the relay stream the joining worker ignored: another joining worker's, unauthenticated, or malformed. */
    public long framesIgnored() {
        return framesIgnored;
    }

    /**
     * Check that this hand-over works with the job's exchange: an {@link AeronVoteExchange} of the same job, worker and
     * secret, whose first shard is this hand-over's and whose side agent is this hand-over (a donor sends on the passes
     * of its exchange's wait, see the class comment). A joining exchange gets the relay subscribed now, if it is not yet.
     * Another exchange (one that wraps an {@code AeronVoteExchange}, e.g. to inject faults) is not checked.
     *
     * @param exchange the job's exchange.
     * @throws IllegalArgumentException naming the setting that is missing or differs.
     */
    @Override
    public void bind(final VoteExchange exchange) {
        if (!(exchange instanceof AeronVoteExchange)) {
            return;
        }
        final AeronVoteExchange.Context x = ((AeronVoteExchange) exchange).context();
        if (x.sideAgent() != this) {
            throw new IllegalArgumentException("AeronVoteExchange.Context.sideAgent must be this hand-over (.sideAgent(handOver) on the"
                + " exchange's context), got " + (x.sideAgent() == null ? "none" : x.sideAgent().roleName()) + ": a donor sends the"
                + " hand-over while its exchange waits for the joining worker's first round, which cannot complete without it");
        }
        if (x.jobId() != ctx.jobId || x.workerId() != ctx.workerId || x.workers() != ctx.workers) {
            throw new IllegalArgumentException("AeronHandOver.Context jobId, workerId and workers must be the exchange's: hand-over "
                + ctx.jobId + "/" + ctx.workerId + "/" + ctx.workers + ", exchange " + x.jobId() + "/" + x.workerId() + "/" + x.workers());
        }
        if (!Arrays.equals(x.secret(), ctx.secret)) {
            throw new IllegalArgumentException("AeronHandOver.Context.secret must be the exchange's (the job's secret): a joining worker"
                + " ignores a hand-over without the job's HMAC");
        }
        final ShardEndpoint first = x.shards().get(0);
        if (!first.voteChannel().equals(ctx.shard.voteChannel()) || !first.resultChannel().equals(ctx.shard.resultChannel())) {
            throw new IllegalArgumentException("AeronHandOver.Context.shard must be the exchange's first shard, with the identical vote and"
                + " result channel strings (the relay's frames arrive where the results do), got " + ctx.shard + ", the exchange's is " + first);
        }
        if (x.join()) {
            prepareTake();
        }
    }

    /** Subscribe to the relay now, if not yet: before the exchange's join HELLO, so that no frame of the donor's is missed. */
    @Override
    public void prepareTake() {
        if (subscription == null) {
            subscription = ctx.aeron.addSubscription(ctx.shard.resultChannel(), ctx.streamId + 1);
        }
    }

    @Override
    public DLionCheckpoint take(final JoinNotice notice, final long timeoutMillis, final Runnable idle)
        throws IOException, TimeoutException, InterruptedException {
        prepareTake();
        final Incoming in = new Incoming(notice);
        final FragmentHandler handler = in::onFragment;
        final long deadline = ctx.nanoClock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        final IdleStrategy idleStrategy = new BackoffIdleStrategy(100, 10, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MILLISECONDS.toNanos(1));
        try {
            while (!in.done()) {
                final int work = subscription.poll(handler, ctx.fragmentLimit);
                if (in.error != null) {
                    throw in.error;
                }
                if (in.done()) {
                    break;
                }
                if (ctx.nanoClock.nanoTime() - deadline > 0) {
                    throw new TimeoutException("worker " + ctx.workerId + ": the hand-over from donor worker " + notice.donor() + " for round "
                        + notice.round() + " did not complete within " + timeoutMillis + " ms: " + in.progress());
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
                throw new IOException("worker " + ctx.workerId + ": hand-over from worker " + notice.donor() + " refused: SHA-256 of the "
                    + in.length + " bytes received is " + HexFormat.of().formatHex(digest) + ", the donor sent "
                    + HexFormat.of().formatHex(in.expectedDigest));
            }
            final DLionCheckpoint checkpoint = DLionCheckpoint.read(in.file);
            ctx.run.check("hand-over from worker " + notice.donor(), checkpoint.run());
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

    /** A hand-over being received. */
    private final class Incoming {
        final JoinNotice notice;
        final byte[] expectedDigest = new byte[HandOverBeginFlyweight.DIGEST_LENGTH];
        final MessageDigest digest = newDigest();
        int session;
        boolean begun;
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
                || msg.jobId() != ctx.jobId || msg.voterMask() != 1L << ctx.workerId || msg.round() != notice.round()
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
                error = new IOException("worker " + ctx.workerId + ": hand-over from worker " + notice.donor() + " refused: it is of run #"
                    + Long.toHexString(begin.runId()) + ", this worker's " + ctx.run + " is run #" + Long.toHexString(runHash)
                    + " (give every worker of the job the same run id)");
                return;
            }
            if (begin.payloadLength() <= 0 || begin.payloadLength() > ctx.maxBytes) {
                error = new IOException("worker " + ctx.workerId + ": hand-over from worker " + notice.donor() + " refused: length "
                    + begin.payloadLength() + " not in [1, maxBytes=" + ctx.maxBytes + "]");
                return;
            }
            begin.digest(expectedDigest);
            length = begin.payloadLength();
            session = sessionId;
            file = Files.createTempFile(ctx.tempDir, "dlion-handover-" + ctx.workerId + "-" + notice.round() + "-", ".zip");
            file.toFile().deleteOnExit();
            channel = FileChannel.open(file, StandardOpenOption.WRITE);
            begun = true;
        }

        private void onChunk(final HandOverChunkFlyweight chunk, final int frameLength) throws IOException {
            final int n = frameLength - HandOverChunkFlyweight.DATA_OFFSET;
            if (chunk.payloadOffset() != received || received + n > length) {
                throw new IOException("worker " + ctx.workerId + ": hand-over from worker " + notice.donor() + " broken: a slice at byte "
                    + chunk.payloadOffset() + " of " + n + " bytes, expected byte " + received + " of " + length);
            }
            if (AeronHandOver.this.received.length < n) {
                AeronHandOver.this.received = new byte[n];
            }
            final byte[] data = AeronHandOver.this.received;
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

    private boolean claim(final int length) {
        final long result = publication.tryClaim(length, claim);
        if (result > 0) {
            return true;
        }
        if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED) {
            throw new IllegalStateException("worker " + ctx.workerId + ": hand-over publication cannot send (" + result + "): "
                + ctx.shard.voteChannel());
        }
        return false;
    }

    private void readFully(final FileChannel channel, final long position, final int n) throws IOException {
        final ByteBuffer dst = ByteBuffer.wrap(slice, 0, n);
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
        final MessageDigest digest = newDigest();
        final byte[] buf = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(file)) {
            for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
                digest.update(buf, 0, n);
            }
        }
        return digest.digest();
    }

    private static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (final NoSuchAlgorithmException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** Close the publication and subscription; hand-overs not sent completely are dropped and their files deleted. */
    @Override
    public void close() {
        while (!outgoing.isEmpty()) {
            finish(outgoing.peek());
        }
        CloseHelper.closeAll(subscription, publication);
    }

    @Override
    public void onClose() {
        close();
    }

    @Override
    public String toString() {
        return "network hand-over relayed by the server (stream " + ctx.streamId + ")";
    }

    /**
     * Configuration of a worker's network hand-over. Required: {@link #aeron(Aeron)}, {@link #jobId(int)},
     * {@link #workerId(int)}, {@link #workers(int)}, {@link #shard(ShardEndpoint)} (the first shard's channels: its
     * server relays).
     */
    public static final class Context {
        private Aeron aeron;
        private int jobId;
        private boolean jobIdSet;
        private int workerId = -1;
        private int workers;
        private JobRun run;
        private byte[] secret;
        private ShardEndpoint shard;
        private int streamId;
        private boolean join;
        private long timeoutMs = TIMEOUT_MS_DEFAULT;
        private int framesPerCycle = FRAMES_PER_CYCLE_DEFAULT;
        private int fragmentLimit = Configuration.fragmentLimit();
        private long maxBytes = MAX_BYTES_DEFAULT;
        private Path tempDir = Path.of(System.getProperty("java.io.tmpdir"));
        private NanoClock nanoClock = SystemNanoClock.INSTANCE;

        /** Default of {@link #timeoutMs(long)}: two minutes. */
        public static final long TIMEOUT_MS_DEFAULT = 120_000;
        /** Default of {@link #framesPerCycle(int)}: 16 frames (128 KiB at mtu 8k) per call. */
        public static final int FRAMES_PER_CYCLE_DEFAULT = 16;
        /** Default of {@link #maxBytes(long)}: 64 GiB. */
        public static final long MAX_BYTES_DEFAULT = 64L << 30;

        /**
         * Validate once.
         *
         * @return this for a fluent API.
         * @throws IllegalArgumentException naming the field that is wrong.
         */
        public Context conclude() {
            Objects.requireNonNull(aeron, "aeron");
            if (!jobIdSet) {
                throw new IllegalArgumentException("jobId must be set");
            }
            if (workers < 1 || workers > Long.SIZE) {
                throw new IllegalArgumentException("workers must be in [1, 64], got " + workers);
            }
            if (workerId < 0 || workerId >= workers) {
                throw new IllegalArgumentException("workerId must be in [0, workers=" + workers + "), got " + workerId);
            }
            if (run == null) {
                run = new JobRun(jobId, "");
            }
            if (run.jobId() != jobId) {
                throw new IllegalArgumentException("run must be of jobId=" + jobId + ", got " + run);
            }
            if (secret != null && secret.length < HelloCredentials.MIN_SECRET_LENGTH) {
                throw new IllegalArgumentException("secret must be at least " + HelloCredentials.MIN_SECRET_LENGTH + " bytes, got "
                    + secret.length);
            }
            Objects.requireNonNull(shard, "shard");
            requireSharedEndpoint(shard.resultChannel());
            if (streamId == 0) {
                streamId = shard.voteStreamId() + Configuration.HANDOVER_STREAM_OFFSET;
            }
            if (streamId == shard.voteStreamId() || streamId == shard.resultStreamId() || streamId + 1 == shard.voteStreamId()
                || streamId + 1 == shard.resultStreamId()) {
                throw new IllegalArgumentException("streamId and streamId + 1 must differ from the shard's vote and result stream ids, got "
                    + streamId);
            }
            if (timeoutMs <= 0) {
                throw new IllegalArgumentException("timeoutMs must be > 0, got " + timeoutMs);
            }
            if (framesPerCycle < 1) {
                throw new IllegalArgumentException("framesPerCycle must be >= 1, got " + framesPerCycle);
            }
            if (fragmentLimit < 1) {
                throw new IllegalArgumentException("fragmentLimit must be >= 1, got " + fragmentLimit);
            }
            if (maxBytes < 1) {
                throw new IllegalArgumentException("maxBytes must be >= 1, got " + maxBytes);
            }
            Objects.requireNonNull(tempDir, "tempDir");
            Objects.requireNonNull(nanoClock, "nanoClock");
            return this;
        }

        /**
         * The relay's frames come to the endpoint the exchange's HELLO named, on another stream: the hand-over's
         * subscription must share the exchange's result endpoint. On a UDP channel with an ephemeral port that takes an
         * Aeron tag ({@code Channels.udpResultsSubscription(host, streams, tag)}): without one, each subscription gets a port
         * of its own, and the server never sends to the hand-over's.
         */
        private static void requireSharedEndpoint(final String resultChannel) {
            final ChannelUri uri = ChannelUri.parse(resultChannel);
            final String endpoint = uri.get(CommonContext.ENDPOINT_PARAM_NAME);
            if (CommonContext.UDP_MEDIA.equals(uri.media()) && endpoint != null && endpoint.endsWith(":0")
                && uri.get(CommonContext.TAGS_PARAM_NAME) == null) {
                throw new IllegalArgumentException("shard's result channel has an ephemeral port (" + endpoint + ") and no tags: the"
                    + " hand-over's subscription would get a port of its own, which the server never sends to; give the exchange and the"
                    + " hand-over the same tagged channel, Channels.udpResultsSubscription(host, streams, aeron.nextCorrelationId()): "
                    + resultChannel);
            }
        }

        /**
         * @param aeron client; not closed by the hand-over.
         * @return this for a fluent API.
         */
        public Context aeron(final Aeron aeron) {
            this.aeron = aeron;
            return this;
        }

        /**
         * @param jobId of the job, as given to the server.
         * @return this for a fluent API.
         */
        public Context jobId(final int jobId) {
            this.jobId = jobId;
            this.jobIdSet = true;
            return this;
        }

        public int jobId() {
            return jobId;
        }

        /**
         * @param workerId this worker.
         * @return this for a fluent API.
         */
        public Context workerId(final int workerId) {
            this.workerId = workerId;
            return this;
        }

        public int workerId() {
            return workerId;
        }

        /**
         * @param workers of the job.
         * @return this for a fluent API.
         */
        public Context workers(final int workers) {
            this.workers = workers;
            return this;
        }

        public int workers() {
            return workers;
        }

        /**
         * @param run the job and run id: written into the checkpoints this worker gives, required of those it takes
         *            (default: the job id and no run id).
         * @return this for a fluent API.
         */
        public Context run(final JobRun run) {
            this.run = run;
            return this;
        }

        public JobRun run() {
            return run;
        }

        /**
         * @param secret the job's shared secret (as given to the server): the begin frame carries its HMAC, and a joining
         *               worker ignores one without it; null for a job without a secret.
         * @return this for a fluent API.
         */
        public Context secret(final byte[] secret) {
            this.secret = secret == null ? null : secret.clone();
            return this;
        }

        /**
         * @param shard the first shard's endpoint: hand-overs go up its vote channel and come down its result channel. With
         *              UDP results sent to the workers the server accepted (manual multi-destination-cast), give the exchange's
         *              exact endpoint, with a tagged result channel ({@code Channels.udpResultsSubscription(host, workers, tag)}): the
         *              relayed frames then reach the same endpoint and port as the results.
         * @return this for a fluent API.
         */
        public Context shard(final ShardEndpoint shard) {
            this.shard = shard;
            return this;
        }

        public ShardEndpoint shard() {
            return shard;
        }

        /**
         * @param streamId of the hand-overs on the vote channel, as the server's; they come down the result channel on
         *                 {@code streamId + 1}. Default (0): the shard's vote stream id +
         *                 {@link Configuration#HANDOVER_STREAM_OFFSET}, as the server's default.
         * @return this for a fluent API.
         */
        public Context streamId(final int streamId) {
            this.streamId = streamId;
            return this;
        }

        public int streamId() {
            return streamId;
        }

        /**
         * @param join true for a worker that rejoins: it subscribes to the relay at once, before its exchange's HELLO.
         * @return this for a fluent API.
         */
        public Context join(final boolean join) {
            this.join = join;
            return this;
        }

        public boolean join() {
            return join;
        }

        /**
         * @param timeoutMs how long a donor tries to send one hand-over before it abandons it.
         * @return this for a fluent API.
         */
        public Context timeoutMs(final long timeoutMs) {
            this.timeoutMs = timeoutMs;
            return this;
        }

        public long timeoutMs() {
            return timeoutMs;
        }

        /**
         * @param framesPerCycle most frames a donor sends per {@link AeronHandOver#doWork()}: the pacing of the donor's loop.
         * @return this for a fluent API.
         */
        public Context framesPerCycle(final int framesPerCycle) {
            this.framesPerCycle = framesPerCycle;
            return this;
        }

        public int framesPerCycle() {
            return framesPerCycle;
        }

        /**
         * @param fragmentLimit fragments a joining worker reads per poll.
         * @return this for a fluent API.
         */
        public Context fragmentLimit(final int fragmentLimit) {
            this.fragmentLimit = fragmentLimit;
            return this;
        }

        /**
         * @param maxBytes longest payload a joining worker accepts.
         * @return this for a fluent API.
         */
        public Context maxBytes(final long maxBytes) {
            this.maxBytes = maxBytes;
            return this;
        }

        /**
         * @param tempDir local directory of the temporary files (the donor's checkpoint, the received one).
         * @return this for a fluent API.
         */
        public Context tempDir(final Path tempDir) {
            this.tempDir = tempDir;
            return this;
        }

        /**
         * @param nanoClock for the timeouts.
         * @return this for a fluent API.
         */
        public Context nanoClock(final NanoClock nanoClock) {
            this.nanoClock = nanoClock;
            return this;
        }
    }
}
