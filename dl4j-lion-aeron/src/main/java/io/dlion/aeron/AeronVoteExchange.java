package io.dlion.aeron;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
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
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.aeron.wire.ResultChunkFlyweight;
import io.dlion.aeron.wire.VoteChunkFlyweight;
import io.dlion.codec.DownlinkEncoding;
import io.dlion.exchange.ExchangeCounters;
import io.dlion.exchange.JoinNotice;
import io.dlion.exchange.RoundResult;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.SystemNanoClock;

/**
 * A worker's end of the vote over Aeron. For every shard it owns an {@link ExclusivePublication} for its vote
 * chunks and a {@link Subscription} for the shard server's result chunks.
 * <p>
 * {@link #submit} copies the vote and sends the chunks the publications accept without waiting;
 * {@link #await} sends the rest while it collects result chunks (results of early chunks arrive while late
 * chunks are still going up), and gives up at the deadline with a {@link TimeoutException}: an offer that is
 * back-pressured, not connected or hit by an admin action is retried until then, never longer. Bytes are
 * counted as they go on or come off the log: Aeron's 32-byte data header, the 32-byte message header and the
 * body, padded to Aeron's 32-byte frame alignment.
 * <p>
 * Voters: every result frame names the workers it counts. When a worker is dropped in the middle of a round (at the
 * server's deadline, after some chunks were voted with it), or the shards' voters differ, the chunks of one round
 * count different numbers of voters. With MAJORITY that does not change Delta (the result's voter mask is the
 * workers counted in every chunk). With AVERAGE the result gets one segment per run of chunks with the same count
 * ({@link RoundResult#averageSegments}), its voter mask is every worker counted anywhere, and each parameter is applied
 * with the count of the chunk it was voted in.
 * <p>
 * Not thread-safe: one training thread calls {@code submit -> await} per round. Counters may be read from
 * any thread.
 */
public final class AeronVoteExchange implements VoteExchange {
    private final Context ctx;
    private final ShardState[] shards;
    private final int totalWords;
    private final long lastWordMask;
    private final long[] vote;
    private final long[][] voteView;
    private final long[][] scratch;
    /** Rounds a worker repeats its HELLO after a server restart until a result counts it. */
    static final int MAX_HELLO_REPEATS = 20;

    private final ExchangeCounters exchangeCounters = new ExchangeCounters();
    private final WorkerCounters counters;
    private final HelloFlyweight helloOut = new HelloFlyweight();
    private final VoteChunkFlyweight voteOut = new VoteChunkFlyweight();
    private final MessageHeaderFlyweight inHeader = new MessageHeaderFlyweight();
    private final ResultChunkFlyweight resultIn = new ResultChunkFlyweight();
    private final JoinNoticeFlyweight noticeIn = new JoinNoticeFlyweight();
    private final BufferClaim bufferClaim = new BufferClaim();

    private long nextRound;
    private long submittedRound = -1;
    private boolean joining;
    private JoinNotice rejoinRequired;
    private final List<JoinNotice> notices = new ArrayList<>();
    private long submitNs;
    private final HelloCredentials credentials;
    private final SplittableRandom nonces = new SplittableRandom(System.nanoTime());
    private long[] sign;
    private long[] tie;
    private long[][] planes;
    private boolean closed;

