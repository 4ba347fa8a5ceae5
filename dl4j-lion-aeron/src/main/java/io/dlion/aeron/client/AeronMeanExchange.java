package io.dlion.aeron.client;

import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.JobContext;
import io.dlion.aeron.ShardEndpoint;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.GradientChunkFlyweight;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.MeanChunkFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.aeron.wire.RoundAbortFlyweight;
import io.dlion.exchange.ExchangeCounters;
import io.dlion.exchange.MeanExchange;
import io.dlion.vote.VoterSet;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.SystemNanoClock;

/**
 * A worker's end of dense data-parallel training over Aeron, against a {@code DenseAggregationServer}: the same
 * channels, HELLO (with the job's secret), chunking and pipelining as {@link AeronVoteExchange}, with fp32 payloads.
 * {@link #submit} copies the gradient and sends the {@link GradientChunkFlyweight GRADIENT_CHUNK}s the publication takes;
 * {@link #await} sends the rest while it reads the server's {@link MeanChunkFlyweight MEAN_CHUNK}s in word order (means of
 * early chunks arrive while late chunks are still going up), and gives up at the deadline with a
 * {@link TimeoutException}; a ROUND_ABORT of the round throws {@link QuorumLostException}. Bytes are counted as the vote
 * client counts them: Aeron's data header, the message header and the body, padded to 32 bytes.
 * <p>
 * One server (shard) per job; no rejoin and no server restart (the baseline needs neither). The HELLO carries the mean
 * subscription's endpoint, which a UDP server adds as a destination once it accepted the HELLO (manual
 * multi-destination-cast, so strangers neither receive nor stall the means), but, unlike {@link AeronVoteExchange}, this
 * client does not check the server's proof in its HELLO_ACK: it follows the newest mean image, so it is a measurement
 * baseline for a trusted network, not a hardened transport. The gradient copy and the
 * mean are allocated once, with the exchange; the mean returned by {@link #await} is overwritten by the next round.
 * Not thread-safe: one training thread calls {@code submit -> await} per round.
 */
public final class AeronMeanExchange implements MeanExchange {
    /** Interval between HELLOs until the server's means arrive. */
    static final long HELLO_REPEAT_MS = 200;
    private final Context ctx;
    private final ChunkLayout layout;
    private final float[] gradient;
    private final float[] mean;
    private final ExclusivePublication publication;
    private final Subscription subscription;
    private final WorkerCounters counters;
    private final ResultEndpoint resultEndpoint;
    private final WorkerSession session;
    private final ExchangeCounters exchangeCounters = new ExchangeCounters();
    private final ControlledFragmentHandler handler = this::onFrame;
    private final HelloFlyweight helloOut = new HelloFlyweight();
    private final GradientChunkFlyweight gradientOut = new GradientChunkFlyweight();
    private final MeanChunkFlyweight meanIn = new MeanChunkFlyweight();
    private final MessageHeaderFlyweight inHeader = new MessageHeaderFlyweight();
    private final BufferClaim bufferClaim = new BufferClaim();
    private final VoterSet frameVoters;
    private final VoterSet abortVoters;
    private boolean aborted;
    private volatile int latestServerSession;
    private int serverSession;
    private int nextChunk;
    private int nextMeanWord;
    private long submitNs;
    private boolean closed;

