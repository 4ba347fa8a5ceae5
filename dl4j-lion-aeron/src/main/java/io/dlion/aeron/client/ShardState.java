package io.dlion.aeron.client;

import java.util.concurrent.TimeUnit;

import io.aeron.ExclusivePublication;
import io.aeron.Image;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.dlion.aeron.ShardEndpoint;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.FrameMac;
import io.dlion.aeron.wire.HelloAckFlyweight;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.aeron.wire.RoundAbortFlyweight;
import io.dlion.exchange.ExchangeCounters;
import io.dlion.vote.VoterSet;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;

/**
 * A worker's link to one slice's server, the same for both payloads: the {@link ExclusivePublication} its chunks go up
 * on and the {@link Subscription} the server's frames come down on, and where this slice stands in the round: the next
 * chunk to send, the next result word expected, an abort, and which server session it talks to.
 * <p>
 * What differs between the payloads is its {@link SliceCodec}: how a chunk goes up (sign votes, {@link VoteSliceCodec};
 * fp32 gradients, {@link MeanSliceCodec}) and where a result chunk goes once the link has checked its frame (the
 * {@link ResultAssembly}, which owns the result buffers; the mean vector). JOIN_NOTICEs go to the {@link WorkerSession}
 * (which owns the job-wide session state).
 * <p>
 * <b>Which server it believes.</b> Frames are read only from the result image whose session the server proved with a
 * HELLO_ACK: an answer to one of this worker's last HELLOs (its nonce), naming the session it arrived on and, with the
 * job's secret, signed with it. Until then the shard says HELLO, first after {@link #HELLO_INTERVAL_NS} and then at
 * doubling intervals up to {@link #MAX_HELLO_INTERVAL_NS}, and while another image is present every
 * {@link #UNPROVEN_IMAGE_HELLO_INTERVAL_NS}; frames of other images are dropped and counted, and an image that has not
 * proven itself within {@link #UNPROVEN_IMAGE_TIMEOUT_NS}, or that sent a forged answer, is rejected
 * ({@link Image#reject}) and counted. A proven image of a new session (a restarted server) makes it send the round
 * again. A server that has sent nothing for {@link #SERVER_SILENCE_NS} (since the round started or its last frame) while
 * a result is awaited is greeted again: a restarted server with manual destinations learns this worker's result
 * endpoint only from a HELLO.
 */