    /**
     * Connect to every shard's server: waits up to the connect timeout for the publications and subscriptions
     * to connect, then says HELLO.
     *
     * @param ctx configuration, concluded here.
     * @throws IllegalStateException when a shard does not connect in time.
     */
    public AeronVoteExchange(final Context ctx) {
        this.ctx = ctx.conclude();
        this.totalWords = (int)((ctx.paramCount + 63) >>> 6);
        this.lastWordMask = ChunkLayout.lastWordMask(ctx.paramCount);
        this.vote = new long[totalWords];
        this.credentials = ctx.secret == null ? null : new HelloCredentials(ctx.secret);
        this.joining = ctx.join;
        this.nextRound = ctx.join ? Long.MAX_VALUE : ctx.firstRound;
        this.voteView = new long[][] {vote};
        this.scratch = new long[ctx.rule == VoteRule.MAJORITY ? 2 : VoteAggregator.planes(ctx.workers)][ctx.chunkWords];
        this.shards = new ShardState[ctx.shards.size()];
        WorkerCounters cnt = null;
        try {
            cnt = new WorkerCounters(ctx.aeron, ctx.jobId, ctx.workerId);
            for (int i = 0; i < shards.length; i++) {
                shards[i] = new ShardState(ctx.shards.get(i));
            }
        } catch (final RuntimeException ex) {
            CloseHelper.quietCloseAll(shards);
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
        return ctx.workers;
    }

    @Override
    public void submit(final long round, final long[] signWords, final long paramCount) {
        if (closed) {
            throw new IllegalStateException("exchange closed");
        }
        if (joining) {
            throw new IllegalStateException("worker " + ctx.workerId + " is joining: awaitJoin first, then submit the round it returns");
        }
        if (round != nextRound) {
            throw new IllegalArgumentException("round must be " + nextRound + ", got " + round);
        }
        if (paramCount != ctx.paramCount) {
            throw new IllegalArgumentException("paramCount must be " + ctx.paramCount + ", got " + paramCount);
        }
        System.arraycopy(signWords, 0, vote, 0, totalWords);
        vote[totalWords - 1] &= lastWordMask;
        submittedRound = round;
        submitNs = ctx.nanoClock.nanoTime();
        sign = ctx.rule == VoteRule.MAJORITY ? new long[totalWords] : null;
        tie = null;
        planes = null;
        for (final ShardState shard : shards) {
            shard.startRound();
            if (shard.checkServer() == 0) {
                shard.repeatHello();
            }
        }
        sendChunks();
    }

    @Override
    public RoundResult await(final long round, final long timeoutMillis) throws TimeoutException, InterruptedException {
        if (round != submittedRound || round != nextRound) {
            throw new IllegalArgumentException("await must follow submit of the same round: submitted " + submittedRound + ", got " + round);
        }
        final long deadline = ctx.nanoClock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        final IdleStrategy idle = ctx.idleStrategy;
        idle.reset();
        while (true) {
            int work = 0;
            for (final ShardState shard : shards) {
                work += shard.checkServer();
            }
            work += sendChunks();
            boolean done = true;
            for (final ShardState shard : shards) {
                if (!shard.resultDone()) {
                    work += shard.subscription.controlledPoll(shard.handler, ctx.fragmentLimit);
                    if (shard.abortMask >= 0) {
                        nextRound = round + 1;
                        throw new QuorumLostException(round, shard.endpoint.shard(), shard.abortMask);
                    }
                    if (rejoinRequired != null) {
                        throw new RejoinRequiredException(round, rejoinRequired);
                    }
                    done &= shard.resultDone();
                }
            }
            if (done) {
                return complete(round);
            }
            final long now = ctx.nanoClock.nanoTime();
            if (now - deadline >= 0) {
                throw new TimeoutException(describeTimeout(round, timeoutMillis));
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while awaiting round " + round);
            }
            idle.idle(work);
        }
    }

    /**
     * For an exchange made with {@link Context#join(boolean) join(true)}: wait until every shard's server has
     * announced the round this worker votes in first (its JOIN_NOTICE). Results of earlier rounds are read and
     * dropped meanwhile.
     *
     * @param timeoutMillis how long to wait at most.
     * @return the notice: the first round (the latest over the shards) and the donor, whose parameters at the start
     *     of that round this worker must take before it votes.
     * @throws TimeoutException when no notice arrived in time.
     */
    public JoinNotice awaitJoin(final long timeoutMillis) throws TimeoutException, InterruptedException {
        if (!joining) {
            throw new IllegalStateException("worker " + ctx.workerId + " is not joining (Context.join(true)) or has already joined");
        }
        final long deadline = ctx.nanoClock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        final IdleStrategy idle = ctx.idleStrategy;
        idle.reset();
        while (true) {
            final int work = pollIdle();
            boolean all = true;
            long first = -1;
            int donor = -1;
            for (final ShardState shard : shards) {
                all &= shard.joinRound >= 0;
                if (shard.joinRound > first) {
                    first = shard.joinRound;
                    donor = shard.joinDonor;
                }
            }
            if (all) {
                joining = false;
                nextRound = first;
                return new JoinNotice(ctx.workerId, first, donor);
            }
            if (ctx.nanoClock.nanoTime() - deadline >= 0) {
                throw new TimeoutException("worker " + ctx.workerId + ": no JOIN_NOTICE from the server within " + timeoutMillis
                    + " ms (is the server running and does it know this job and secret?)");
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while joining");
            }
            idle.idle(work);
        }
    }

    /**
     * Between rounds: read result frames of rounds this worker will not vote in (and join notices) and drop them, so
     * that a worker which waits between rounds (e.g. for a donor's parameters) does not hold up the broadcast to the
     * others; frames of the round it votes in next stay in the log.
     *
     * @return work done.
     */
    public int pollIdle() {
        if (submittedRound == nextRound && !closed) {
            throw new IllegalStateException("pollIdle between rounds only: round " + submittedRound + " is awaited");
        }
        int work = 0;
        for (final ShardState shard : shards) {
            work += shard.checkServer();
            work += shard.subscription.controlledPoll(shard.handler, ctx.fragmentLimit);
        }
        return work;
    }

    @Override
    public List<JoinNotice> takeJoinNotices() {
        if (notices.isEmpty()) {
            return List.of();
        }
        final List<JoinNotice> taken = List.copyOf(notices);
        notices.clear();
        return taken;
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
            CloseHelper.closeAll(shards);
            CloseHelper.close(counters);
        }
    }

