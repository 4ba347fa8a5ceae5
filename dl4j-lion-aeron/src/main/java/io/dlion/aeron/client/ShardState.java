package io.dlion.aeron.client;

import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.dlion.aeron.ShardEndpoint;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.aeron.wire.LittleEndianView;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.aeron.wire.ResultChunkFlyweight;
import io.dlion.aeron.wire.VoteChunkFlyweight;
import io.dlion.aeron.wire.WireBuffers;
import io.dlion.exchange.ExchangeCounters;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;

/**
 * A worker's link to one shard's server: the {@link ExclusivePublication} its vote chunks go up on and the
 * {@link Subscription} the server's frames come down on, and where this shard stands in the round: the next vote
 * chunk to send, the next result word expected, an abort, and which server session it talks to.
 * <p>
 * What it receives goes where it belongs: result chunks, once their frame is checked, to the {@link ResultAssembly}
 * (which owns the result buffers), JOIN_NOTICEs to the {@link WorkerSession} (which owns the job-wide session state).
 * A result image of a new server session (a restarted server) makes it say HELLO again and, in a round, send the
 * round again.
 */
final class ShardState implements AutoCloseable {
    /** Rounds a worker repeats its HELLO after a server restart until a result counts it. */
    static final int MAX_HELLO_REPEATS = 20;

    private final int index;
    private final ShardEndpoint endpoint;
    private final ChunkLayout layout;
    private final ExclusivePublication publication;
    private final Subscription subscription;
    private final ControlledFragmentHandler handler = this::onResult;
    private final WorkerSession session;
    private final ResultAssembly assembly;
    private final WorkerCounters counters;
    private final ExchangeCounters exchangeCounters;
    private final long[][] voteView;
    private final int jobId;
    private final int workerId;
    private final int workers;
    private final long paramCount;
    private final VoteRule rule;
    private final int chunkWords;
    private final int fragmentLimit;
    private final HelloFlyweight helloOut = new HelloFlyweight();
    private final VoteChunkFlyweight voteOut = new VoteChunkFlyweight();
    private final ResultChunkFlyweight resultIn = new ResultChunkFlyweight();
    private final JoinNoticeFlyweight noticeIn = new JoinNoticeFlyweight();
    private final MessageHeaderFlyweight inHeader = new MessageHeaderFlyweight();
    private final BufferClaim bufferClaim = new BufferClaim();
    private final LittleEndianView receiveView = new LittleEndianView();
    private volatile int latestServerSession;
    private int serverSession;
    private int nextChunk;
    private int nextResultWord;
    private int helloRepeats;
    private long abortMask = -1;

    /**
     * Add the shard's publication and subscription (not yet connected).
     *
     * @param index            the shard's index in the exchange.
     * @param endpoint         the shard's slice and channels.
     * @param ctx              the exchange's concluded configuration.
     * @param vote             the worker's vote words, read when chunks are sent.
     * @param session          the worker's session.
     * @param assembly         where result chunks go.
     * @param counters         the worker's Aeron counters.
     * @param exchangeCounters the worker's byte and round counters.
     * @throws IllegalArgumentException when the vote channel's MTU cannot carry a chunk.
     */
    ShardState(final int index, final ShardEndpoint endpoint, final AeronVoteExchange.Context ctx, final long[] vote,
        final WorkerSession session, final ResultAssembly assembly, final WorkerCounters counters, final ExchangeCounters exchangeCounters) {
        this.index = index;
        this.endpoint = endpoint;
        this.session = session;
        this.assembly = assembly;
        this.counters = counters;
        this.exchangeCounters = exchangeCounters;
        this.voteView = new long[][] {vote};
        this.jobId = ctx.jobId();
        this.workerId = ctx.workerId();
        this.workers = ctx.workers();
        this.paramCount = ctx.paramCount();
        this.rule = ctx.rule();
        this.chunkWords = ctx.chunkWords();
        this.fragmentLimit = ctx.fragmentLimit();
        final long to = endpoint.toParam() < 0 ? paramCount : endpoint.toParam();
        this.layout = new ChunkLayout(paramCount, endpoint.fromParam(), to, chunkWords);
        ExclusivePublication pub = null;
        try {
            pub = ctx.aeron().addExclusivePublication(endpoint.voteChannel(), endpoint.voteStreamId());
            this.subscription = ctx.aeron().addSubscription(endpoint.resultChannel(), endpoint.resultStreamId(),
                image -> latestServerSession = image.sessionId(), image -> { });
        } catch (final RuntimeException ex) {
            CloseHelper.quietClose(pub);
            throw ex;
        }
        this.publication = pub;
        if (pub.maxPayloadLength() < MessageHeaderFlyweight.HEADER_LENGTH + chunkWords * Long.BYTES) {
            close();
            throw new IllegalArgumentException("voteChannel mtu too small for chunkWords=" + chunkWords + ": max payload "
                + pub.maxPayloadLength() + " bytes, need " + (MessageHeaderFlyweight.HEADER_LENGTH + chunkWords * Long.BYTES)
                + " (use mtu=8k or fewer chunkWords): " + endpoint);
        }
        this.nextChunk = layout.chunkCount();
        this.nextResultWord = layout.toWord();
    }

