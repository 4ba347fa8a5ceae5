package io.dlion.aeron;

import java.nio.ByteOrder;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

/**
 * The aggregation server of one shard of a job: an {@link Agent} that subscribes to the workers' vote chunks,
 * votes each chunk as soon as every worker's vote for it has arrived, and publishes the result chunk at once,
 * so voting and broadcasting overlap with the workers still sending (pipelined).
 * <p>
 * Memory: votes are copied out of Aeron's receive buffer into a window of {@link Context#windowChunks()} chunk
 * slots per worker; a vote for a chunk beyond the window is left in Aeron's buffer ({@code ABORT}) and read
 * again once the oldest chunk has been published, which back-pressures a worker that runs ahead. The server
 * therefore holds {@code workers * windowChunks * chunkWords} words, never N full vectors.
 * <p>
 * Rounds: the first vote of a round above the current one opens it once the current round is complete; a vote
 * of a closed round is rejected as {@link RejectReason#STALE_ROUND}; a round open longer than the round timeout
 * is abandoned (workers time out and the next round opens). Every rejected message is counted by reason in
 * {@link ServerCounters} and never enters a vote.
 * <p>
 * Run it on an {@code AgentRunner} (dedicated thread) or an {@code AgentInvoker} (tests, one thread).
 */
public final class AggregationServer implements Agent, AutoCloseable {
    /** Words of a whole number of ternary bytes: 5 words = 320 parameters = 64 bytes. */
    private static final int TERNARY_GROUP_WORDS = 5;
    private static final int TERNARY_GROUP_BYTES = TERNARY_GROUP_WORDS * Long.SIZE / Encoding.TRITS_PER_BYTE;
    private final Context ctx;
    private final ChunkLayout layout;
    private final int workers;
    private final long allWorkersMask;
    private final boolean majority;
    private final ExclusivePublication publication;
    private final Subscription subscription;
    private final ServerCounters counters;
    private final ChunkSlot[] slots;
    private final MessageHeaderFlyweight inHeader = new MessageHeaderFlyweight();
    private final MessageHeaderFlyweight outHeader = new MessageHeaderFlyweight();
    private final BufferClaim bufferClaim = new BufferClaim();
    private final ControlledFragmentHandler fragmentHandler = this::onFragment;
    private final int maxBodyLength;
    private final long lastWordMask;
    private final byte[] ternaryScratch;

    private long currentRound = -1;
    private boolean roundOpen;
    private long roundStartNs;
    private int baseChunk;