    /**
     * Connect to the server: waits up to the connect timeout for the publication and subscription to connect, then says
     * HELLO.
     *
     * @param ctx configuration, concluded here.
     * @throws IllegalStateException when the server does not connect in time.
     */
    public AeronMeanExchange(final Context ctx) {
        this.ctx = ctx.conclude();
        final long params = ctx.paramCount();
        this.layout = new ChunkLayout(params, 0, params, GradientChunkFlyweight.CHUNK_WORDS);
        this.gradient = new float[(int) params];
        this.mean = new float[(int) params];
        this.frameVoters = new VoterSet(ctx.workers());
        this.abortVoters = new VoterSet(ctx.workers());
        this.session = new WorkerSession(ctx.workerId, 1, ctx.firstRound, false,
            ctx.secret() == null ? null : new HelloCredentials(ctx.secret()), ctx.epochClock);
        ExclusivePublication pub = null;
        Subscription sub = null;
        WorkerCounters cnt = null;
        try {
            cnt = new WorkerCounters(ctx.aeron, ctx.jobId(), ctx.workerId);
            pub = ctx.aeron.addExclusivePublication(ctx.endpoint.voteChannel(), ctx.endpoint.voteStreamId());
            sub = ctx.aeron.addSubscription(ctx.endpoint.resultChannel(), ctx.endpoint.resultStreamId(),
                image -> latestServerSession = image.sessionId(), image -> { });
        } catch (final RuntimeException ex) {
            CloseHelper.quietCloseAll(sub, pub, cnt);
            throw ex;
        }
        this.publication = pub;
        this.subscription = sub;
        this.resultEndpoint = new ResultEndpoint(sub);
        this.counters = cnt;
        this.nextChunk = layout.chunkCount();
        this.nextMeanWord = layout.toWord();
        try {
            final int need = GradientChunkFlyweight.length((long) GradientChunkFlyweight.CHUNK_WORDS * Long.SIZE);
            if (publication.maxPayloadLength() < need) {
                throw new IllegalArgumentException("voteChannel mtu too small for dense chunks: max payload " + publication.maxPayloadLength()
                    + " bytes, need " + need + " (use mtu=8k): " + ctx.endpoint);
            }
            connect();
        } catch (final RuntimeException ex) {
            close();
            throw ex;
        }
    }

    @Override
    public int workerId() {
        return ctx.workerId;
    }

    @Override
    public int workers() {
        return ctx.workers();
    }

    @Override
    public long paramCount() {
        return ctx.paramCount();
    }

    @Override
    public void submit(final long round, final float[] values) {
        if (closed) {
            throw new IllegalStateException("exchange closed");
        }
        if (round != session.nextRound()) {
            throw new IllegalArgumentException("round must be " + session.nextRound() + ", got " + round);
        }
        if (values.length != gradient.length) {
            throw new IllegalArgumentException("gradient must have " + gradient.length + " values, got " + values.length);
        }
        System.arraycopy(values, 0, gradient, 0, gradient.length);
        session.startRound(round);
        submitNs = ctx.nanoClock.nanoTime();
        nextChunk = 0;
        nextMeanWord = layout.fromWord();
        aborted = false;
        sendChunks();
    }

    /**
     * Wait for the round's mean, sending the gradient chunks that {@link #submit} could not send yet.
     *
     * @return the mean; overwritten by the next round, valid until the next {@link #submit}.
     * @throws TimeoutException    when the mean is not complete in time.
     * @throws QuorumLostException when the server aborted the round.
     */
    @Override
    public float[] await(final long round, final long timeoutMillis) throws TimeoutException, InterruptedException {
        if (round != session.submittedRound() || round != session.nextRound()) {
            throw new IllegalArgumentException("await must follow submit of the same round: submitted " + session.submittedRound()
                + ", got " + round);
        }
        final long deadline = ctx.nanoClock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        final IdleStrategy idle = ctx.idleStrategy;
        idle.reset();
        while (true) {
            int work = sendChunks();
            work += subscription.controlledPoll(handler, ctx.fragmentLimit);
            if (aborted) {
                session.endRound(round);
                throw new QuorumLostException(round, ctx.endpoint.shard(), abortVoters);
            }
            if (nextMeanWord == layout.toWord()) {
                session.endRound(round);
                counters.rounds().incrementRelease();
                exchangeCounters.addRound(ctx.nanoClock.nanoTime() - submitNs);
                return mean;
            }
            if (ctx.nanoClock.nanoTime() - deadline >= 0) {
                throw new TimeoutException("worker " + ctx.workerId + ": no complete mean for round " + round + " after " + timeoutMillis
                    + " ms; sent " + nextChunk + "/" + layout.chunkCount() + " gradient chunks, received " + (nextMeanWord - layout.fromWord())
                    + "/" + layout.words() + " mean words" + (publication.isConnected() && subscription.isConnected() ? "" : ", server not connected"));
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while awaiting round " + round);
            }
            idle.idle(work);
        }
    }

