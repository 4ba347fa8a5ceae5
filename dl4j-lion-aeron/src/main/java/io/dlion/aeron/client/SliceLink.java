package io.dlion.aeron.client;

import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.wire.ChunkLayout;
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
import org.agrona.concurrent.NanoClock;

/**
 * A worker's link to one slice's server, the same for both payloads: the {@link ExclusivePublication} its chunks go up
 * on and the {@link Subscription} the server's frames come down on, and where this slice stands in the round: the next
 * chunk to send, the next result word expected, an abort.
 * <p>
 * What differs between the payloads is its {@link SliceCodec}: how a chunk goes up (sign votes, {@link VoteSliceCodec};
 * fp32 gradients, {@link MeanSliceCodec}) and where a result chunk goes once the link has checked its frame (the
 * {@link ResultAssembly}, which owns the result buffers; the mean vector). Which server session it reads is its
 * {@link ServerProof}'s to decide; JOIN_NOTICEs go to the {@link WorkerSession} (which owns the job-wide session state).
 * The group of a worker's links is driven by the {@link RoundLoop}.
 * <p>
 * Frame checks, in order: unfragmented and at least a header; magic, version, job and slice; a HELLO_ACK goes to the
 * proof; any other frame must come on the proven server's image, be of the payload's result type, a ROUND_ABORT or a
 * JOIN_NOTICE, and carry a valid frame tag (frameMac jobs); then its round, and for a result chunk its offset (the next
 * word of the slice), its voter set and the codec's own checks. A failed check drops the frame and counts it.
 */