    private void connect() {
        final long deadline = ctx.nanoClock.nanoTime() + ctx.connectTimeoutNs;
        final IdleStrategy idle = ctx.idleStrategy;
        for (final ShardState shard : shards) {
            while (!shard.publication.isConnected() || !shard.subscription.isConnected() || shard.latestServerSession == 0) {
                if (ctx.nanoClock.nanoTime() - deadline >= 0) {
                    throw new IllegalStateException("shard " + shard.endpoint.shard() + " not connected after "
                        + TimeUnit.NANOSECONDS.toMillis(ctx.connectTimeoutNs) + " ms (votes connected: " + shard.publication.isConnected()
                        + ", results connected: " + shard.subscription.isConnected() + "); is its server running? " + shard.endpoint);
                }
                idle.idle();
            }
            final int session = shard.latestServerSession;
            while (!shard.sendHello()) {
                if (ctx.nanoClock.nanoTime() - deadline >= 0) {
                    throw new IllegalStateException("shard " + shard.endpoint.shard() + ": HELLO not accepted by the publication in time");
                }
                idle.idle();
            }
            shard.serverSession = session;
        }
    }

    private int sendChunks() {
        int work = 0;
        for (final ShardState shard : shards) {
            work += shard.sendChunks();
        }
        return work;
    }

    private RoundResult complete(final long round) {
        long all = -1L;
        long any = 0;
        for (final ShardState shard : shards) {
            all &= shard.maskAll;
            any |= shard.maskAny;
        }
        final RoundResult result;
        if (ctx.rule == VoteRule.MAJORITY) {
            final long mask = all != 0 ? all : any;
            final int voters = Long.bitCount(mask);
            result = RoundResult.majority(round, ctx.paramCount, voters, mask, sign, tie != null || (voters & 1) == 0 ? tieWords() : null);
        } else {
            result = averageResult(round, any);
        }
        nextRound = round + 1;
        counters.rounds().incrementRelease();
        exchangeCounters.addRound(ctx.nanoClock.nanoTime() - submitNs);
        sign = null;
        tie = null;
        planes = null;
        return result;
    }

