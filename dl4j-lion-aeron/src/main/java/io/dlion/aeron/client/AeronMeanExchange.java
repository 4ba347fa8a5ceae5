package io.dlion.aeron.client;

import java.util.ArrayList;
import java.util.List;
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
 * A worker's end of dense data-parallel training over Aeron, against one {@code AggregationServer} of fp32 gradients per
 * slice ({@code Payload.FP32}; one
 * for the star, one in every worker for the sharded topology, a reduce-scatter then an all-gather): the same channels,
 * HELLO (with the job's secret), chunking and pipelining as {@link AeronVoteExchange}, with fp32 payloads.
 * {@link #submit} copies the gradient and sends the {@link GradientChunkFlyweight GRADIENT_CHUNK}s the publications take,
 * starting with the slice after this worker's own (worker i starts with slice i + 1, so that no server gets every
 * worker's first chunks at once); {@link #await} sends the rest while it reads every slice server's
 * {@link MeanChunkFlyweight MEAN_CHUNK}s in word order (means of early chunks arrive while late chunks are still going
 * up), and gives up at the deadline with a {@link TimeoutException}; a ROUND_ABORT of the round throws
 * {@link QuorumLostException}. Bytes are counted as the vote client counts them: Aeron's data header, the message header
 * and the body, padded to 32 bytes.
 * <p>
 * No rejoin and no server restart (the baseline needs neither). The HELLO carries the mean subscription's endpoint,
 * which a UDP server adds as a destination once it accepted the HELLO (manual multi-destination-cast, so strangers
 * neither receive nor stall the means), but, unlike {@link AeronVoteExchange}, this client does not check the server's
 * proof in its HELLO_ACK: it follows the newest mean image, so it is a measurement baseline for a trusted network, not a
 * hardened transport. The gradient copy and the mean are allocated once, with the exchange; the mean returned by
 * {@link #await} is overwritten by the next round. Not thread-safe: one training thread calls {@code submit -> await} per
 * round.
 */
public final class AeronMeanExchange implements MeanExchange {
    /** Interval between HELLOs until the server's means arrive. */
    static final long HELLO_REPEAT_MS = 200;
    private final Context ctx;
    private final float[] gradient;
    private final float[] mean;
    private final Slice[] slices;
    private final WorkerCounters counters;
    private final WorkerSession session;
    private final ExchangeCounters exchangeCounters = new ExchangeCounters();
    private final HelloFlyweight helloOut = new HelloFlyweight();
    private final GradientChunkFlyweight gradientOut = new GradientChunkFlyweight();
    private final MeanChunkFlyweight meanIn = new MeanChunkFlyweight();
    private final MessageHeaderFlyweight inHeader = new MessageHeaderFlyweight();
    private final BufferClaim bufferClaim = new BufferClaim();
    private final VoterSet frameVoters;
    private long submitNs;
    private boolean closed;

    /**
     * Connect to every slice's server: waits up to the connect timeout for the publications and subscriptions to
     * connect, then says HELLO.
     *
     * @param ctx configuration, concluded here.
     * @throws IllegalStateException when a server does not connect in time.
     */
    public AeronMeanExchange(final Context ctx) {
        this.ctx = ctx.conclude();
        final long params = ctx.paramCount();
        this.gradient = new float[(int) params];
        this.mean = new float[(int) params];
        this.frameVoters = new VoterSet(ctx.workers());
        this.session = new WorkerSession(ctx.workerId, ctx.shards.size(), ctx.firstRound, false,
            ctx.secret() == null ? null : new HelloCredentials(ctx.secret()), ctx.epochClock);
        this.slices = new Slice[ctx.shards.size()];
        WorkerCounters cnt = null;
        try {
            cnt = new WorkerCounters(ctx.aeron, ctx.jobId(), ctx.workerId);
            for (int i = 0; i < slices.length; i++) {
                slices[i] = new Slice(ctx.shards.get(i));
            }
        } catch (final RuntimeException ex) {
            CloseHelper.quietCloseAll(slices);
            CloseHelper.quietClose(cnt);
            throw ex;
        }
        this.counters = cnt;
        try {
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
        for (final Slice slice : slices) {
            slice.startRound();
        }
        sendChunks();
    }

    /**
     * Wait for the round's mean, sending the gradient chunks that {@link #submit} could not send yet.
     *
     * @return the mean; overwritten by the next round, valid until the next {@link #submit}.
     * @throws TimeoutException    when the mean is not complete in time.
     * @throws QuorumLostException when a slice's server aborted the round.
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
            boolean done = true;
            for (final Slice slice : slices) {
                if (!slice.meanDone()) {
                    work += slice.subscription.controlledPoll(slice.handler, ctx.fragmentLimit);
                    if (slice.aborted) {
                        session.endRound(round);
                        throw new QuorumLostException(round, slice.endpoint.shard(), slice.abortVoters);
                    }
                    done &= slice.meanDone();
                }
            }
            if (done) {
                session.endRound(round);
                counters.rounds().incrementRelease();
                exchangeCounters.addRound(ctx.nanoClock.nanoTime() - submitNs);
                return mean;
            }
            if (ctx.nanoClock.nanoTime() - deadline >= 0) {
                final StringBuilder sb = new StringBuilder("worker ").append(ctx.workerId).append(": no complete mean for round ").append(round)
                    .append(" after ").append(timeoutMillis).append(" ms;");
                for (final Slice slice : slices) {
                    slice.describeProgress(sb);
                }
                throw new TimeoutException(sb.toString());
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
            CloseHelper.closeAll(slices);
            CloseHelper.close(counters);
        }
    }

    /**
     * Wait for the gradient publications, then say HELLO to every server, repeated every {@value #HELLO_REPEAT_MS} ms until
     * its mean image is there: a UDP server sends means only to the endpoints of HELLOs it accepted, and a server takes
     * gradients only from a worker that said HELLO (over IPC the mean image may be there before the first HELLO).
     */
    private void connect() {
        final long deadline = ctx.nanoClock.nanoTime() + ctx.connectTimeoutNs;
        final IdleStrategy idle = ctx.idleStrategy;
        for (final Slice slice : slices) {
            long nextHelloNs = 0;
            boolean said = false;
            while (!said || !slice.isConnected()) {
                final long now = ctx.nanoClock.nanoTime();
                if (now - deadline >= 0) {
                    throw new IllegalStateException("dense server of slice " + slice.endpoint.shard() + " not connected after "
                        + TimeUnit.NANOSECONDS.toMillis(ctx.connectTimeoutNs) + " ms (gradients connected: " + slice.publication.isConnected()
                        + ", means connected: " + slice.subscription.isConnected() + "); is it running, and does it have this job's id and secret? "
                        + slice.endpoint);
                }
                if (slice.publication.isConnected() && now - nextHelloNs >= 0 && slice.sendHello()) {
                    said = true;
                    nextHelloNs = now + TimeUnit.MILLISECONDS.toNanos(HELLO_REPEAT_MS);
                }
                idle.idle();
            }
            slice.serverSession = slice.latestServerSession;
        }
    }

    private int sendChunks() {
        int work = 0;
        final int first = (ctx.workerId + 1) % slices.length;
        for (int i = 0; i < slices.length; i++) {
            work += slices[(first + i) % slices.length].sendChunks();
        }
        return work;
    }

    private void offerFailed(final long result, final ShardEndpoint endpoint) {
        if (result == Publication.BACK_PRESSURED || result == Publication.ADMIN_ACTION || result == Publication.NOT_CONNECTED) {
            counters.offersNotAccepted().incrementRelease();
        } else {
            throw new IllegalStateException("gradient publication cannot go on (" + Publication.errorString(result) + "): " + endpoint);
        }
    }

    /** One slice's server: its gradient publication, its mean subscription and where the slice stands in the round. */
    private final class Slice implements AutoCloseable {
        private final ShardEndpoint endpoint;
        private final ChunkLayout layout;
        private final ExclusivePublication publication;
        private final Subscription subscription;
        private final ResultEndpoint resultEndpoint;
        private final ControlledFragmentHandler handler = this::onFrame;
        private volatile int latestServerSession;
        private int serverSession;
        private int nextChunk;
        private int nextMeanWord;
        private final VoterSet abortVoters = new VoterSet(ctx.workers());
        private boolean aborted;

        Slice(final ShardEndpoint endpoint) {
            this.endpoint = endpoint;
            this.layout = new ChunkLayout(ctx.paramCount(), endpoint.fromParam(), endpoint.toParam() < 0 ? ctx.paramCount() : endpoint.toParam(),
                GradientChunkFlyweight.CHUNK_WORDS);
            ExclusivePublication pub = null;
            Subscription sub = null;
            try {
                pub = ctx.aeron.addExclusivePublication(endpoint.voteChannel(), endpoint.voteStreamId());
                sub = ctx.aeron.addSubscription(endpoint.resultChannel(), endpoint.resultStreamId(),
                    image -> latestServerSession = image.sessionId(), image -> { });
                final int need = GradientChunkFlyweight.length((long) layout.chunkWords() * Long.SIZE);
                if (pub.maxPayloadLength() < need) {
                    throw new IllegalArgumentException("voteChannel mtu too small for dense chunks: max payload " + pub.maxPayloadLength()
                        + " bytes, need " + need + " (use mtu=8k): " + endpoint);
                }
            } catch (final RuntimeException ex) {
                CloseHelper.quietCloseAll(sub, pub);
                throw ex;
            }
            this.publication = pub;
            this.subscription = sub;
            this.resultEndpoint = new ResultEndpoint(sub);
            this.nextChunk = layout.chunkCount();
            this.nextMeanWord = layout.toWord();
        }

        boolean isConnected() {
            return publication.isConnected() && subscription.isConnected() && latestServerSession != 0;
        }

        void startRound() {
            nextChunk = 0;
            nextMeanWord = layout.fromWord();
            aborted = false;
        }

        boolean meanDone() {
            return nextMeanWord == layout.toWord();
        }

        void describeProgress(final StringBuilder sb) {
            sb.append(" slice ").append(endpoint.shard()).append(": sent ").append(nextChunk).append('/').append(layout.chunkCount())
                .append(" gradient chunks, received ").append(nextMeanWord - layout.fromWord()).append('/').append(layout.words())
                .append(" mean words").append(publication.isConnected() && subscription.isConnected() ? ";" : ", server not connected;");
        }

        boolean sendHello() {
            if (!resultEndpoint.resolve(endpoint)) {
                return false;
            }
            final HelloCredentials credentials = session.credentials();
            final int length = HelloFlyweight.length(credentials != null);
            final long result = publication.tryClaim(length, bufferClaim);
            if (result < 0) {
                offerFailed(result, endpoint);
                return false;
            }
            helloOut.wrap(bufferClaim.buffer(), bufferClaim.offset()).encode(ctx.jobId(), session.helloRound(), layout.fromWord(), ctx.workerId,
                endpoint.shard(), ctx.paramCount(), publication.sessionId(), resultEndpoint.address(), resultEndpoint.port(), credentials,
                credentials == null ? 0 : session.nextNonce(), credentials == null ? 0 : session.epochTimeMs());
            bufferClaim.commit();
            counters.bytesUp().getAndAddRelease(ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH));
            return true;
        }

        int sendChunks() {
            int sent = 0;
            while (nextChunk < layout.chunkCount()) {
                final int words = layout.wordsOf(nextChunk);
                final int wordOffset = layout.wordOffset(nextChunk);
                final int params = (int) layout.paramsOf(wordOffset, words);
                final int length = GradientChunkFlyweight.length(params);
                final long result = publication.tryClaim(length, bufferClaim);
                if (result < 0) {
                    offerFailed(result, endpoint);
                    break;
                }
                gradientOut.wrap(bufferClaim.buffer(), bufferClaim.offset())
                    .encode(ctx.jobId(), session.submittedRound(), wordOffset, words, ctx.workerId, endpoint.shard(), gradient, params);
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
                || msg.shard() != endpoint.shard()) {
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
            if (round < current || meanDone()) {
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

        @Override
        public void close() {
            CloseHelper.closeAll(publication, subscription);
        }
    }

    /**
     * Configuration of one worker's dense exchange. Required: {@link #aeron(Aeron)}, {@link #jobId(int)},
     * {@link #workerId(int)}, {@link #workers(int)}, {@link #paramCount(long)}; without {@link #shards(List)} one
     * server on the {@link Configuration} channels covers every parameter. The job's shared settings are {@link JobContext}'s ({@code rule} and
     * {@code chunkWords} do not apply).
     */
    public static final class Context extends JobContext<Context> {
        private Aeron aeron;
        private int workerId = -1;
        private List<ShardEndpoint> shards = new ArrayList<>();
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
            if (shards.isEmpty()) {
                shards = List.of(ShardEndpoint.whole(Configuration.voteChannel(), Configuration.resultChannel()));
            }
            ShardEndpoint.checkCover(shards, paramCount(), GradientChunkFlyweight.CHUNK_WORDS);
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

        /** @return the slice servers' channels and streams, empty before {@link #conclude()} for the defaults. */
        public List<ShardEndpoint> shards() {
            return shards;
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
         * @param shards the slice servers' channels and streams, covering [0, paramCount) in order, with slice bounds on
         *               the dense chunk grid ({@link io.dlion.aeron.Topology#endpoints} with
         *               {@link GradientChunkFlyweight#CHUNK_WORDS}); one endpoint for the star.
         * @return this for a fluent API.
         */
        public Context shards(final List<ShardEndpoint> shards) {
            this.shards = new ArrayList<>(shards);
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