final class ShardState implements AutoCloseable {
    /**
     * How often a HELLO is repeated until the server is proven: the answer to the first one is lost when it goes out
     * before this worker's image of a newly added destination is set up, which takes up to a heartbeat of the server's
     * publication. The interval doubles with every repeat, up to {@link #MAX_HELLO_INTERVAL_NS}, so that the remembered
     * nonces cover a long round trip.
     */
    static final long HELLO_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(10);
    /** Longest interval between HELLOs until the server is proven. */
    static final long MAX_HELLO_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(200);
    /** How often a HELLO is repeated while the server is proven and another, unproven, result image is present. */
    static final long UNPROVEN_IMAGE_HELLO_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How long the proven server may send nothing while a result is awaited before this worker says HELLO again. */
    static final long SERVER_SILENCE_NS = TimeUnit.SECONDS.toNanos(1);
    /** How long a result image may stay unproven before it is rejected. */
    static final long UNPROVEN_IMAGE_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);
    /** HELLO nonces remembered: an answer to any of them proves the server. */
    private static final int NONCES = 16;
    /** Unproven result images tracked at once; a further one is rejected at once. */
    private static final int TRACKED_IMAGES = 8;
    private static final String IPC_SOURCE = "aeron:ipc";

    private final int index;
    private ShardEndpoint endpoint;
    private final ChunkLayout layout;
    private ExclusivePublication publication;
    private final io.aeron.Aeron aeron;
    private final Subscription subscription;
    private final ControlledFragmentHandler handler = this::onResult;
    private final WorkerSession session;
    private final SliceCodec codec;
    private final WorkerCounters counters;
    private final ExchangeCounters exchangeCounters;
    private final int jobId;
    private final int workerId;
    private final int workers;
    private final long paramCount;
    private final int chunkWords;
    private final int fragmentLimit;
    private final HelloFlyweight helloOut = new HelloFlyweight();
    private final JoinNoticeFlyweight noticeIn = new JoinNoticeFlyweight();
    private final HelloAckFlyweight ackIn = new HelloAckFlyweight();
    private final MessageHeaderFlyweight inHeader = new MessageHeaderFlyweight();
    private final BufferClaim bufferClaim = new BufferClaim();
    /** Tags this worker's chunks and checks the server's frames; one instance, as the exchange has one thread. */
    private final FrameMac frameMac;
    private final int tag;
    private final int helloFlags;
    private final NanoClock nanoClock;
    private final long[] nonces = new long[NONCES];
    private final int[] unprovenSession = new int[TRACKED_IMAGES];
    private final long[] unprovenSinceNs = new long[TRACKED_IMAGES];
    private final boolean[] unprovenRefused = new boolean[TRACKED_IMAGES];
    private int unprovenCount;
    private int nonceCount;
    private final ResultEndpoint resultEndpoint;
    private boolean proven;
    /** Set when the shard moved to another server ({@link #moveTo}): the round is sent again once that server proves itself. */
    private boolean moved;
    private int provenSession;
    /** The rank whose process serves the proven server, as its answer said, or -1. */
    private int serverRank = -1;
    private boolean forgedAnswer;
    private int forgedSession;
    private long lastHelloNs;
    private long helloIntervalNs = HELLO_INTERVAL_NS;
    private long lastServerFrameNs;
    private int nextChunk;
    private int nextResultWord;
    private boolean aborted;
    /** The voters of the server's ROUND_ABORT of this round, when {@link #aborted}. */
    private final VoterSet abortVoters;
    /** The voters of the result frame being read. */
    private final VoterSet frameVoters;

    /**
     * Add the shard's publication and subscription (not yet connected), for sign votes.
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
        this(index, endpoint, ctx, new VoteSliceCodec(index, endpoint.shard(), ctx, vote, assembly), session, counters, exchangeCounters);
    }

    /**
     * Add the slice's publication and subscription (not yet connected).
     *
     * @param index            the slice's index in the exchange.
     * @param endpoint         the slice and its channels.
     * @param ctx              the exchange's concluded configuration.
     * @param codec            the payload: how chunks go up and where results go.
     * @param session          the worker's session.
     * @param counters         the worker's Aeron counters.
     * @param exchangeCounters the worker's byte and round counters.
     * @throws IllegalArgumentException when the vote channel's MTU cannot carry a chunk.
     */
    ShardState(final int index, final ShardEndpoint endpoint, final ExchangeContext<?> ctx, final SliceCodec codec,
        final WorkerSession session, final WorkerCounters counters, final ExchangeCounters exchangeCounters) {
        this.index = index;
        this.endpoint = endpoint;
        this.session = session;
        this.codec = codec;
        this.counters = counters;
        this.exchangeCounters = exchangeCounters;
        this.jobId = ctx.jobId();
        this.workerId = ctx.workerId();
        this.workers = ctx.workers();
        this.abortVoters = new VoterSet(workers);
        this.frameVoters = new VoterSet(workers);
        this.paramCount = ctx.paramCount();
        this.chunkWords = codec.chunkWords();
        this.fragmentLimit = ctx.fragmentLimit();
        this.nanoClock = ctx.nanoClock();
        this.frameMac = ctx.frameMac() ? new FrameMac(ctx.secret()) : null;
        this.tag = ctx.frameMac() ? FrameMac.TAG_LENGTH : 0;
        this.helloFlags = ctx.frameMac() ? HelloFlyweight.FLAG_FRAME_MAC : 0;
        final long to = endpoint.toParam() < 0 ? paramCount : endpoint.toParam();
        this.layout = new ChunkLayout(paramCount, endpoint.fromParam(), to, chunkWords);
        this.aeron = ctx.aeron();
        ExclusivePublication pub = null;
        try {
            pub = ctx.aeron().addExclusivePublication(endpoint.voteChannel(), endpoint.voteStreamId());
            this.subscription = ctx.aeron().addSubscription(endpoint.resultChannel(), endpoint.resultStreamId());
        } catch (final RuntimeException ex) {
            CloseHelper.quietClose(pub);
            throw ex;
        }
        this.publication = pub;
        this.resultEndpoint = new ResultEndpoint(subscription);
        final int need = codec.chunkLength((long) chunkWords * Long.SIZE) + tag;
        if (pub.maxPayloadLength() < need) {
            close();
            throw new IllegalArgumentException("voteChannel mtu too small for " + codec.payloadName() + " chunks of chunkWords=" + chunkWords
                + ": max payload " + pub.maxPayloadLength() + " bytes, need " + need + " (use mtu=8k or fewer chunkWords): " + endpoint);
        }
        this.nextChunk = layout.chunkCount();
        this.nextResultWord = layout.toWord();
        this.lastHelloNs = nanoClock.nanoTime() - HELLO_INTERVAL_NS;
    }

    /** @return the shard's index in the exchange. */
    int index() {
        return index;
    }

    /** @return the shard's slice and channels. */
    ShardEndpoint endpoint() {
        return endpoint;
    }

    /**
     * The shard's server moved to another host (its rank died, {@link io.dlion.aeron.SliceOwners}): votes go up a new
     * publication to it; results keep coming to the same subscription, from the new server's session once it proves
     * itself by answering a HELLO, and the round's vote chunks are sent again then (those the old server took are lost
     * with it), and the slice's result is read again whole.
     *
     * @param voteChannel the new server's vote channel.
     */
    void moveTo(final String voteChannel) {
        final ExclusivePublication old = publication;
        endpoint = endpoint.withVoteChannel(voteChannel);
        publication = aeron.addExclusivePublication(voteChannel, endpoint.voteStreamId());
        CloseHelper.quietClose(old);
        proven = false;
        moved = true;
        nextChunk = layout.chunkCount();
        helloIntervalNs = HELLO_INTERVAL_NS;
        lastServerFrameNs = nanoClock.nanoTime();
        lastHelloNs = lastServerFrameNs - HELLO_INTERVAL_NS;
    }

    /**
     * @param now       the clock.
     * @param silenceNs how long a server may be silent.
     * @return true when this worker awaits a result of the shard (or its join round) and the server has sent nothing for
     *     {@code silenceNs}, though this worker said HELLO every second, and the vote publication lost its connection.
     */
    boolean serverSilent(final long now, final long silenceNs) {
        return (session.joining() || (session.inRound() && !resultDone())) && now - lastServerFrameNs >= silenceNs
            && !publication.isConnected();
    }

    /** @return the rank whose process serves the proven server, as its answer said; -1 when it did not say. */
    int serverRank() {
        return serverRank;
    }

    /** @return true once the shard's server proved itself on a result image (its results are read from it). */
    boolean connected() {
        return proven;
    }

    /**
     * @param connectTimeoutMs the timeout that expired.
     * @return why the shard is not connected, for an exception.
     */
    String describeNotConnected(final long connectTimeoutMs) {
        return "shard " + endpoint.shard() + " not connected after " + connectTimeoutMs + " ms (votes connected: "
            + publication.isConnected() + ", result endpoint resolved: " + resultEndpoint.isResolved() + ", result images: " + subscription.imageCount()
            + ", server proven: " + proven + "); is its server running, and does it have this job's id and secret? " + endpoint;
    }

    /** @return the endpoint this shard's results arrive on, {@code host:port}, or null for IPC or before it is resolved. */
    String resultEndpoint() {
        return resultEndpoint.address() == null ? null : subscription.resolvedEndpoint();
    }

    /** A new round: send every chunk, expect every result word; the server's silence is counted from now. */
    void startRound() {
        nextChunk = 0;
        nextResultWord = layout.fromWord();
        aborted = false;
        lastServerFrameNs = nanoClock.nanoTime();
    }

    /** @return the shard's slice as a range of words, first to last, of the vector. */
    ChunkLayout layout() {
        return layout;
    }

    /** @return true when every result word of the shard arrived this round. */
    boolean resultDone() {
        return nextResultWord == layout.toWord();
    }

    /** @return the voters of the server's ROUND_ABORT of this round, or null when it did not abort it. */
    VoterSet abortVoters() {
        return aborted ? abortVoters : null;
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
     * Keep the server proven: refuse result images that do not prove themselves in time, and say HELLO while the server
     * is not proven, another result image is present, or the server has been silent while a result is awaited.
     *
     * @return work done.
     */
    int maintain() {
        if (!resultEndpoint.resolve(endpoint)) {
            return 0;
        }
        final long now = nanoClock.nanoTime();
        int work = refuseUnprovenImages(now);
        final long interval;
        if (!proven) {
            interval = helloIntervalNs;
        } else if (hasUnprovenImages()) {
            interval = UNPROVEN_IMAGE_HELLO_INTERVAL_NS;
        } else if ((session.joining() || (session.inRound() && !resultDone())) && now - lastServerFrameNs >= SERVER_SILENCE_NS) {
            interval = SERVER_SILENCE_NS;
        } else {
            return work;
        }
        if (now - lastHelloNs >= interval && sendHello()) {
            lastHelloNs = now;
            if (!proven) {
                helloIntervalNs = Math.min(2 * helloIntervalNs, MAX_HELLO_INTERVAL_NS);
            }
            work++;
        }
        return work;
    }

    private boolean sendHello() {
        if (!resultEndpoint.isResolved() || !publication.isConnected()) {
            return false;
        }
        final HelloCredentials credentials = session.credentials();
        final int length = HelloFlyweight.length(credentials != null);
        final long result = publication.tryClaim(length, bufferClaim);
        if (result < 0) {
            offerFailed(result);
            return false;
        }
        final long nonce = session.nextNonce();
        // a worker that holds this slice's result of the round it is in (a slice that moved after its result came) is at
        // the next round as far as this slice's server goes: naming the round it is in, a fresh server would take it for
        // a worker that lost the dead server's last result and tell it to rejoin
        final long round = !session.joining() && session.inRound() && resultDone() ? session.nextRound() + 1 : session.helloRound();
        helloOut.wrap(bufferClaim.buffer(), bufferClaim.offset()).encode(jobId, round, layout.fromWord(), workerId,
            endpoint.shard(), paramCount, publication.sessionId(), resultEndpoint.address(), resultEndpoint.port(), credentials, nonce,
            session.epochTimeMs(), helloFlags);
        bufferClaim.commit();
        nonces[nonceCount++ % NONCES] = nonce;
        counters.bytesUp().getAndAddRelease(ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH));
        return true;
    }

    private boolean hasUnprovenImages() {
        for (int i = 0; i < unprovenCount; i++) {
            if (!unprovenRefused[i]) {
                return true;
            }
        }
        return false;
    }

    /** Track result images of unproven sessions; refuse those unproven for too long, beyond the table, or forging. */
    private int refuseUnprovenImages(final long now) {
        for (int i = 0; i < unprovenCount;) {
            if (subscription.imageBySessionId(unprovenSession[i]) == null) {
                forgetUnproven(i);
            } else {
                i++;
            }
        }
        int work = 0;
        if (forgedAnswer) {
            forgedAnswer = false;
            final Image image = subscription.imageBySessionId(forgedSession);
            if (image != null) {
                refuse(image, track(forgedSession, now));
                work++;
            }
        }
        for (int i = 0, images = subscription.imageCount(); i < images; i++) {
            final Image image = subscription.imageAtIndex(i);
            final int sessionId = image.sessionId();
            if (proven && sessionId == provenSession) {
                continue;
            }
            final int t = track(sessionId, now);
            if (t < 0 || (!unprovenRefused[t] && now - unprovenSinceNs[t] >= UNPROVEN_IMAGE_TIMEOUT_NS)) {
                refuse(image, t);
                work++;
            }
        }
        return work;
    }

    private int track(final int sessionId, final long now) {
        for (int i = 0; i < unprovenCount; i++) {
            if (unprovenSession[i] == sessionId) {
                return i;
            }
        }
        if (unprovenCount == TRACKED_IMAGES) {
            return -1;
        }
        unprovenSession[unprovenCount] = sessionId;
        unprovenSinceNs[unprovenCount] = now;
        unprovenRefused[unprovenCount] = false;
        return unprovenCount++;
    }

    private void forgetUnproven(final int index) {
        final int last = --unprovenCount;
        unprovenSession[index] = unprovenSession[last];
        unprovenSinceNs[index] = unprovenSinceNs[last];
        unprovenRefused[index] = unprovenRefused[last];
    }

    /** An image that never proved its session, or forged an answer: rejected (network), or ignored for good (IPC). */
    private void refuse(final Image image, final int tracked) {
        if (tracked >= 0) {
            if (unprovenRefused[tracked]) {
                return;
            }
            unprovenRefused[tracked] = true;
        }
        counters.refusedImages().incrementRelease();
        if (!IPC_SOURCE.equals(image.sourceIdentity()) && !image.isClosed()) {
            image.reject("dlion: result image of session " + image.sessionId() + " not proven by the job's server");
        }
    }

    /**
     * Send the round's chunks the publication takes now, in order.
     *
     * @return chunks sent.
     */
    int sendChunks() {
        if (!proven) {
            return 0;
        }
        int sent = 0;
        while (nextChunk < layout.chunkCount()) {
            final int words = layout.wordsOf(nextChunk);
            final int wordOffset = layout.wordOffset(nextChunk);
            final long params = layout.paramsOf(wordOffset, words);
            final int body = codec.chunkLength(params);
            final int length = body + tag;
            final long result = publication.tryClaim(length, bufferClaim);
            if (result < 0) {
                offerFailed(result);
                break;
            }
            codec.encodeChunk(bufferClaim.buffer(), bufferClaim.offset(), session.submittedRound(), wordOffset, words, params);
            if (frameMac != null) {
                frameMac.sign(bufferClaim.buffer(), bufferClaim.offset(), body, publication.sessionId());
            }
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
            .append(layout.chunkCount()).append(' ').append(codec.payloadName()).append(" chunks, received ")
            .append(nextResultWord - layout.fromWord()).append('/').append(layout.words()).append(' ').append(codec.resultName()).append(" words");
        if (!publication.isConnected() || !subscription.isConnected()) {
            sb.append(", server not connected (down or restarting; a restarted server is rejoined automatically within"
                + " the await timeout)");
        }
        sb.append(';');
    }

    private ControlledFragmentHandler.Action onResult(final DirectBuffer buffer, final int offset, final int length, final Header header) {
        final int sessionId = header.sessionId();
        final boolean fromServer = proven && sessionId == provenSession;
        if (header.flags() != FrameDescriptor.UNFRAGMENTED || length < MessageHeaderFlyweight.HEADER_LENGTH) {
            (fromServer ? counters.rejectedResults() : counters.unprovenFrames()).incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        final MessageHeaderFlyweight msg = inHeader.wrapForRead(buffer, offset);
        final int type = msg.type();
        if (msg.magic() != (MessageHeaderFlyweight.MAGIC & 0xFF) || msg.version() != MessageHeaderFlyweight.VERSION
            || msg.jobId() != jobId || msg.shard() != endpoint.shard()) {
            (fromServer ? counters.rejectedResults() : counters.unprovenFrames()).incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        if (type == MessageType.HELLO_ACK) {
            return onHelloAck(ackIn.wrapForRead(buffer, offset), length, sessionId);
        }
        if (!fromServer) {
            counters.unprovenFrames().incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        lastServerFrameNs = nanoClock.nanoTime();
        if (type != codec.resultType() && type != MessageType.ROUND_ABORT && type != MessageType.JOIN_NOTICE) {
            counters.rejectedResults().incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        // checked before any field is acted on (a later round's frame makes this worker rejoin), and again each time the
        // frame is offered after an ABORT
        if (frameMac != null && !frameMac.verify(buffer, offset, length, sessionId)) {
            counters.badMacFrames().incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        final int messageLength = length - tag;
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
        if (type == MessageType.ROUND_ABORT) {
            if (messageLength != RoundAbortFlyweight.length(abortVoters.wordCount()) || !msg.readVoterSet(abortVoters, messageLength)) {
                counters.rejectedResults().incrementRelease();
                return ControlledFragmentHandler.Action.CONTINUE;
            }
            aborted = true;
            return ControlledFragmentHandler.Action.BREAK;
        }
        final int wordOffset = msg.chunkWordOffset();
        final int words = msg.chunkWords();
        if (wordOffset != nextResultWord || words < 1 || words > layout.toWord() - wordOffset || !msg.readVoterSet(frameVoters, messageLength)
            || frameVoters.isEmpty() || !codec.decode(msg, messageLength, layout.paramsOf(wordOffset, words), wordOffset, words, frameVoters)) {
            counters.rejectedResults().incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        nextResultWord += words;
        final int frame = ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH);
        counters.bytesDown().getAndAddRelease(frame);
        exchangeCounters.addBytesDown(frame);
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    /**
     * A server's answer to a HELLO: an answer to one of this worker's last HELLOs that names the session it came on
     * (and, with the job's secret, carries its MAC) proves that session. A forged one gets its image rejected.
     */
    private ControlledFragmentHandler.Action onHelloAck(final HelloAckFlyweight ack, final int length, final int sessionId) {
        final MessageHeaderFlyweight msg = ack.header();
        if (msg.workerId() != workerId) {
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        final HelloCredentials credentials = session.credentials();
        final int encoding = msg.encoding();
        final boolean signed = encoding == Encoding.HMAC_SHA256;
        if ((!signed && (encoding != Encoding.NONE || credentials != null)) || length != HelloAckFlyweight.length(signed)
            || msg.paramCount() != paramCount) {
            return forged(sessionId);
        }
        if (!isNonceOfMine(ack.nonce())) {
            counters.staleResults().incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        if (ack.serverSessionId() != sessionId || (credentials != null && !ack.verify(credentials))) {
            return forged(sessionId);
        }
        final long joinRound = ack.joinRound();
        final int donor = ack.donor();
        if ((joinRound < 0 && joinRound != HelloAckFlyweight.NO_JOIN) || (donor >= workers && donor != JoinNoticeFlyweight.NO_DONOR)) {
            return forged(sessionId);
        }
        if (!proven || sessionId != provenSession) {
            final boolean restarted = proven || moved;
            proven = true;
            moved = false;
            provenSession = sessionId;
            serverRank = ack.servingRank();
            helloIntervalNs = HELLO_INTERVAL_NS;
            for (int i = 0; i < unprovenCount; i++) {
                if (unprovenSession[i] == sessionId) {
                    forgetUnproven(i);
                    break;
                }
            }
            if (restarted) {
                counters.serverReconnects().incrementRelease();
                if (session.inRound() && !resultDone()) {
                    startRound();
                    codec.restart(layout.fromWord(), layout.toWord());
                }
            }
        }
        lastServerFrameNs = nanoClock.nanoTime();
        if (joinRound >= 0) {
            session.onJoinNotice(index, workerId, joinRound, donor == JoinNoticeFlyweight.NO_DONOR ? -1 : donor);
        }
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private boolean isNonceOfMine(final long nonce) {
        for (int i = Math.min(nonceCount, NONCES) - 1; i >= 0; i--) {
            if (nonces[i] == nonce) {
                return true;
            }
        }
        return false;
    }

    private ControlledFragmentHandler.Action forged(final int sessionId) {
        counters.rejectedResults().incrementRelease();
        if (!proven || sessionId != provenSession) {
            forgedAnswer = true;
            forgedSession = sessionId;
        }
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private ControlledFragmentHandler.Action onJoinNotice(final JoinNoticeFlyweight frame) {
        final long round = frame.firstRound();
        final int worker = frame.joiningWorker();
        final int donor = frame.donor();
        if (worker < 0 || worker >= workers || round < 0 || (donor >= workers && donor != JoinNoticeFlyweight.NO_DONOR)) {
            counters.rejectedResults().incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        final int donorOrNone = donor == JoinNoticeFlyweight.NO_DONOR ? -1 : donor;
        session.onJoinNotice(index, worker, round, donorOrNone);
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private void offerFailed(final long result) {
        if (result == Publication.BACK_PRESSURED || result == Publication.ADMIN_ACTION || result == Publication.NOT_CONNECTED) {
            counters.offersNotAccepted().incrementRelease();
        } else if (result == Publication.CLOSED) {
            throw new IllegalStateException(codec.payloadName() + " publication closed: " + endpoint);
        } else if (result == Publication.MAX_POSITION_EXCEEDED) {
            throw new IllegalStateException(codec.payloadName() + " publication reached its maximum position, use a larger term-length: " + endpoint);
        } else {
            throw new IllegalStateException("unknown offer result " + result);
        }
    }

    @Override
    public void close() {
        CloseHelper.closeAll(publication, subscription);
    }

    /**
     * Connect every slice: say HELLO (repeated until answered) and read until every slice's server has proven itself.
     * Every slice is read on every pass, the connected ones too: the answers to the other workers' HELLOs share a
     * server's result stream, which waits for its slowest reader (a sharded job's 8 KiB windows at 64 workers).
     *
     * @param shards the exchange's slices.
     * @param ctx    the exchange's concluded configuration: the connect timeout, the clock and the idle strategy.
     * @param pass   work done on every pass while a slice is not connected (a joining worker's search for moved slices),
     *               returning the work done.
     * @throws IllegalStateException when a slice does not connect in time.
     */
    static void connectAll(final ShardState[] shards, final ExchangeContext<?> ctx, final java.util.function.IntSupplier pass) {
        final long deadline = ctx.nanoClock.nanoTime() + ctx.connectTimeoutNs;
        final IdleStrategy idle = ctx.idleStrategy;
        while (true) {
            int work = 0;
            ShardState waiting = null;
            for (final ShardState shard : shards) {
                work += shard.maintain() + shard.poll();
                if (waiting == null && !shard.connected()) {
                    waiting = shard;
                }
            }
            if (waiting == null) {
                return;
            }
            work += pass.getAsInt();
            if (ctx.nanoClock.nanoTime() - deadline >= 0) {
                throw new IllegalStateException(waiting.describeNotConnected(TimeUnit.NANOSECONDS.toMillis(ctx.connectTimeoutNs)));
            }
            idle.idle(work);
        }
    }

    /**
     * Send what the slices' publications take, starting with the slice after this worker's own: worker i starts with
     * slice i + 1, so that in a sharded job the N workers' first slices go to N different owners and every link is busy
     * from the start, rather than all workers filling slice 0's owner first.
     *
     * @param shards   the exchange's slices.
     * @param workerId this worker.
     * @return chunks sent.
     */
    static int sendChunks(final ShardState[] shards, final int workerId) {
        int work = 0;
        final int first = (workerId + 1) % shards.length;
        for (int i = 0; i < shards.length; i++) {
            work += shards[(first + i) % shards.length].sendChunks();
        }
        return work;
    }

    /**
     * Read the round's frames of every slice whose result is not complete yet, and end the round when a server says it is
     * over for this worker.
     *
     * @param shards  the exchange's slices.
     * @param session the worker's session.
     * @param round   the round awaited.
     * @return fragments read.
     * @throws QuorumLostException     when a slice's server aborted the round (the session moves on to the next round).
     * @throws RejoinRequiredException when a server tells this worker to rejoin, or a frame of a later round arrived while
     *                                 this round's result is incomplete (the rest of it will never come).
     */
    static int pollResults(final ShardState[] shards, final WorkerSession session, final long round) {
        int work = 0;
        for (final ShardState shard : shards) {
            if (!shard.resultDone()) {
                work += shard.poll();
                if (shard.abortVoters() != null) {
                    session.endRound(round);
                    throw new QuorumLostException(round, shard.endpoint().shard(), shard.abortVoters());
                }
                if (session.rejoinRequired() != null) {
                    throw new RejoinRequiredException(round, session.rejoinRequired());
                }
                if (session.laterRoundSeen() >= 0) {
                    throw new RejoinRequiredException(round, session.workerId(), session.laterRoundSeen());
                }
            }
        }
        return work;
    }

    /**
     * @param shards the exchange's slices.
     * @return true when every slice's result of the round is complete.
     */
    static boolean resultsDone(final ShardState[] shards) {
        for (final ShardState shard : shards) {
            if (!shard.resultDone()) {
                return false;
            }
        }
        return true;
    }
}
