package io.dlion.aeron.client;

import java.io.IOException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.TimeoutException;

import io.aeron.Aeron;
import io.aeron.ChannelUri;
import io.aeron.CommonContext;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.wire.HandOverBeginFlyweight;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.dist.DLionAccumulator;
import io.dlion.dist.DLionCheckpoint;
import io.dlion.dist.JobRun;
import io.dlion.exchange.JoinNotice;
import io.dlion.exchange.VoteExchange;
import io.dlion.job.HandOver;
import org.agrona.CloseHelper;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

/**
 * A {@link HandOver} over Aeron, relayed by the server of the first slice: no shared directory is needed.
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
 * Parts, one role each: {@link HandOverDonor} (the publication up to the relay and the hand-overs being sent) and
 * {@link HandOverJoiner} (the subscription to the relay and the hand-over being received). This class is the relay's
 * client: the configuration, the checks that the set-up can work ({@link #bind}), and the {@link HandOver} and
 * {@link Agent} the job and the exchange call.
 * <p>
 * Not thread-safe: the training thread only.
 */
public final class AeronHandOver implements HandOver, Agent, AutoCloseable {
    private final Context ctx;
    private final HandOverDonor donor;
    private final HandOverJoiner joiner;
    /** The exchange {@link #bind} checked: its first slice's server relays the hand-overs. */
    private AeronVoteExchange exchange;

    /**
     * Add the publication to the relay (and, for a joining worker, the subscription to it).
     *
     * @param ctx configuration, concluded here.
     */
    public AeronHandOver(final Context ctx) {
        this.ctx = ctx.conclude();
        this.donor = new HandOverDonor(ctx, ctx.secret == null ? null : HandOverBeginFlyweight.mac(ctx.secret));
        try {
            this.joiner = new HandOverJoiner(ctx, ctx.secret == null ? null : HandOverBeginFlyweight.mac(ctx.secret));
            if (ctx.join) {
                joiner.subscribe();
            }
        } catch (final RuntimeException ex) {
            CloseHelper.quietClose(donor);
            throw ex;
        }
    }

    @Override
    public String roleName() {
        return "dlion-handover-worker" + ctx.workerId;
    }

    @Override
    public String give(final JoinNotice notice, final DLionAccumulator accumulator) throws IOException {
        return donor.give(notice, accumulator);
    }

    /**
     * Send what the publication takes now of the hand-overs given, oldest first; while this worker joins, read and drop
     * the relay's frames of other joining workers, so that its subscription never holds the relay back.
     *
     * @return frames sent and dropped.
     */
    @Override
    public int doWork() {
        if (exchange != null) {
            donor.follow(exchange.voteChannel(0)); // the relay is the first slice's server, wherever it is now
        }
        return donor.doWork() + joiner.drainOthers();
    }

    /** @return hand-overs given and not yet sent completely. */
    public int pending() {
        return donor.pending();
    }

    /** @return frames of the relay stream the joining worker ignored: another joining worker's, unauthenticated, or malformed. */
    public long framesIgnored() {
        return joiner.framesIgnored();
    }

    /**
     * Check that this hand-over works with the job's exchange: an {@link AeronVoteExchange} of the same job, worker and
     * secret, whose first slice is this hand-over's and whose side agent is this hand-over (a donor sends on the passes
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
        final SliceEndpoint first = x.slices().get(0);
        if (first.slice() != ctx.slice.slice() || !first.resultChannel().equals(ctx.slice.resultChannel())
            || (x.owners() == null && !first.voteChannel().equals(ctx.slice.voteChannel()))) {
            throw new IllegalArgumentException("AeronHandOver.Context.slice must be the exchange's first slice, with the identical vote and"
                + " result channel strings (the relay's frames arrive where the results do), got " + ctx.slice + ", the exchange's is " + first);
        }
        this.exchange = (AeronVoteExchange) exchange;
        if (x.join()) {
            prepareTake();
        }
    }

    /** Subscribe to the relay now, if not yet: before the exchange's join HELLO, so that no frame of the donor's is missed. */
    @Override
    public void prepareTake() {
        joiner.subscribe();
    }

    @Override
    public DLionCheckpoint take(final JoinNotice notice, final long timeoutMillis, final Runnable idle)
        throws IOException, TimeoutException, InterruptedException {
        return joiner.take(notice, timeoutMillis, idle);
    }