    /** @return the shard's slice and channels. */
    ShardEndpoint endpoint() {
        return endpoint;
    }

    /** @return true when both channels are connected and the server's result image is there. */
    boolean connected() {
        return publication.isConnected() && subscription.isConnected() && latestServerSession != 0;
    }

    /**
     * @param connectTimeoutMs the timeout that expired.
     * @return why the shard is not connected, for an exception.
     */
    String describeNotConnected(final long connectTimeoutMs) {
        return "shard " + endpoint.shard() + " not connected after " + connectTimeoutMs + " ms (votes connected: "
            + publication.isConnected() + ", results connected: " + subscription.isConnected() + "); is its server running? " + endpoint;
    }

    /**
     * The first HELLO, once {@link #connected()}: binds this shard to the server session whose results it reads.
     *
     * @return false when the publication did not take it (try again).
     */
    boolean helloOnConnect() {
        final int latest = latestServerSession;
        if (!sendHello()) {
            return false;
        }
        serverSession = latest;
        return true;
    }

    /** A new round: send every chunk, expect every result word. */
    void startRound() {
        nextChunk = 0;
        nextResultWord = layout.fromWord();
        abortMask = -1;
    }

    /** @return true when every result word of the shard arrived this round. */
    boolean resultDone() {
        return nextResultWord == layout.toWord();
    }

    /** @return the voter mask of the server's ROUND_ABORT of this round, or -1 when it did not abort it. */
    long abortMask() {
        return abortMask;
    }

    /**
     * Read the server's frames: result chunks of the current round, join notices; stops at a frame of a later round.
     *
     * @return fragments read.
     */
    int poll() {
        return subscription.controlledPoll(handler, fragmentLimit);
    }

    /**
     * After a server restart, a HELLO the worker sent while the new server's image of its vote publication was not
     * yet set up is lost (the publication still counts as connected to the dead server), and the server would
     * refuse all its votes as unauthenticated. So until a result counts this worker, every round starts with the
     * HELLO again (at most {@value #MAX_HELLO_REPEATS} times; a HELLO the server already took is harmless).
     */
    void repeatHello() {
        if (helloRepeats > 0 && !session.joining() && sendHello()) {
            helloRepeats--;
        }
    }