    /**
     * The AVERAGE result of a complete round: one voter count, or segments where the chunks' counts differ (the shards'
     * runs of equal counts, in word order).
     */
    private RoundResult averageResult(final long round, final long mask) {
        int segments = 0;
        int max = 0;
        boolean one = true;
        final int first = shards[0].runVoters[0];
        for (final ShardState shard : shards) {
            segments += shard.runs;
            for (int r = 0; r < shard.runs; r++) {
                max = Math.max(max, shard.runVoters[r]);
                one &= shard.runVoters[r] == first;
            }
        }
        final int count = VoteAggregator.planes(max);
        final long[][] counts = planes.length == count ? planes : Arrays.copyOf(planes, count);
        if (one) {
            return RoundResult.average(round, ctx.paramCount, max, mask, counts);
        }
        final int[] starts = new int[segments];
        final int[] voters = new int[segments];
        int i = 0;
        for (final ShardState shard : shards) {
            System.arraycopy(shard.runStart, 0, starts, i, shard.runs);
            System.arraycopy(shard.runVoters, 0, voters, i, shard.runs);
            i += shard.runs;
        }
        return RoundResult.averageSegments(round, ctx.paramCount, mask, counts, starts, voters);
    }

    private long[] tieWords() {
        if (tie == null) {
            tie = new long[totalWords];
        }
        return tie;
    }

    private String describeTimeout(final long round, final long timeoutMillis) {
        final StringBuilder sb = new StringBuilder("worker ").append(ctx.workerId).append(": no complete result for round ").append(round)
            .append(" after ").append(timeoutMillis).append(" ms;");
        for (final ShardState shard : shards) {
            sb.append(" shard ").append(shard.endpoint.shard()).append(": sent ").append(shard.nextChunk).append('/')
                .append(shard.layout.chunkCount()).append(" chunks, received ").append(shard.nextResultWord - shard.layout.fromWord())
                .append('/').append(shard.layout.words()).append(" result words");
            if (!shard.publication.isConnected() || !shard.subscription.isConnected()) {
                sb.append(", server not connected (down or restarting; a restarted server is rejoined automatically within"
                    + " the await timeout)");
            }
            sb.append(';');
        }
        return sb.toString();
    }

    private void offerFailed(final long result, final ShardState shard) {
        if (result == Publication.BACK_PRESSURED || result == Publication.ADMIN_ACTION || result == Publication.NOT_CONNECTED) {
            counters.offersNotAccepted().incrementRelease();
        } else if (result == Publication.CLOSED) {
            throw new IllegalStateException("vote publication closed: " + shard.endpoint);
        } else if (result == Publication.MAX_POSITION_EXCEEDED) {
            throw new IllegalStateException("vote publication reached its maximum position, use a larger term-length: " + shard.endpoint);
        } else {
            throw new IllegalStateException("unknown offer result " + result);
        }
    }

    private final class ShardState implements AutoCloseable {
        final ShardEndpoint endpoint;
        final ChunkLayout layout;
        final ExclusivePublication publication;
        final Subscription subscription;
        final ControlledFragmentHandler handler = this::onResult;
        volatile int latestServerSession;
        int serverSession;
        int nextChunk;
        int nextResultWord;
        long joinRound = -1;
        int joinDonor = -1;
        int helloRepeats;
        long maskAll;
        long maskAny;
        long abortMask = -1;
        /** AVERAGE: runs of result chunks with the same voter count in this round, in word order (first word, count). */
        int[] runStart = new int[2];
        int[] runVoters = new int[2];
        int runs;

        ShardState(final ShardEndpoint endpoint) {
            this.endpoint = endpoint;
            final long to = endpoint.toParam() < 0 ? ctx.paramCount : endpoint.toParam();
            this.layout = new ChunkLayout(ctx.paramCount, endpoint.fromParam(), to, ctx.chunkWords);
            ExclusivePublication pub = null;
            try {
                pub = ctx.aeron.addExclusivePublication(endpoint.voteChannel(), endpoint.voteStreamId());
                this.subscription = ctx.aeron.addSubscription(endpoint.resultChannel(), endpoint.resultStreamId(),
                    image -> latestServerSession = image.sessionId(), image -> { });
            } catch (final RuntimeException ex) {
                CloseHelper.quietClose(pub);
                throw ex;
            }
            this.publication = pub;
            if (pub.maxPayloadLength() < MessageHeaderFlyweight.HEADER_LENGTH + ctx.chunkWords * Long.BYTES) {
                close();
                throw new IllegalArgumentException("voteChannel mtu too small for chunkWords=" + ctx.chunkWords + ": max payload "
                    + pub.maxPayloadLength() + " bytes, need " + (MessageHeaderFlyweight.HEADER_LENGTH + ctx.chunkWords * Long.BYTES)
                    + " (use mtu=8k or fewer chunkWords): " + endpoint);
            }
            this.nextChunk = layout.chunkCount();
            this.nextResultWord = layout.toWord();
        }