    /**
     * Create the server: adds the vote subscription, the result publication and the counters.
     *
     * @param ctx configuration, concluded here.
     */
    public AggregationServer(final Context ctx) {
        this.ctx = ctx.conclude();
        this.layout = new ChunkLayout(ctx.paramCount, ctx.fromParam, ctx.toParam, ctx.chunkWords);
        this.workers = ctx.workers;
        this.allWorkersMask = workers == Long.SIZE ? -1L : (1L << workers) - 1;
        this.majority = ctx.rule == VoteRule.MAJORITY;
        this.lastWordMask = layout.toParam() == layout.paramCount() ? ChunkLayout.lastWordMask(layout.paramCount()) : -1L;
        this.ternaryScratch = new byte[ctx.chunkWords * Long.SIZE / Encoding.TRITS_PER_BYTE];

        Subscription sub = null;
        ExclusivePublication pub = null;
        ServerCounters cnt = null;
        try {
            sub = ctx.aeron.addSubscription(ctx.voteChannel, ctx.voteStreamId);
            pub = ctx.aeron.addExclusivePublication(ctx.resultChannel, ctx.resultStreamId);
            cnt = new ServerCounters(ctx.aeron, ctx.jobId, ctx.shard);
        } catch (final RuntimeException ex) {
            CloseHelper.quietCloseAll(cnt, pub, sub);
            throw ex;
        }
        this.subscription = sub;
        this.publication = pub;
        this.counters = cnt;
        this.maxBodyLength = publication.maxPayloadLength() - MessageHeaderFlyweight.HEADER_LENGTH;
        if (maxBodyLength < ctx.chunkWords * Long.BYTES) {
            close();
            throw new IllegalArgumentException("resultChannel mtu too small for chunkWords=" + ctx.chunkWords + ": max payload "
                + publication.maxPayloadLength() + " bytes, need " + (MessageHeaderFlyweight.HEADER_LENGTH + ctx.chunkWords * Long.BYTES)
                + " (use mtu=8k or fewer chunkWords)");
        }
        final int planes = majority ? 0 : Encoding.bitsFor(workers);
        this.slots = new ChunkSlot[ctx.windowChunks];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new ChunkSlot(workers, ctx.chunkWords, majority && (workers & 1) == 0, planes);
        }
    }

    @Override
    public String roleName() {
        return "dlion-server-job" + ctx.jobId + "-shard" + ctx.shard;
    }

    @Override
    public int doWork() {
        int work = sendResults();
        work += subscription.controlledPoll(fragmentHandler, ctx.fragmentLimit);
        work += sendResults();
        if (roundOpen && ctx.nanoClock.nanoTime() - roundStartNs > ctx.roundTimeoutNs) {
            counters.roundsAbandoned().increment();
            roundOpen = false;
            work++;
        }
        return work;
    }

    @Override
    public void onClose() {
        close();
    }

    @Override
    public void close() {
        CloseHelper.closeAll(counters, publication, subscription);
    }

    /** @return the counters of this server. */
    public ServerCounters counters() {
        return counters;
    }

    /** @return the chunk grid of this server's shard. */
    public ChunkLayout layout() {
        return layout;
    }

    /** @return the configuration. */
    public Context context() {
        return ctx;
    }

    /** @return the highest round opened so far, -1 before the first vote. */
    public long currentRound() {
        return currentRound;
    }

    /** @return true when the result publication has at least one connected subscriber. */
    public boolean isConnected() {
        return publication.isConnected();
    }

    private ControlledFragmentHandler.Action onFragment(final DirectBuffer buffer, final int offset, final int length, final Header header) {
        final ControlledFragmentHandler.Action action = handle(buffer, offset, length, header);
        if (action != ControlledFragmentHandler.Action.ABORT) {
            counters.bytesIn().getAndAddPlain(ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH));
        }
        return action;
    }

    private ControlledFragmentHandler.Action handle(final DirectBuffer buffer, final int offset, final int length, final Header header) {
        if (header.flags() != FrameDescriptor.UNFRAGMENTED || length < MessageHeaderFlyweight.HEADER_LENGTH) {
            return reject(RejectReason.MALFORMED);
        }
        final MessageHeaderFlyweight msg = inHeader.wrapForRead(buffer, offset);
        if (msg.magic() != (MessageHeaderFlyweight.MAGIC & 0xFF) || msg.version() != MessageHeaderFlyweight.VERSION) {
            return reject(RejectReason.BAD_VERSION);
        }
        if (msg.jobId() != ctx.jobId) {
            return reject(RejectReason.FOREIGN_JOB);
        }
        final int worker = msg.workerId();
        if (worker >= workers) {
            return reject(RejectReason.UNKNOWN_WORKER);
        }
        final int type = msg.type();
        if (type == MessageType.HELLO) {
            if (msg.paramCount() != ctx.paramCount) {
                return reject(RejectReason.PARAM_COUNT_MISMATCH);
            }
            counters.workersJoined().incrementPlain();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        if (type != MessageType.VOTE_CHUNK) {
            return reject(RejectReason.UNEXPECTED_TYPE);
        }
        if (msg.shard() != ctx.shard) {
            return reject(RejectReason.WRONG_SHARD);
        }
        final long round = msg.round();
        if (!roundOpen || round != currentRound) {
            if (round <= currentRound) {
                return reject(RejectReason.STALE_ROUND);
            }
            if (roundOpen) {
                return ControlledFragmentHandler.Action.ABORT;
            }
            openRound(round);
        }
        final int chunk = layout.chunkAt(msg.chunkWordOffset());
        if (chunk < 0 || msg.chunkWords() != layout.wordsOf(chunk)) {
            return reject(RejectReason.OUT_OF_RANGE);
        }
        final int words = msg.chunkWords();
        if (msg.encoding() != Encoding.SIGN_BITS || length != MessageHeaderFlyweight.HEADER_LENGTH + words * Long.BYTES) {
            return reject(RejectReason.MALFORMED);
        }
        if (chunk < baseChunk) {
            return reject(RejectReason.DUPLICATE);
        }
        if (chunk >= baseChunk + slots.length) {
            return ControlledFragmentHandler.Action.ABORT;
        }
        final ChunkSlot slot = slots[chunk % slots.length];
        if (slot.chunk != chunk) {
            slot.reset(chunk);
        }
        final long bit = 1L << worker;
        if ((slot.arrived & bit) != 0) {
            return reject(RejectReason.DUPLICATE);
        }
        final long[] dst = slot.votes[worker];
        final int body = msg.bodyOffset();
        for (int i = 0; i < words; i++) {
            dst[i] = buffer.getLong(body + (i << 3), ByteOrder.LITTLE_ENDIAN);
        }
        if (chunk == layout.chunkCount() - 1) {
            dst[words - 1] &= lastWordMask;
        }
        slot.arrived |= bit;
        if (slot.arrived == allWorkersMask) {
            vote(slot, words);
        }
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private ControlledFragmentHandler.Action reject(final RejectReason reason) {
        counters.rejected(reason).incrementPlain();
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private void openRound(final long round) {
        currentRound = round;
        roundOpen = true;
        roundStartNs = ctx.nanoClock.nanoTime();
        baseChunk = 0;
        for (final ChunkSlot slot : slots) {
            slot.reset(-1);
        }
    }

    private void vote(final ChunkSlot slot, final int words) {
        final int voters = Long.bitCount(slot.arrived);
        slot.voterMask = slot.arrived;
        slot.voters = voters;
        if (majority) {
            final boolean odd = (voters & 1) == 1;
            final int ties = ChunkVoter.majority(slot.votes, voters, words, slot.sign, odd ? null : slot.tie);
            counters.ties().getAndAddPlain(ties);
            slot.encoding = odd ? Encoding.SIGN_BITS : Encoding.TERNARY;
        } else {
            ChunkVoter.count(slot.votes, voters, words, slot.planes);
            slot.encoding = Encoding.COUNT_PLANES;
        }
        slot.voted = true;
        slot.sentWords = 0;
        counters.chunksVoted().incrementPlain();
    }

    private int sendResults() {
        int work = 0;
        while (roundOpen && baseChunk < layout.chunkCount()) {
            final ChunkSlot slot = slots[baseChunk % slots.length];
            if (slot.chunk != baseChunk || !slot.voted || !sendSlot(slot)) {
                break;
            }
            slot.reset(-1);
            baseChunk++;
            work++;
            if (baseChunk == layout.chunkCount()) {
                roundOpen = false;
                counters.votersLastRound().setRelease(slot.voters);
                counters.rounds().incrementRelease();
            }
        }
        return work;
    }

    private boolean sendSlot(final ChunkSlot slot) {
        final int chunkWordOffset = layout.wordOffset(slot.chunk);
        final int words = layout.wordsOf(slot.chunk);
        while (slot.sentWords < words) {
            final int frameWords;
            final int bodyLength;
            final int from = slot.sentWords;
            if (slot.encoding == Encoding.COUNT_PLANES) {
                final int fit = maxBodyLength / (Encoding.bitsFor(slot.voters) * Long.BYTES);
                frameWords = Math.min(words - from, fit - fit % 4);
            } else if (slot.encoding == Encoding.TERNARY) {
                frameWords = Math.min(words - from, maxBodyLength / TERNARY_GROUP_BYTES * TERNARY_GROUP_WORDS);
            } else {
                frameWords = words;
            }
            bodyLength = Encoding.bodyLength(slot.encoding, frameWords, layout.paramsOf(chunkWordOffset + from, frameWords), slot.voters);
            final long result = publication.tryClaim(MessageHeaderFlyweight.HEADER_LENGTH + bodyLength, bufferClaim);
            if (result < 0) {
                onOfferFailure(result);
                return false;
            }
            final MutableDirectBuffer buffer = bufferClaim.buffer();
            final int offset = bufferClaim.offset();
            outHeader.wrap(buffer, offset)
                .writeHeader(MessageType.RESULT_CHUNK, slot.encoding)
                .jobId(ctx.jobId)
                .round(currentRound)
                .chunkWordOffset(chunkWordOffset + from)
                .chunkWords(frameWords)
                .workerId(MessageHeaderFlyweight.SERVER_WORKER_ID)
                .shard(ctx.shard)
                .voterMask(slot.voterMask);
            writeBody(slot, buffer, outHeader.bodyOffset(), from, frameWords, layout.paramsOf(chunkWordOffset + from, frameWords));
            bufferClaim.commit();
            counters.bytesOut().getAndAddPlain(ChunkLayout.frameLength(bodyLength));
            slot.sentWords += frameWords;
        }
        return true;
    }

    private void writeBody(final ChunkSlot slot, final MutableDirectBuffer buffer, final int body, final int from, final int words,
        final long params) {
        switch (slot.encoding) {
            case Encoding.SIGN_BITS:
                putWords(buffer, body, slot.sign, from, words);
                break;
            case Encoding.TERNARY:
                final int length = ChunkVoter.encodeTernary(slot.sign, slot.tie, from, params, ternaryScratch);
                buffer.putBytes(body, ternaryScratch, 0, length);
                break;
            default:
                final long[][] planes = slot.planes;
                final int count = Encoding.bitsFor(slot.voters);
                for (int p = 0; p < count; p++) {
                    putWords(buffer, body + p * words * Long.BYTES, planes[p], from, words);
                }
                break;
        }
    }

    private static void putWords(final MutableDirectBuffer buffer, final int offset, final long[] src, final int from, final int words) {
        for (int i = 0; i < words; i++) {
            buffer.putLong(offset + (i << 3), src[from + i], ByteOrder.LITTLE_ENDIAN);
        }
    }

    private void onOfferFailure(final long result) {
        if (result == Publication.BACK_PRESSURED || result == Publication.ADMIN_ACTION || result == Publication.NOT_CONNECTED) {
            counters.backPressure().incrementPlain();
        } else if (result == Publication.CLOSED) {
            throw new IllegalStateException("result publication closed: " + ctx.resultChannel);
        } else if (result == Publication.MAX_POSITION_EXCEEDED) {
            throw new IllegalStateException("result publication reached its maximum position, restart the server with a larger term-length: "
                + ctx.resultChannel);
        } else {
            throw new IllegalStateException("unknown offer result " + result);
        }
    }

    private static final class ChunkSlot {
        final long[][] votes;
        final long[] sign;
        final long[] tie;
        final long[][] planes;
        int chunk = -1;
        long arrived;
        boolean voted;
        long voterMask;
        int voters;
        int encoding;
        int sentWords;

        ChunkSlot(final int workers, final int chunkWords, final boolean ties, final int planes) {
            votes = new long[workers][chunkWords];
            sign = new long[chunkWords];
            tie = ties ? new long[chunkWords] : null;
            this.planes = new long[planes][chunkWords];
        }

        void reset(final int chunk) {
            this.chunk = chunk;
            arrived = 0;
            voted = false;
            sentWords = 0;
        }
    }

    /**
     * Configuration of one aggregation server. Required: {@link #aeron(Aeron)}, {@link #jobId(int)},
     * {@link #workers(int)}, {@link #paramCount(long)}; everything else has a default from {@link Configuration}.
     */
    public static final class Context {
        private Aeron aeron;
        private int jobId;
        private boolean jobIdSet;
        private int workers;
        private long paramCount;
        private int shard;
        private long fromParam;
        private long toParam = -1;
        private VoteRule rule = VoteRule.MAJORITY;
        private String voteChannel = Configuration.voteChannel();
        private int voteStreamId = Configuration.voteStreamId();
        private String resultChannel = Configuration.resultChannel();
        private int resultStreamId = Configuration.resultStreamId();
        private int chunkWords = Configuration.chunkWords();
        private int windowChunks = Configuration.windowChunks();
        private long roundTimeoutNs = TimeUnit.MILLISECONDS.toNanos(Configuration.roundTimeoutMs());
        private int fragmentLimit = Configuration.fragmentLimit();
        private NanoClock nanoClock = SystemNanoClock.INSTANCE;

        /**
         * Validate the configuration once and fill derived defaults.
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
            if (paramCount < 1) {
                throw new IllegalArgumentException("paramCount must be >= 1, got " + paramCount);
            }
            if (toParam < 0) {
                toParam = paramCount;
            }
            if (shard < 0 || shard > 0xFF) {
                throw new IllegalArgumentException("shard must be in [0, 255], got " + shard);
            }
            Objects.requireNonNull(rule, "rule");
            Objects.requireNonNull(voteChannel, "voteChannel");
            Objects.requireNonNull(resultChannel, "resultChannel");
            if (windowChunks < 1) {
                throw new IllegalArgumentException("windowChunks must be >= 1, got " + windowChunks);
            }
            if (roundTimeoutNs <= 0) {
                throw new IllegalArgumentException("roundTimeoutNs must be > 0, got " + roundTimeoutNs);
            }
            if (fragmentLimit < 1) {
                throw new IllegalArgumentException("fragmentLimit must be >= 1, got " + fragmentLimit);
            }
            Objects.requireNonNull(nanoClock, "nanoClock");
            new ChunkLayout(paramCount, fromParam, toParam, chunkWords);
            return this;
        }

        /**
         * @param aeron client to add publications, subscriptions and counters with; not closed by the server.
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
         * @param jobId of the job; messages of other jobs are rejected.
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
         * @param workers number of workers that vote, 1 to 64.
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
         * @param paramCount parameters of the whole vector (all shards).
         * @return this for a fluent API.
         */
        public Context paramCount(final long paramCount) {
            this.paramCount = paramCount;
            return this;
        }

        public long paramCount() {
            return paramCount;
        }

        /**
         * @param shard index of this server's slice, 0 to 255.
         * @return this for a fluent API.
         */
        public Context shard(final int shard) {
            this.shard = shard;
            return this;
        }

        public int shard() {
            return shard;
        }

        /**
         * @param fromParam first parameter this server owns, a multiple of 64.
         * @param toParam   end (exclusive) of the slice, a multiple of 64 or the parameter count.
         * @return this for a fluent API.
         */
        public Context paramRange(final long fromParam, final long toParam) {
            this.fromParam = fromParam;
            this.toParam = toParam;
            return this;
        }

        public long fromParam() {
            return fromParam;
        }

        public long toParam() {
            return toParam;
        }

        /**
         * @param rule majority vote or averaging.
         * @return this for a fluent API.
         */
        public Context rule(final VoteRule rule) {
            this.rule = rule;
            return this;
        }

        public VoteRule rule() {
            return rule;
        }

        /**
         * @param channel the server subscribes to for votes.
         * @return this for a fluent API.
         */
        public Context voteChannel(final String channel) {
            this.voteChannel = channel;
            return this;
        }

        public String voteChannel() {
            return voteChannel;
        }

        /**
         * @param streamId of the votes.
         * @return this for a fluent API.
         */
        public Context voteStreamId(final int streamId) {
            this.voteStreamId = streamId;
            return this;
        }

        public int voteStreamId() {
            return voteStreamId;
        }

        /**
         * @param channel the server publishes results on: IPC, an MDC control address or a multicast group.
         * @return this for a fluent API.
         */
        public Context resultChannel(final String channel) {
            this.resultChannel = channel;
            return this;
        }

        public String resultChannel() {
            return resultChannel;
        }

        /**
         * @param streamId of the results.
         * @return this for a fluent API.
         */
        public Context resultStreamId(final int streamId) {
            this.resultStreamId = streamId;
            return this;
        }

        public int resultStreamId() {
            return resultStreamId;
        }

        /**
         * @param chunkWords words per chunk, the same as the workers'.
         * @return this for a fluent API.
         */
        public Context chunkWords(final int chunkWords) {
            this.chunkWords = chunkWords;
            return this;
        }

        public int chunkWords() {
            return chunkWords;
        }

        /**
         * @param windowChunks chunks held at once per worker.
         * @return this for a fluent API.
         */
        public Context windowChunks(final int windowChunks) {
            this.windowChunks = windowChunks;
            return this;
        }

        public int windowChunks() {
            return windowChunks;
        }

        /**
         * @param roundTimeoutNs how long a round may stay open before it is abandoned.
         * @return this for a fluent API.
         */
        public Context roundTimeoutNs(final long roundTimeoutNs) {
            this.roundTimeoutNs = roundTimeoutNs;
            return this;
        }

        public long roundTimeoutNs() {
            return roundTimeoutNs;
        }

        /**
         * @param fragmentLimit fragments polled per duty cycle.
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
         * @param nanoClock for the round timeout.
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