final class SliceLink implements AutoCloseable {
    private final int index;
    private SliceEndpoint endpoint;
    private final ChunkLayout layout;
    private ExclusivePublication publication;
    private final io.aeron.Aeron aeron;
    private final Subscription subscription;
    private final ControlledFragmentHandler handler = this::onFrame;
    /** Frames read off the log that this worker cannot use yet (see {@link #poll()}); handed to {@link #onFrame} first. */
    private final ResultBacklog backlog;
    private final WorkerSession session;
    private final SliceCodec codec;
    private final ServerProof proof;
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
    private final ResultEndpoint resultEndpoint;
    private int nextChunk;
    private int nextResultWord;
    private boolean aborted;
    /** The voters of the server's ROUND_ABORT of this round, when {@link #aborted}. */
    private final VoterSet abortVoters;
    /** The voters of the result frame being read. */
    private final VoterSet frameVoters;

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
    SliceLink(final int index, final SliceEndpoint endpoint, final ExchangeContext<?> ctx, final SliceCodec codec, final WorkerSession session,
        final WorkerCounters counters, final ExchangeCounters exchangeCounters) {
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
            // a slice served in this process is reached by IPC, through the process's own media driver
            pub = endpoint.isLocal() ? ctx.aeron().addExclusivePublication(endpoint.localChannel(), endpoint.localVoteStreamId())
                : ctx.aeron().addExclusivePublication(endpoint.voteChannel(), endpoint.voteStreamId());
            this.subscription = endpoint.isLocal() ? ctx.aeron().addSubscription(endpoint.localChannel(), endpoint.localResultStreamId())
                : ctx.aeron().addSubscription(endpoint.resultChannel(), endpoint.resultStreamId());
        } catch (final RuntimeException ex) {
            CloseHelper.quietClose(pub);
            throw ex;
        }
        this.publication = pub;
        this.resultEndpoint = new ResultEndpoint(subscription);
        this.backlog = new ResultBacklog(ctx.resultBacklogBytes() / ctx.slices.size());
        final int need = codec.chunkLength((long) chunkWords * Long.SIZE) + tag;
        if (pub.maxPayloadLength() < need) {
            close();
            throw new IllegalArgumentException("voteChannel mtu too small for " + codec.payloadName() + " chunks of chunkWords=" + chunkWords
                + ": max payload " + pub.maxPayloadLength() + " bytes, need " + need + " (use mtu=8k or fewer chunkWords): " + endpoint);
        }
        this.nextChunk = layout.chunkCount();
        this.nextResultWord = layout.toWord();
        this.proof = new ServerProof(subscription, counters, workerId, workers, paramCount, nanoClock.nanoTime());
    }

    /** @return the slice's index in the exchange. */
    int index() {
        return index;
    }

    /** @return the slice and its channels. */
    SliceEndpoint endpoint() {
        return endpoint;
    }

    /** @return what comes down, for messages: "result" or "mean". */
    String resultName() {
        return codec.resultName();
    }

    /**
     * The slice's server moved to another host (its rank died, {@link io.dlion.aeron.SliceOwners}): chunks go up a new
     * publication to it; results keep coming to the same subscription, from the new server's session once it proves
     * itself by answering a HELLO, and the round's chunks are sent again then (those the old server took are lost with
     * it), and the slice's result is read again whole. A move to a rank on the same host keeps the publication: the new
     * server's port is the old one's, so the channel is the same, and a new session would close the old one's image on
     * the new server, which may have bound this worker to it already (it then takes the worker for dead at its round
     * deadline: a chaos soak lost its quorum so).
     *
     * @param voteChannel the new server's vote channel.
     * @param heardNs     when this worker last heard the new server's rank on another link ({@link #heardNs()}, the
     *                    latest of them), or {@link ServerProof#NEVER_HEARD}: its silence counts from then.
     */
    void moveTo(final String voteChannel, final long heardNs) {
        endpoint = endpoint.withVoteChannel(voteChannel);
        if (!voteChannel.equals(publication.channel())) {
            final ExclusivePublication old = publication;
            publication = aeron.addExclusivePublication(voteChannel, endpoint.voteStreamId());
            CloseHelper.quietClose(old);
        }
        nextChunk = layout.chunkCount();
        proof.serverMoved(nanoClock.nanoTime(), heardNs);
    }

    /**
     * @param now       the clock.
     * @param silenceNs how long a server may be silent.
     * @return true when this worker awaits a result of the slice (or its join round), or the slice moved to a server that
     *     has not answered yet, and the server has sent nothing for {@code silenceNs} (since the round started, its last
     *     frame or the move), though this worker said HELLO every second, and the vote publication is not connected. A
     *     moved slice's new server is judged whether or not its result is awaited: a worker that holds the slice's result
     *     of the open round is otherwise the one that never finds out that the rank named for it does not answer (a chaos
     *     soak's job lost two slices' servers for good that way); the move itself was judged while awaited, so the
     *     workers that judge the new server have applied the same rounds. A proven server is judged only while its
     *     result is awaited: those that await it have applied the same rounds, and so agree where its slices move
     *     ({@link io.dlion.aeron.SliceOwners}); a worker that holds its result of the open round, or is between rounds,
     *     may have applied one round more or fewer than they have when it finds the death.
     */
    boolean serverSilent(final long now, final long silenceNs) {
        return (awaitingServer() || proof.awaitsMovedServer()) && proof.silentFor(now, silenceNs) && !publication.isConnected();
    }

    /**
     * @param now       the clock.
     * @param silenceNs how long a server may be silent.
     * @return true when the slice's proven server has sent nothing for {@code silenceNs} (since its last frame or the
     *     round's start) and the vote publication to it lost its connection, whether or not its result is awaited: gone,
     *     as a server found dead is.
     */
    boolean serverGone(final long now, final long silenceNs) {
        return proof.isProven() && proof.silentFor(now, silenceNs) && !publication.isConnected();
    }

    /**
     * @return true while the slice's server has proven itself and this worker's vote publication to it is connected: its
     *     media driver still answers, whether or not this worker awaits anything of the slice now.
     */
    boolean serverReachable() {
        return proof.isProven() && publication.isConnected();
    }

    /**
     * @return when the proven server last sent a frame or a round started, whichever is later;
     *     {@link ServerProof#NEVER_HEARD} while no server is proven.
     */
    long heardNs() {
        return proof.heardNs();
    }

    /** @return the rank whose process serves the proven server, as its answer said; -1 when it did not say. */
    int serverRank() {
        return proof.serverRank();
    }

    /** @return true once the slice's server proved itself on a result image (its results are read from it). */
    boolean connected() {
        return proof.isProven();
    }

    /**
     * @param now the clock.
     * @return where the slice stands, for a log line when a round fails: its server's proof, the vote publication, the
     *     chunks sent and the result read.
     */
    String describeState(final long now) {
        final long heard = proof.heardNs();
        return "slice " + endpoint.slice() + ": server " + (proof.isProven() ? "proven (rank " + proof.serverRank() + ")" : "not proven")
            + (heard == ServerProof.NEVER_HEARD ? ", never heard" : ", heard " + (now - heard) / 1_000_000 + " ms ago")
            + ", votes session " + publication.sessionId() + (publication.isConnected() ? " connected" : " not connected") + " on "
            + publication.channel() + ", chunks sent " + nextChunk + "/" + layout.chunkCount() + ", result " + (resultDone() ? "done" : "awaited");
    }

    /**
     * @param connectTimeoutMs the timeout that expired.
     * @return why the slice is not connected, for an exception.
     */
    String describeNotConnected(final long connectTimeoutMs) {
        return "slice " + endpoint.slice() + " not connected after " + connectTimeoutMs + " ms (votes connected: "
            + publication.isConnected() + ", result endpoint resolved: " + resultEndpoint.isResolved() + ", result images: " + subscription.imageCount()
            + ", server proven: " + proof.isProven() + "); is its server running, and does it have this job's id and secret? " + endpoint;
    }

    /** @return the endpoint this slice's results arrive on, {@code host:port}, or null for IPC or before it is resolved. */
    String resultEndpoint() {
        return resultEndpoint.address() == null ? null : subscription.resolvedEndpoint();
    }

    /** A new round: send every chunk, expect every result word; the server's silence is counted from now. */
    void startRound() {
        nextChunk = 0;
        nextResultWord = layout.fromWord();
        aborted = false;
        proof.serverHeard(nanoClock.nanoTime());
    }

    /** @return the slice as a range of words, first to last, of the vector. */
    ChunkLayout layout() {
        return layout;
    }

    /** @return true when every result word of the slice arrived this round. */
    boolean resultDone() {
        return nextResultWord == layout.toWord();
    }

    /** @return the voters of the server's ROUND_ABORT of this round, or null when it did not abort it. */
    VoterSet abortVoters() {
        return aborted ? abortVoters : null;
    }

    /**
     * Read the server's frames: result chunks of the current round, join notices; stops at a frame of a later round, but
     * between rounds (a worker that joined and has not voted yet, reading while it waits for its donor), and in a round
     * once this slice's result of it is in (a worker that waits for another slice's), a frame of a later round, and every
     * frame after it, is read into the {@link ResultBacklog} instead of left in Aeron's log, which would hold back every
     * worker's results (the stream waits for its slowest receiver). The backlog's frames come first, in
     * the order they arrived, and while it holds any, what arrives is kept behind them (up to its capacity; beyond it
     * frames stay in the log, where nothing is lost).
     *
     * @return fragments read.
     */
    int poll() {
        int work = 0;
        while (!backlog.isEmpty()) {
            final ControlledFragmentHandler.Action action = onFrame(backlog.head(), 0, backlog.headLength(), backlog.headFlags(),
                backlog.headSessionId());
            if (action == ControlledFragmentHandler.Action.ABORT) {
                break; // a later round's: it stays first, and what arrives is kept behind it
            }
            backlog.removeHead();
            work++;
            if (action == ControlledFragmentHandler.Action.BREAK) {
                return work;
            }
        }
        return work + subscription.controlledPoll(handler, fragmentLimit);
    }

    /** @return bytes of result frames read and kept for a later round ({@link #poll()}). */
    long backlogBytes() {
        return backlog.bytes();
    }

    /** @return the round of the oldest frame kept for a later round ({@link #poll()}), or -1 when none is kept. */
    long keptRound() {
        return backlog.isEmpty() ? -1 : inHeader.wrapForRead(backlog.head(), 0).round();
    }

    /**
     * @param now    the clock.
     * @param lostNs how long the server may be silent ({@link ExchangeContext#resultLostNs(long)}).
     * @return true when this worker awaits the slice's result of the round it is in, the slice's proven server has sent
     *     nothing at all for {@code lostNs} (no result frame, no answer to the HELLOs this worker says every second), and the
     *     vote publication to it is connected (its media driver answers): the server lives, but nothing it sends gets
     *     through, as when its image waits for frames the sender no longer holds.
     */
    boolean silentWhileAlive(final long now, final long lostNs) {
        return session.inRound() && !resultDone() && proof.isProven() && proof.silentFor(now, lostNs) && publication.isConnected();
    }

    /**
     * Keep the server proven: refuse result images that do not prove themselves in time, and say HELLO when the
     * {@link ServerProof} says one is due.
     *
     * @return work done.
     */
    int maintain() {
        if (!resultEndpoint.resolve(endpoint)) {
            return 0;
        }
        final long now = nanoClock.nanoTime();
        int work = proof.refuseUnprovenImages(now);
        if (proof.helloDue(now, awaitingServer()) && sendHello(now)) {
            work++;
        }
        return work;
    }

    /**
     * Send the round's chunks the publication takes now, in order.
     *
     * @return chunks sent.
     */
    int sendChunks() {
        if (!proof.isProven()) {
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
     * Append the slice's progress to a timeout message.
     *
     * @param sb the message.
     */
    void describeProgress(final StringBuilder sb) {
        sb.append(" slice ").append(endpoint.slice()).append(": sent ").append(nextChunk).append('/')
            .append(layout.chunkCount()).append(' ').append(codec.payloadName()).append(" chunks, received ")
            .append(nextResultWord - layout.fromWord()).append('/').append(layout.words()).append(' ').append(codec.resultName()).append(" words");
        if (!publication.isConnected() || !subscription.isConnected()) {
            sb.append(", server not connected (down or restarting; a restarted server is rejoined automatically within"
                + " the await timeout)");
        }
        sb.append(';');
    }

    @Override
    public void close() {
        CloseHelper.closeAll(publication, subscription);
    }

    /** @return true while this worker awaits a result of the slice, or its join round, from the server. */
    private boolean awaitingServer() {
        return session.joining() || (session.inRound() && !resultDone());
    }

    private boolean sendHello(final long now) {
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
            endpoint.slice(), paramCount, publication.sessionId(), resultEndpoint.address(), resultEndpoint.port(), credentials, nonce,
            session.epochTimeMs(), helloFlags);
        bufferClaim.commit();
        proof.helloSent(nonce, now);
        counters.bytesUp().getAndAddRelease(ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH));
        return true;
    }

    private ControlledFragmentHandler.Action onFrame(final DirectBuffer buffer, final int offset, final int length, final Header header) {
        if (!backlog.isEmpty()) {
            // behind a kept frame: keep this one after it (or leave it in the log when the backlog is full)
            return backlog.offer(buffer, offset, length, header.flags(), header.sessionId()) ? ControlledFragmentHandler.Action.CONTINUE
                : ControlledFragmentHandler.Action.ABORT;
        }
        final ControlledFragmentHandler.Action action = onFrame(buffer, offset, length, header.flags(), header.sessionId());
        if (action == ControlledFragmentHandler.Action.ABORT && !session.joining() && (!session.inRound() || resultDone())
            && backlog.offer(buffer, offset, length, header.flags(), header.sessionId())) {
            // a later round's frame between rounds, or of a slice whose result of this round is in while another slice's
            // is not: kept, so that it holds nobody back while this worker is busy or waits for the other slice
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        return action;
    }

    private ControlledFragmentHandler.Action onFrame(final DirectBuffer buffer, final int offset, final int length, final byte flags,
        final int sessionId) {
        final boolean fromServer = proof.isServer(sessionId);
        if (flags != FrameDescriptor.UNFRAGMENTED || length < MessageHeaderFlyweight.HEADER_LENGTH) {
            (fromServer ? counters.rejectedResults() : counters.unprovenFrames()).incrementRelease();
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        final MessageHeaderFlyweight msg = inHeader.wrapForRead(buffer, offset);
        final int type = msg.type();
        if (msg.magic() != (MessageHeaderFlyweight.MAGIC & 0xFF) || msg.version() != MessageHeaderFlyweight.VERSION
            || msg.jobId() != jobId || msg.slice() != endpoint.slice()) {
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
        proof.serverHeard(nanoClock.nanoTime());
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
     * A server's answer to a HELLO, as the {@link ServerProof} judges it: a new server (restarted, or the slice moved) in
     * the middle of a round gets the round again and the slice's result is read again whole; an answer that names a join
     * round tells the session this joining worker's first round.
     */
    private ControlledFragmentHandler.Action onHelloAck(final HelloAckFlyweight ack, final int length, final int sessionId) {
        final ServerProof.Answer answer = proof.onHelloAck(ack, length, sessionId, session.credentials(), nanoClock.nanoTime());
        if (answer == ServerProof.Answer.IGNORED || answer == ServerProof.Answer.FORGED) {
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        if (answer == ServerProof.Answer.NEW_SERVER && session.inRound() && !resultDone()) {
            startRound();
            codec.restart(layout.fromWord(), layout.toWord());
        }
        final long joinRound = ack.joinRound();
        if (joinRound >= 0) {
            final int donor = ack.donor();
            session.onJoinNotice(index, workerId, joinRound, donor == JoinNoticeFlyweight.NO_DONOR ? -1 : donor);
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
}