        void startRound() {
            nextChunk = 0;
            nextResultWord = layout.fromWord();
            maskAll = -1L;
            maskAny = 0;
            abortMask = -1;
            runs = 0;
        }

        void addRun(final int wordOffset, final int voters) {
            if (runs > 0 && runVoters[runs - 1] == voters) {
                return;
            }
            if (runs == runStart.length) {
                runStart = Arrays.copyOf(runStart, 2 * runs);
                runVoters = Arrays.copyOf(runVoters, 2 * runs);
            }
            runStart[runs] = wordOffset;
            runVoters[runs] = voters;
            runs++;
        }

        boolean resultDone() {
            return nextResultWord == layout.toWord();
        }

        /**
         * A result image of a new server session means the shard's server was restarted: say HELLO again and, in a
         * round, send every chunk again and drop what the old server sent of it.
         *
         * @return work done.
         */
        /**
         * After a server restart, a HELLO the worker sent while the new server's image of its vote publication was not
         * yet set up is lost (the publication still counts as connected to the dead server), and the server would
         * refuse all its votes as unauthenticated. So until a result counts this worker, every round starts with the
         * HELLO again (at most {@value #MAX_HELLO_REPEATS} times; a HELLO the server already took is harmless).
         */
        void repeatHello() {
            if (helloRepeats > 0 && !joining && sendHello()) {
                helloRepeats--;
            }
        }

        int checkServer() {
            final int latest = latestServerSession;
            if (latest == 0 || latest == serverSession || !publication.isConnected()) {
                return 0;
            }
            if (!sendHello()) {
                return 0;
            }
            serverSession = latest;
            helloRepeats = MAX_HELLO_REPEATS;
            counters.serverReconnects().incrementRelease();
            if (submittedRound == nextRound && !resultDone()) {
                startRound();
                for (int w = layout.fromWord(); w < layout.toWord(); w++) {
                    if (sign != null) {
                        sign[w] = 0;
                    }
                    if (tie != null) {
                        tie[w] = 0;
                    }
                }
                if (planes != null) {
                    for (final long[] plane : planes) {
                        Arrays.fill(plane, layout.fromWord(), layout.toWord(), 0L);
                    }
                }
            }
            return 1;
        }

        boolean sendHello() {
            final int length = HelloFlyweight.length(credentials != null);
            final long result = publication.tryClaim(length, bufferClaim);
            if (result < 0) {
                offerFailed(result, this);
                return false;
            }
            helloOut.wrap(bufferClaim.buffer(), bufferClaim.offset()).encode(ctx.jobId, joining ? HelloFlyweight.JOIN_ROUND : nextRound,
                layout.fromWord(), ctx.workerId, endpoint.shard(), ctx.paramCount, credentials, credentials == null ? 0 : nonces.nextLong(),
                credentials == null ? 0 : ctx.epochClock.time());
            bufferClaim.commit();
            counters.bytesUp().getAndAddRelease(ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH));
            return true;
        }