    /** @return a SHA-256 digest, for the payload's checksum. */
    static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (final NoSuchAlgorithmException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** Close the publication and subscription; hand-overs not sent completely are dropped and their files deleted. */
    @Override
    public void close() {
        CloseHelper.closeAll(joiner, donor);
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
     * {@link #workerId(int)}, {@link #workers(int)}, {@link #slice(SliceEndpoint)} (the first slice's channels: its
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
        private SliceEndpoint slice;
        private int streamId;
        private boolean join;
        private long timeoutMs = TIMEOUT_MS_DEFAULT;
        private long beginTimeoutMs = BEGIN_TIMEOUT_MS_DEFAULT;
        private long stallTimeoutMs = STALL_TIMEOUT_MS_DEFAULT;
        private int framesPerCycle = FRAMES_PER_CYCLE_DEFAULT;
        private int fragmentLimit = Configuration.fragmentLimit();
        private long maxBytes = MAX_BYTES_DEFAULT;
        private Path tempDir = Path.of(System.getProperty("java.io.tmpdir"));
        private NanoClock nanoClock = SystemNanoClock.INSTANCE;

        /** Default of {@link #timeoutMs(long)}: two minutes. */
        public static final long TIMEOUT_MS_DEFAULT = 120_000;
        /** Default of {@link #beginTimeoutMs(long)}: 30 seconds. */
        public static final long BEGIN_TIMEOUT_MS_DEFAULT = 30_000;
        /** Default of {@link #stallTimeoutMs(long)}: 15 seconds. */
        public static final long STALL_TIMEOUT_MS_DEFAULT = 15_000;
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
            if (workers < 1 || workers > MessageHeaderFlyweight.MAX_WORKERS) {
                throw new IllegalArgumentException("workers must be in [1, " + MessageHeaderFlyweight.MAX_WORKERS + "], got " + workers);
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
            Objects.requireNonNull(slice, "slice");
            requireSharedEndpoint(slice.resultChannel());
            if (streamId == 0) {
                streamId = slice.voteStreamId() + Configuration.HANDOVER_STREAM_OFFSET;
            }
            if (streamId == slice.voteStreamId() || streamId == slice.resultStreamId() || streamId + 1 == slice.voteStreamId()
                || streamId + 1 == slice.resultStreamId()) {
                throw new IllegalArgumentException("streamId and streamId + 1 must differ from the slice's vote and result stream ids, got "
                    + streamId);
            }
            if (timeoutMs <= 0) {
                throw new IllegalArgumentException("timeoutMs must be > 0, got " + timeoutMs);
            }
            if (stallTimeoutMs <= 0) {
                throw new IllegalArgumentException("stallTimeoutMs must be > 0, got " + stallTimeoutMs);
            }
            if (beginTimeoutMs <= 0) {
                throw new IllegalArgumentException("beginTimeoutMs must be > 0, got " + beginTimeoutMs);
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
                throw new IllegalArgumentException("slice's result channel has an ephemeral port (" + endpoint + ") and no tags: the"
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

        public Aeron aeron() {
            return aeron;
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
         * @param slice the first slice's endpoint: hand-overs go up its vote channel and come down its result channel. With
         *              UDP results sent to the workers the server accepted (manual multi-destination-cast), give the exchange's
         *              exact endpoint, with a tagged result channel ({@code Channels.udpResultsSubscription(host, workers, tag)}): the
         *              relayed frames then reach the same endpoint and port as the results.
         * @return this for a fluent API.
         */
        public Context slice(final SliceEndpoint slice) {
            this.slice = slice;
            return this;
        }

        public SliceEndpoint slice() {
            return slice;
        }

        /**
         * @param streamId of the hand-overs on the vote channel, as the server's; they come down the result channel on
         *                 {@code streamId + 1}. Default (0): the slice's vote stream id +
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
         * @param beginTimeoutMs how long a joining worker waits for its donor's hand-over to begin before {@link #take} gives
         *                       up, so that its job joins again (with a new first round and a live donor): a donor begins
         *                       at the start of the joining worker's first round, a couple of rounds after the join, and a
         *                       donor that died meanwhile never does. A chaos soak's joiner waited the whole two-minute
         *                       timeout for a donor killed after it was named (and, before joined workers kept their
         *                       results in a backlog, the job stalled with it).
         * @return this for a fluent API.
         */
        public Context beginTimeoutMs(final long beginTimeoutMs) {
            this.beginTimeoutMs = beginTimeoutMs;
            return this;
        }

        public long beginTimeoutMs() {
            return beginTimeoutMs;
        }

        /**
         * @param stallTimeoutMs how long a joining worker waits for the next frame of a hand-over that began before
         *                       {@link #take} gives up, so that its job joins again with a live donor: a donor killed in
         *                       the middle of its hand-over sends nothing more, and a chaos soak's joiner waited out the
         *                       whole two-minute timeout for one (its rejoin took 136 s). A live donor's hand-over comes
         *                       at the links' pace, a frame every few milliseconds.
         * @return this for a fluent API.
         */
        public Context stallTimeoutMs(final long stallTimeoutMs) {
            this.stallTimeoutMs = stallTimeoutMs;
            return this;
        }

        public long stallTimeoutMs() {
            return stallTimeoutMs;
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

        public int fragmentLimit() {
            return fragmentLimit;
        }

        /**
         * @param maxBytes longest payload a joining worker accepts.
         * @return this for a fluent API.
         */
        public Context maxBytes(final long maxBytes) {
            this.maxBytes = maxBytes;
            return this;
        }

        public long maxBytes() {
            return maxBytes;
        }

        /**
         * @param tempDir local directory of the temporary files (the donor's checkpoint, the received one).
         * @return this for a fluent API.
         */
        public Context tempDir(final Path tempDir) {
            this.tempDir = tempDir;
            return this;
        }

        public Path tempDir() {
            return tempDir;
        }

        /**
         * @param nanoClock for the timeouts.
         * @return this for a fluent API.
         */
        public Context nanoClock(final NanoClock nanoClock) {
            this.nanoClock = nanoClock;
            return this;
        }

        public NanoClock nanoClock() {
            return nanoClock;
        }
    }
}