    /**
     * A result image of a new server session means the shard's server was restarted: say HELLO again and, in a
     * round, send every chunk again and drop what the old server sent of it.
     *
     * @return work done.
     */
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
        if (session.inRound() && !resultDone()) {
            startRound();
            assembly.restartShard(index, layout.fromWord(), layout.toWord());
        }
        return 1;
    }

    boolean sendHello() {
        final HelloCredentials credentials = session.credentials();
        final int length = HelloFlyweight.length(credentials != null);
        final long result = publication.tryClaim(length, bufferClaim);
        if (result < 0) {
            offerFailed(result);
            return false;
        }
        helloOut.wrap(bufferClaim.buffer(), bufferClaim.offset()).encode(jobId, session.helloRound(), layout.fromWord(), workerId,
            endpoint.shard(), paramCount, credentials, credentials == null ? 0 : session.nextNonce(),
            credentials == null ? 0 : session.epochTimeMs());
        bufferClaim.commit();
        counters.bytesUp().getAndAddRelease(ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH));
        return true;
    }

    /**
     * Send the round's vote chunks the publication takes now, in order.
     *
     * @return chunks sent.
     */
    int sendChunks() {
        int sent = 0;
        while (nextChunk < layout.chunkCount()) {
            final int words = layout.wordsOf(nextChunk);
            final int wordOffset = layout.wordOffset(nextChunk);
            final int length = VoteChunkFlyweight.length(layout.paramsOf(wordOffset, words));
            final long result = publication.tryClaim(length, bufferClaim);
            if (result < 0) {
                offerFailed(result);
                break;
            }
            voteOut.wrap(bufferClaim.buffer(), bufferClaim.offset())
                .encode(jobId, session.submittedRound(), wordOffset, words, workerId, endpoint.shard(), voteView, paramCount, wordOffset);
            bufferClaim.commit();
            final int frame = ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH);
            counters.bytesUp().getAndAddRelease(frame);
            exchangeCounters.addBytesUp(frame);
            nextChunk++;
            sent++;
        }
        return sent;
    }

    /**
     * Append the shard's progress to a timeout message.
     *
     * @param sb the message.
     */
    void describeProgress(final StringBuilder sb) {
        sb.append(" shard ").append(endpoint.shard()).append(": sent ").append(nextChunk).append('/')
            .append(layout.chunkCount()).append(" chunks, received ").append(nextResultWord - layout.fromWord())
            .append('/').append(layout.words()).append(" result words");
        if (!publication.isConnected() || !subscription.isConnected()) {
            sb.append(", server not connected (down or restarting; a restarted server is rejoined automatically within"
                + " the await timeout)");
        }
        sb.append(';');
    }

    private ControlledFragmentHandler.Action onResult(final DirectBuffer buffer, final int offset, final int length, final Header header) {
        if (header.flags() != FrameDescriptor.UNFRAGMENTED || length < MessageHeaderFlyweight.HEADER_LENGTH) {
            counters.rejectedResults().incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        final MessageHeaderFlyweight msg = inHeader.wrapForRead(buffer, offset);
        final int type = msg.type();
        if (msg.magic() != (MessageHeaderFlyweight.MAGIC & 0xFF) || msg.version() != MessageHeaderFlyweight.VERSION
            || msg.jobId() != jobId || (type != MessageType.RESULT_CHUNK && type != MessageType.ROUND_ABORT
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
        final long current = session.resultRound();
        if (round > current) {
            if (session.inRound() && !resultDone()) {
                // a later round's frame while this round's result is incomplete: the rest of this round's result will
                // never come (the image was recreated after a stall, or frames were lost for good); waiting is useless
                session.onResultLost(round);
                return ControlledFragmentHandler.Action.BREAK;
            }
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
        final long allWorkers = workers == Long.SIZE ? -1L : (1L << workers) - 1;
        if (wordOffset != nextResultWord || words < 1 || words > layout.toWord() - wordOffset || mask == 0 || (mask & ~allWorkers) != 0
            || !decode(resultIn.wrapForRead(buffer, offset), length, wordOffset, words, mask)) {
            counters.rejectedResults().incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        if ((mask & (1L << workerId)) != 0) {
            helloRepeats = 0;
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
        final long allWorkers = workers == Long.SIZE ? -1L : (1L << workers) - 1;
        final int donor = frame.donor();
        if (Long.bitCount(mask) != 1 || (mask & ~allWorkers) != 0 || round < 0
            || (donor >= workers && donor != JoinNoticeFlyweight.NO_DONOR)) {
            counters.rejectedResults().incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        final int worker = Long.numberOfTrailingZeros(mask);
        final int donorOrNone = donor == JoinNoticeFlyweight.NO_DONOR ? -1 : donor;
        session.onJoinNotice(index, worker, round, donorOrNone);
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    /**
     * Check a result chunk's frame (encoding for the voter count, size, body length) and hand its body to the assembly.
     */
    private boolean decode(final ResultChunkFlyweight frame, final int length, final int wordOffset, final int words, final long mask) {
        final MessageHeaderFlyweight msg = frame.header();
        final int voters = Long.bitCount(mask);
        final int encoding = msg.encoding();
        final boolean allowed = rule == VoteRule.MAJORITY
            ? encoding == ((voters & 1) == 1 ? Encoding.SIGN_BITS : Encoding.TERNARY)
            : encoding == Encoding.COUNT_PLANES;
        final long params = layout.paramsOf(wordOffset, words);
        if (!allowed || voters > workers || words > chunkWords
            || length != MessageHeaderFlyweight.HEADER_LENGTH + Encoding.bodyLength(encoding, words, params, voters)) {
            return false;
        }
        final DirectBuffer buffer = msg.buffer();
        return assembly.accept(index, receiveView.of(buffer), WireBuffers.index(buffer, msg.bodyOffset()), params, wordOffset, words,
            mask);
    }

    private void offerFailed(final long result) {
        if (result == Publication.BACK_PRESSURED || result == Publication.ADMIN_ACTION || result == Publication.NOT_CONNECTED) {
            counters.offersNotAccepted().incrementRelease();
        } else if (result == Publication.CLOSED) {
            throw new IllegalStateException("vote publication closed: " + endpoint);
        } else if (result == Publication.MAX_POSITION_EXCEEDED) {
            throw new IllegalStateException("vote publication reached its maximum position, use a larger term-length: " + endpoint);
        } else {
            throw new IllegalStateException("unknown offer result " + result);
        }
    }

    @Override
    public void close() {
        CloseHelper.closeAll(publication, subscription);
    }
}