        int sendChunks() {
            int sent = 0;
            while (nextChunk < layout.chunkCount()) {
                final int words = layout.wordsOf(nextChunk);
                final int wordOffset = layout.wordOffset(nextChunk);
                final int length = VoteChunkFlyweight.length(layout.paramsOf(wordOffset, words));
                final long result = publication.tryClaim(length, bufferClaim);
                if (result < 0) {
                    offerFailed(result, this);
                    break;
                }
                voteOut.wrap(bufferClaim.buffer(), bufferClaim.offset()).encode(ctx.jobId, submittedRound, wordOffset, words, ctx.workerId,
                    endpoint.shard(), voteView, ctx.paramCount, wordOffset);
                bufferClaim.commit();
                final int frame = ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH);
                counters.bytesUp().getAndAddRelease(frame);
                exchangeCounters.addBytesUp(frame);
                nextChunk++;
                sent++;
            }
            return sent;
        }

        ControlledFragmentHandler.Action onResult(final DirectBuffer buffer, final int offset, final int length, final Header header) {
            if (header.flags() != FrameDescriptor.UNFRAGMENTED || length < MessageHeaderFlyweight.HEADER_LENGTH) {
                counters.rejectedResults().incrementRelease();
                return ControlledFragmentHandler.Action.CONTINUE;
            }
            final MessageHeaderFlyweight msg = inHeader.wrapForRead(buffer, offset);
            final int type = msg.type();
            if (msg.magic() != (MessageHeaderFlyweight.MAGIC & 0xFF) || msg.version() != MessageHeaderFlyweight.VERSION
                || msg.jobId() != ctx.jobId || (type != MessageType.RESULT_CHUNK && type != MessageType.ROUND_ABORT
                && type != MessageType.JOIN_NOTICE) || msg.shard() != endpoint.shard()) {
                counters.rejectedResults().incrementRelease();
                return ControlledFragmentHandler.Action.CONTINUE;
            }
            if (serverSession != 0 && header.sessionId() != serverSession) {
                counters.staleResults().incrementRelease();
                return ControlledFragmentHandler.Action.CONTINUE;
            }
            final long round = msg.round();
            if (type == MessageType.JOIN_NOTICE) {
                return onJoinNotice(noticeIn.wrapForRead(buffer, offset));
            }
            // in a round: the round submitted; between rounds: the round completed last (its frames are all read)
            final long current = submittedRound == nextRound ? submittedRound : nextRound - 1;
            if (round > current) {
                return ControlledFragmentHandler.Action.ABORT;
            }
            if (round < current || resultDone()) {
                counters.staleResults().incrementRelease();
                return ControlledFragmentHandler.Action.CONTINUE;
            }
            final long mask = msg.voterMask();
            if (type == MessageType.ROUND_ABORT) {
                abortMask = mask;
                return ControlledFragmentHandler.Action.BREAK;
            }
            final int wordOffset = msg.chunkWordOffset();
            final int words = msg.chunkWords();
            final long allWorkers = ctx.workers == Long.SIZE ? -1L : (1L << ctx.workers) - 1;
            if (wordOffset != nextResultWord || words < 1 || words > layout.toWord() - wordOffset || mask == 0 || (mask & ~allWorkers) != 0
                || !decode(resultIn.wrapForRead(buffer, offset), length, wordOffset, words, mask)) {
                counters.rejectedResults().incrementRelease();
                return ControlledFragmentHandler.Action.CONTINUE;
            }
            maskAll &= mask;
            maskAny |= mask;
            if ((mask & (1L << ctx.workerId)) != 0) {
                helloRepeats = 0;
            }
            if (ctx.rule == VoteRule.AVERAGE) {
                addRun(wordOffset, Long.bitCount(mask));
            }
            nextResultWord += words;
            final int frame = ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH);
            counters.bytesDown().getAndAddRelease(frame);
            exchangeCounters.addBytesDown(frame);
            return ControlledFragmentHandler.Action.CONTINUE;
        }

        private ControlledFragmentHandler.Action onJoinNotice(final JoinNoticeFlyweight frame) {
            final long round = frame.firstRound();
            final long mask = frame.joiningMask();
            final long allWorkers = ctx.workers == Long.SIZE ? -1L : (1L << ctx.workers) - 1;
            final int donor = frame.donor();
            if (Long.bitCount(mask) != 1 || (mask & ~allWorkers) != 0 || round < 0
                || (donor >= ctx.workers && donor != JoinNoticeFlyweight.NO_DONOR)) {
                counters.rejectedResults().incrementRelease();
                return ControlledFragmentHandler.Action.CONTINUE;
            }
            final int worker = Long.numberOfTrailingZeros(mask);
            final int donorOrNone = donor == JoinNoticeFlyweight.NO_DONOR ? -1 : donor;
            if (worker == ctx.workerId) {
                if (joining) {
                    joinRound = round;
                    joinDonor = donorOrNone;
                } else {
                    rejoinRequired = new JoinNotice(worker, round, donorOrNone);
                }
            } else {
                final JoinNotice notice = new JoinNotice(worker, round, donorOrNone);
                if (!notices.contains(notice)) {
                    notices.add(notice);
                }
            }
            return ControlledFragmentHandler.Action.CONTINUE;
        }

        private boolean decode(final ResultChunkFlyweight msg, final int length, final int wordOffset, final int words, final long mask) {
            final int voters = Long.bitCount(mask);
            final int encoding = msg.header().encoding();
            final boolean allowed = ctx.rule == VoteRule.MAJORITY
                ? encoding == ((voters & 1) == 1 ? Encoding.SIGN_BITS : Encoding.TERNARY)
                : encoding == Encoding.COUNT_PLANES;
            final long params = layout.paramsOf(wordOffset, words);
            if (!allowed || voters > ctx.workers || words > ctx.chunkWords
                || length != MessageHeaderFlyweight.HEADER_LENGTH + Encoding.bodyLength(encoding, words, params, voters)) {
                return false;
            }
            final DownlinkEncoding downlink = DownlinkEncoding.of(ctx.rule, voters);
            try {
                msg.decode(downlink, params, scratch);
            } catch (final IllegalArgumentException ex) {
                return false;
            }
            switch (encoding) {
                case Encoding.SIGN_BITS:
                    System.arraycopy(scratch[0], 0, sign, wordOffset, words);
                    break;
                case Encoding.TERNARY:
                    System.arraycopy(scratch[0], 0, sign, wordOffset, words);
                    System.arraycopy(scratch[1], 0, tieWords(), wordOffset, words);
                    break;
                default:
                    // chunks of one round may count different voters (a worker dropped mid-round): the planes cover
                    // the largest count so far; a chunk with fewer voters has zero high planes
                    final int count = downlink.planes();
                    if (planes == null) {
                        planes = new long[count][totalWords];
                    } else if (planes.length < count) {
                        final int had = planes.length;
                        planes = Arrays.copyOf(planes, count);
                        for (int p = had; p < count; p++) {
                            planes[p] = new long[totalWords];
                        }
                    }
                    for (int p = 0; p < count; p++) {
                        System.arraycopy(scratch[p], 0, planes[p], wordOffset, words);
                    }
                    for (int p = count; p < planes.length; p++) {
                        Arrays.fill(planes[p], wordOffset, wordOffset + words, 0L);
                    }
                    break;
            }
            return true;
        }

        @Override
        public void close() {
            CloseHelper.closeAll(publication, subscription);
        }
    }

    /**
     * Configuration of one worker's exchange. Required: {@link #aeron(Aeron)}, {@link #jobId(int)},
     * {@link #workerId(int)}, {@link #workers(int)}, {@link #paramCount(long)}; without {@link #shards(List)} one
     * shard on the {@link Configuration} channels covers every parameter. The job's shared settings are
     * {@link JobContext}'s.
     */
    public static final class Context extends JobContext<Context> {
        private Aeron aeron;
        private int workerId = -1;
        private List<ShardEndpoint> shards = new ArrayList<>();
        private long connectTimeoutNs = TimeUnit.MILLISECONDS.toNanos(Configuration.connectTimeoutMs());
        private int fragmentLimit = Configuration.fragmentLimit();
        private long firstRound;
        private boolean join;
        private EpochClock epochClock = SystemEpochClock.INSTANCE;
        private IdleStrategy idleStrategy = new BackoffIdleStrategy(100, 10, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MICROSECONDS.toNanos(100));
        private NanoClock nanoClock = SystemNanoClock.INSTANCE;

        /**
         * Validate once.
         *
         * @return this for a fluent API.
         * @throws IllegalArgumentException naming the field that is wrong.
         */
        @Override
        public Context conclude() {
            super.conclude();
            Objects.requireNonNull(aeron, "aeron");
            if (workerId < 0 || workerId >= workers) {
                throw new IllegalArgumentException("workerId must be in [0, workers=" + workers + "), got " + workerId);
            }
            if (shards.isEmpty()) {
                shards = List.of(ShardEndpoint.whole(Configuration.voteChannel(), Configuration.resultChannel()));
            }
            long expectedFrom = 0;
            for (int i = 0; i < shards.size(); i++) {
                final ShardEndpoint shard = shards.get(i);
                final long to = shard.toParam() < 0 ? paramCount : shard.toParam();
                if (shard.fromParam() != expectedFrom) {
                    throw new IllegalArgumentException("shards must cover [0, paramCount) in order without gaps: shard " + i
                        + " starts at " + shard.fromParam() + ", expected " + expectedFrom);
                }
                new ChunkLayout(paramCount, shard.fromParam(), to, chunkWords);
                expectedFrom = to;
            }
            if (expectedFrom != paramCount) {
                throw new IllegalArgumentException("shards must cover [0, paramCount): they end at " + expectedFrom + " of " + paramCount);
            }
            if (connectTimeoutNs <= 0) {
                throw new IllegalArgumentException("connectTimeoutNs must be > 0, got " + connectTimeoutNs);
            }
            if (fragmentLimit < 1) {
                throw new IllegalArgumentException("fragmentLimit must be >= 1, got " + fragmentLimit);
            }
            Objects.requireNonNull(idleStrategy, "idleStrategy");
            Objects.requireNonNull(nanoClock, "nanoClock");
            Objects.requireNonNull(epochClock, "epochClock");
            if (firstRound < 0) {
                throw new IllegalArgumentException("firstRound must be >= 0, got " + firstRound);
            }
            return this;
        }

        /**
         * @param aeron client; not closed by the exchange.
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
         * @param workerId this worker, in [0, workers).
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
         * @param shards endpoints covering [0, paramCount) in order.
         * @return this for a fluent API.
         */
        public Context shards(final List<ShardEndpoint> shards) {
            this.shards = new ArrayList<>(shards);
            return this;
        }

        public List<ShardEndpoint> shards() {
            return shards;
        }

        /**
         * @param connectTimeoutNs how long the constructor waits for every shard to connect.
         * @return this for a fluent API.
         */
        public Context connectTimeoutNs(final long connectTimeoutNs) {
            this.connectTimeoutNs = connectTimeoutNs;
            return this;
        }

        public long connectTimeoutNs() {
            return connectTimeoutNs;
        }

        /**
         * @param fragmentLimit fragments polled per shard per loop.
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
         * @param idleStrategy used while awaiting results.
         * @return this for a fluent API.
         */
        public Context idleStrategy(final IdleStrategy idleStrategy) {
            this.idleStrategy = idleStrategy;
            return this;
        }

        public IdleStrategy idleStrategy() {
            return idleStrategy;
        }

        /**
         * @param nanoClock for deadlines.
         * @return this for a fluent API.
         */
        public Context nanoClock(final NanoClock nanoClock) {
            this.nanoClock = nanoClock;
            return this;
        }

        public NanoClock nanoClock() {
            return nanoClock;
        }

        /**
         * @param firstRound the round this worker submits first (default 0): a worker that joins or restarts in a running
         *                   job starts at the job's round, which it learns with the parameters it resumes from.
         * @return this for a fluent API.
         */
        public Context firstRound(final long firstRound) {
            this.firstRound = firstRound;
            return this;
        }

        public long firstRound() {
            return firstRound;
        }

        /**
         * @param join true for a worker that (re)joins a running job without its parameters: its HELLO asks the server
         *             for a first round and a donor, see {@link AeronVoteExchange#awaitJoin(long)}; firstRound is then
         *             ignored.
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
         * @param epochClock for HELLO timestamps.
         * @return this for a fluent API.
         */
        public Context epochClock(final EpochClock epochClock) {
            this.epochClock = epochClock;
            return this;
        }

        public EpochClock epochClock() {
            return epochClock;
        }
    }
}