    @Override
    public ExchangeCounters counters() {
        return exchangeCounters;
    }

    /** @return this worker's Aeron counters. */
    public WorkerCounters workerCounters() {
        return counters;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            CloseHelper.closeAll(publication, subscription, counters);
        }
    }

    /**
     * Wait for the gradient publication, then say HELLO until the mean image is there: a UDP server sends means only to
     * the endpoints of HELLOs it accepted, so the HELLO comes first and is repeated every {@value #HELLO_REPEAT_MS} ms.
     */
    private void connect() {
        final long deadline = ctx.nanoClock.nanoTime() + ctx.connectTimeoutNs;
        final IdleStrategy idle = ctx.idleStrategy;
        long nextHelloNs = 0;
        while (!(publication.isConnected() && subscription.isConnected() && latestServerSession != 0)) {
            final long now = ctx.nanoClock.nanoTime();
            if (now - deadline >= 0) {
                throw new IllegalStateException("dense server not connected after " + TimeUnit.NANOSECONDS.toMillis(ctx.connectTimeoutNs)
                    + " ms (gradients connected: " + publication.isConnected() + ", means connected: " + subscription.isConnected()
                    + "); is it running, and does it have this job's id and secret? " + ctx.endpoint);
            }
            if (publication.isConnected() && now - nextHelloNs >= 0 && sendHello()) {
                nextHelloNs = now + TimeUnit.MILLISECONDS.toNanos(HELLO_REPEAT_MS);
            }
            idle.idle();
        }
        serverSession = latestServerSession;
    }

    private boolean sendHello() {
        if (!resultEndpoint.resolve(ctx.endpoint)) {
            return false;
        }
        final HelloCredentials credentials = session.credentials();
        final int length = HelloFlyweight.length(credentials != null);
        final long result = publication.tryClaim(length, bufferClaim);
        if (result < 0) {
            offerFailed(result);
            return false;
        }
        helloOut.wrap(bufferClaim.buffer(), bufferClaim.offset()).encode(ctx.jobId(), session.helloRound(), layout.fromWord(), ctx.workerId,
            ctx.endpoint.shard(), ctx.paramCount(), publication.sessionId(), resultEndpoint.address(), resultEndpoint.port(), credentials,
            credentials == null ? 0 : session.nextNonce(), credentials == null ? 0 : session.epochTimeMs());
        bufferClaim.commit();
        counters.bytesUp().getAndAddRelease(ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH));
        return true;
    }

    private int sendChunks() {
        int sent = 0;
        while (nextChunk < layout.chunkCount()) {
            final int words = layout.wordsOf(nextChunk);
            final int wordOffset = layout.wordOffset(nextChunk);
            final int params = (int) layout.paramsOf(wordOffset, words);
            final int length = GradientChunkFlyweight.length(params);
            final long result = publication.tryClaim(length, bufferClaim);
            if (result < 0) {
                offerFailed(result);
                break;
            }
            gradientOut.wrap(bufferClaim.buffer(), bufferClaim.offset())
                .encode(ctx.jobId(), session.submittedRound(), wordOffset, words, ctx.workerId, ctx.endpoint.shard(), gradient, params);
            bufferClaim.commit();
            final int frame = ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH);
            counters.bytesUp().getAndAddRelease(frame);
            exchangeCounters.addBytesUp(frame);
            nextChunk++;
            sent++;
        }
        return sent;
    }

    private ControlledFragmentHandler.Action onFrame(final DirectBuffer buffer, final int offset, final int length, final Header header) {
        if (header.flags() != FrameDescriptor.UNFRAGMENTED || length < MessageHeaderFlyweight.HEADER_LENGTH) {
            counters.rejectedResults().incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        final MessageHeaderFlyweight msg = inHeader.wrapForRead(buffer, offset);
        final int type = msg.type();
        if (type == MessageType.HELLO_ACK && msg.jobId() == ctx.jobId()) {
            // the server's answer to a HELLO: the dense baseline does not check the server's proof (see the class comment)
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        if (msg.magic() != (MessageHeaderFlyweight.MAGIC & 0xFF) || msg.version() != MessageHeaderFlyweight.VERSION
            || msg.jobId() != ctx.jobId() || (type != MessageType.MEAN_CHUNK && type != MessageType.ROUND_ABORT)
            || msg.shard() != ctx.endpoint.shard()) {
            counters.rejectedResults().incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        if (header.sessionId() != serverSession) {
            counters.staleResults().incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        final long round = msg.round();
        final long current = session.resultRound();
        if (round > current) {
            return ControlledFragmentHandler.Action.ABORT;
        }
        if (round < current || nextMeanWord == layout.toWord()) {
            counters.staleResults().incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        if (type == MessageType.ROUND_ABORT) {
            if (length != RoundAbortFlyweight.length(abortVoters.wordCount()) || !msg.readVoterSet(abortVoters, length)) {
                counters.rejectedResults().incrementRelease();
                return ControlledFragmentHandler.Action.CONTINUE;
            }
            aborted = true;
            return ControlledFragmentHandler.Action.BREAK;
        }
        final int wordOffset = msg.chunkWordOffset();
        final int words = msg.chunkWords();
        final int chunk = layout.chunkAt(wordOffset);
        if (wordOffset != nextMeanWord || chunk < 0 || words != layout.wordsOf(chunk) || !msg.readVoterSet(frameVoters, length)
            || frameVoters.isEmpty() || msg.encoding() != Encoding.FP32
            || length != MeanChunkFlyweight.length(frameVoters.wordCount(), layout.paramsOf(wordOffset, words))) {
            counters.rejectedResults().incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        final int params = (int) layout.paramsOf(wordOffset, words);
        meanIn.wrapForRead(buffer, offset).decode(params, mean, wordOffset << 6);
        nextMeanWord += words;
        final int frame = ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH);
        counters.bytesDown().getAndAddRelease(frame);
        exchangeCounters.addBytesDown(frame);
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private void offerFailed(final long result) {
        if (result == Publication.BACK_PRESSURED || result == Publication.ADMIN_ACTION || result == Publication.NOT_CONNECTED) {
            counters.offersNotAccepted().incrementRelease();
        } else {
            throw new IllegalStateException("gradient publication cannot go on (" + Publication.errorString(result) + "): " + ctx.endpoint);
        }
    }

    /**
     * Configuration of one worker's dense exchange. Required: {@link #aeron(Aeron)}, {@link #jobId(int)},
     * {@link #workerId(int)}, {@link #workers(int)}, {@link #paramCount(long)}; without {@link #endpoint(ShardEndpoint)}
     * the {@link Configuration} channels. The job's shared settings are {@link JobContext}'s ({@code rule} and
     * {@code chunkWords} do not apply).
     */
    public static final class Context extends JobContext<Context> {
        private Aeron aeron;
        private int workerId = -1;
        private ShardEndpoint endpoint;
        private long connectTimeoutNs = TimeUnit.MILLISECONDS.toNanos(Configuration.connectTimeoutMs());
        private int fragmentLimit = Configuration.fragmentLimit();
        private long firstRound;
        private NanoClock nanoClock = SystemNanoClock.INSTANCE;
        private EpochClock epochClock = SystemEpochClock.INSTANCE;
        private IdleStrategy idleStrategy = new BackoffIdleStrategy(100, 10, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MICROSECONDS.toNanos(100));

        /**
         * Validate the configuration once.
         *
         * @return this for a fluent API.
         * @throws IllegalArgumentException naming the field that is wrong.
         */
        @Override
        public Context conclude() {
            super.conclude();
            if (frameMac()) {
                throw new IllegalArgumentException("frameMac is not supported by the dense baseline (AeronMeanExchange)");
            }
            Objects.requireNonNull(aeron, "aeron");
            if (workerId < 0 || workerId >= workers()) {
                throw new IllegalArgumentException("workerId must be in [0, workers=" + workers() + "), got " + workerId);
            }
            if (paramCount() > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("paramCount must be at most 2^31 - 9 for dense sharing, got " + paramCount());
            }
            if (endpoint == null) {
                endpoint = ShardEndpoint.whole(Configuration.voteChannel(), Configuration.resultChannel());
            }
            if (endpoint.fromParam() != 0 || (endpoint.toParam() >= 0 && endpoint.toParam() != paramCount())) {
                throw new IllegalArgumentException("endpoint must cover every parameter (dense sharing has one server), got " + endpoint);
            }
            if (connectTimeoutNs <= 0) {
                throw new IllegalArgumentException("connectTimeoutNs must be > 0, got " + connectTimeoutNs);
            }
            if (fragmentLimit < 1) {
                throw new IllegalArgumentException("fragmentLimit must be >= 1, got " + fragmentLimit);
            }
            if (firstRound < 0) {
                throw new IllegalArgumentException("firstRound must be >= 0, got " + firstRound);
            }
            Objects.requireNonNull(nanoClock, "nanoClock");
            Objects.requireNonNull(epochClock, "epochClock");
            Objects.requireNonNull(idleStrategy, "idleStrategy");
            return this;
        }

        /**
         * @param aeron client to add the publication, subscription and counters with; not closed by the exchange.
         * @return this for a fluent API.
         */
        public Context aeron(final Aeron aeron) {
            this.aeron = aeron;
            return this;
        }

        /** @return the Aeron client. */
        public Aeron aeron() {
            return aeron;
        }

        /** @return the server's channels and streams, or null before {@link #conclude()} for the defaults. */
        public ShardEndpoint endpoint() {
            return endpoint;
        }

        /** @return how long the constructor waits for the server. */
        public long connectTimeoutNs() {
            return connectTimeoutNs;
        }

        /**
         * @param workerId this worker, in [0, workers).
         * @return this for a fluent API.
         */
        public Context workerId(final int workerId) {
            this.workerId = workerId;
            return this;
        }

        /**
         * @param endpoint the server's channels and streams; its slice must be every parameter.
         * @return this for a fluent API.
         */
        public Context endpoint(final ShardEndpoint endpoint) {
            this.endpoint = endpoint;
            return this;
        }

        /**
         * @param connectTimeoutNs how long the constructor waits for the server.
         * @return this for a fluent API.
         */
        public Context connectTimeoutNs(final long connectTimeoutNs) {
            this.connectTimeoutNs = connectTimeoutNs;
            return this;
        }

        /**
         * @param fragmentLimit fragments polled at once.
         * @return this for a fluent API.
         */
        public Context fragmentLimit(final int fragmentLimit) {
            this.fragmentLimit = fragmentLimit;
            return this;
        }

        /**
         * @param firstRound the round submitted first.
         * @return this for a fluent API.
         */
        public Context firstRound(final long firstRound) {
            this.firstRound = firstRound;
            return this;
        }

        /**
         * @param nanoClock for deadlines.
         * @return this for a fluent API.
         */
        public Context nanoClock(final NanoClock nanoClock) {
            this.nanoClock = nanoClock;
            return this;
        }

        /**
         * @param epochClock for HELLO timestamps.
         * @return this for a fluent API.
         */
        public Context epochClock(final EpochClock epochClock) {
            this.epochClock = epochClock;
            return this;
        }

        /**
         * @param idleStrategy between polls while awaiting a round.
         * @return this for a fluent API.
         */
        public Context idleStrategy(final IdleStrategy idleStrategy) {
            this.idleStrategy = idleStrategy;
            return this;
        }
    }
}
