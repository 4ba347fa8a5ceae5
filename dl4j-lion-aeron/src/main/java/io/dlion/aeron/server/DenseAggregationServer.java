package io.dlion.aeron.server;

import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.dlion.aeron.RejectReason;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.GradientChunkFlyweight;
import io.dlion.aeron.wire.HelloAckFlyweight;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.aeron.wire.MeanChunkFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.vote.VoterSet;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.Agent;

/**
 * The server of dense data-parallel training, the baseline Distributed Lion is measured against (the paper's G-Lion
 * and G-AdamW): an {@link Agent} that subscribes to the workers' fp32 gradient chunks, averages each chunk as soon as
 * every worker's gradient for it has arrived, and publishes the fp32 mean chunk at once (pipelined), over the same
 * channels, streams, membership, authentication, deadlines and counters as the {@link AggregationServer} of sign votes.
 * Only the payload differs, so a comparison of the two isolates the encoding.
 * <pre>
 *   gradient subscription -> decode header -> {@link Membership}   HELLO, sessions, authentication, drops
 *                                          -> {@link MeanWindow}   gradients of the open round, chunk by chunk
 *                            duty cycle    -> MEAN_CHUNKs (and ROUND_ABORTs, JOIN_NOTICEs via {@link ResultPublisher})
 * </pre>
 * The grid is a {@link ChunkLayout} of {@link GradientChunkFlyweight#CHUNK_WORDS} words (1,280 parameters, 5,120 bytes
 * a frame); the server holds {@code workers * windowChunks} chunks of gradients, never N full vectors. The configuration
 * is the vote server's {@link AggregationServer.Context} ({@code rule} and {@code chunkWords} do not apply). Frames of
 * the vote protocol (VOTE_CHUNK) are rejected as {@link RejectReason#UNEXPECTED_TYPE}, and a vote server rejects
 * GRADIENT_CHUNKs the same way, so a worker started with the wrong sharing fails its round instead of mixing payloads.
 * Workers rejoining a running dense job are not supported: the dense client does not send a join HELLO.
 */
public final class DenseAggregationServer implements Agent, AutoCloseable {
    private final AggregationServer.Context ctx;
    private final ChunkLayout layout;
    private final int workers;
    private final Subscription subscription;
    private final ExclusivePublication publication;
    private final ServerCounters counters;
    private final Membership membership;
    private final MeanWindow window;
    private final ResultPublisher control;
    private final HelloAnswers answers;
    private final HelloCredentials answerCredentials;
    private final MessageHeaderFlyweight header = new MessageHeaderFlyweight();
    private final VoterSet missing;
    private final HelloFlyweight hello = new HelloFlyweight();
    private final GradientChunkFlyweight gradient = new GradientChunkFlyweight();
    private final MeanChunkFlyweight meanOut = new MeanChunkFlyweight();
    private final BufferClaim bufferClaim = new BufferClaim();
    private final ControlledFragmentHandler fragmentHandler = this::onFragment;

    /**
     * Create the server: adds the gradient subscription, the mean publication and the counters.
     *
     * @param ctx configuration, concluded here.
     */
    public DenseAggregationServer(final AggregationServer.Context ctx) {
        this.ctx = ctx.conclude();
        if (ctx.frameMac()) {
            throw new IllegalArgumentException("frameMac is not supported by the dense baseline (DenseAggregationServer)");
        }
        this.layout = new ChunkLayout(ctx.paramCount(), ctx.fromParam(), ctx.toParam(), GradientChunkFlyweight.CHUNK_WORDS);
        this.workers = ctx.workers();
        this.missing = new VoterSet(workers);
        Subscription sub = null;
        ExclusivePublication pub = null;
        ServerCounters cnt = null;
        try {
            sub = ctx.aeron().addSubscription(ctx.voteChannel(), ctx.voteStreamId());
            pub = ctx.aeron().addExclusivePublication(ctx.resultChannel(), ctx.resultStreamId());
            cnt = new ServerCounters(ctx.aeron(), ctx.jobId(), ctx.shard());
        } catch (final RuntimeException ex) {
            CloseHelper.quietCloseAll(cnt, pub, sub);
            throw ex;
        }
        this.subscription = sub;
        this.publication = pub;
        this.counters = cnt;
        final int need = MeanChunkFlyweight.length(VoterSet.wordsFor(workers), (long) GradientChunkFlyweight.CHUNK_WORDS * Long.SIZE);
        if (publication.maxPayloadLength() < need) {
            close();
            throw new IllegalArgumentException("resultChannel mtu too small for dense chunks: max payload " + publication.maxPayloadLength()
                + " bytes, need " + need + " (use mtu=8k)");
        }
        this.membership = new Membership(workers, ctx.shard(), ctx.paramCount(), ctx.secret(), false, ctx.helloMaxSkewMs(), ctx.epochClock(),
            counters);
        this.window = new MeanWindow(layout, ctx.shard(), workers, ctx.windowChunks(), counters);
        this.control = new ResultPublisher(publication, ctx.jobId(), ctx.shard(), layout, workers, counters, null);
        this.answers = new HelloAnswers(workers, publication, subscription, counters);
        this.answerCredentials = ctx.secret() == null ? null : new HelloCredentials(ctx.secret());
    }

    @Override
    public String roleName() {
        return "dlion-dense-server-job" + ctx.jobId() + "-shard" + ctx.shard();
    }

    /**
     * One duty cycle: send what is pending (an abort, join notices, then means), read gradients until a chunk has every
     * gradient it waits for, average every such chunk, send again, and at the round deadline drop the missing workers (or
     * abort the round).
     *
     * @return work done.
     */
    @Override
    public int doWork() {
        int work = control.publishAbort();
        work += publishNoticesThenMeans();
        work += subscription.controlledPoll(fragmentHandler, ctx.fragmentLimit());
        work += window.averageReady(membership.active());
        work += publishNoticesThenMeans();
        final long now = ctx.nanoClock().nanoTime();
        work += answers.removeGoneWorkers(now);
        if (window.deadlinePassed(now, ctx.roundTimeoutNs())) {
            onDeadline(now);
            work += 1 + window.averageReady(membership.active());
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

    /** @return the dense chunk grid of this server's shard. */
    public ChunkLayout layout() {
        return layout;
    }

    /** @return the configuration. */
    public AggregationServer.Context context() {
        return ctx;
    }

    /** @return the highest round opened so far, -1 before the first gradient. */
    public long currentRound() {
        return window.currentRound();
    }

    /** @return workers whose HELLO was accepted (the server's own set). */
    public VoterSet joinedWorkers() {
        return membership.bound();
    }

    private ControlledFragmentHandler.Action onFragment(final DirectBuffer buffer, final int offset, final int length, final Header header) {
        return onMessage(buffer, offset, length, header.flags(), header.sessionId());
    }

    /**
     * Handle one message as if it came off the gradient subscription (for tests that feed frames directly).
     *
     * @return {@code ABORT} when the message must be offered again later, {@code BREAK} when a chunk may now be
     *     averaged, otherwise {@code CONTINUE} (accepted, or rejected and counted).
     */
    public ControlledFragmentHandler.Action onMessage(final DirectBuffer buffer, final int offset, final int length, final byte flags,
        final int sessionId) {
        if (window.meanDue()) {
            return ControlledFragmentHandler.Action.ABORT;
        }
        final ControlledFragmentHandler.Action action = handle(buffer, offset, length, flags, sessionId);
        if (action == ControlledFragmentHandler.Action.ABORT) {
            return action;
        }
        counters.bytesIn().getAndAddPlain(ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH));
        return window.meanDue() ? ControlledFragmentHandler.Action.BREAK : action;
    }

    private ControlledFragmentHandler.Action handle(final DirectBuffer buffer, final int offset, final int length, final byte flags,
        final int sessionId) {
        if (flags != FrameDescriptor.UNFRAGMENTED || length < MessageHeaderFlyweight.HEADER_LENGTH) {
            return reject(RejectReason.MALFORMED);
        }
        final MessageHeaderFlyweight msg = header.wrapForRead(buffer, offset);
        if (msg.magic() != (MessageHeaderFlyweight.MAGIC & 0xFF) || msg.version() != MessageHeaderFlyweight.VERSION) {
            return reject(RejectReason.BAD_VERSION);
        }
        if (msg.jobId() != ctx.jobId()) {
            return reject(RejectReason.FOREIGN_JOB);
        }
        final int worker = msg.workerId();
        if (worker >= workers) {
            return reject(RejectReason.UNKNOWN_WORKER);
        }
        final int type = msg.type();
        if (type == MessageType.HELLO) {
            return onHello(hello.wrapForRead(buffer, offset), length, worker, sessionId);
        }
        if (type != MessageType.GRADIENT_CHUNK) {
            return reject(RejectReason.UNEXPECTED_TYPE);
        }
        return onGradient(gradient.wrapForRead(buffer, offset), length, worker, sessionId);
    }

    private ControlledFragmentHandler.Action onHello(final HelloFlyweight hello, final int length, final int worker, final int sessionId) {
        if (answers.requiresEndpoint() && length >= HelloFlyweight.LENGTH && hello.resultAddressLength() == 0) {
            // means go only to destinations the server adds: a HELLO without a result endpoint cannot be served
            return reject(RejectReason.MALFORMED);
        }
        final RejectReason reason = membership.onHello(hello, length, worker, sessionId, window.currentRound(), window.hasCompletedRound());
        if (reason != null) {
            return reject(reason);
        }
        answers.onHello(worker, hello, sessionId);
        final VoterSet announced = membership.announced();
        for (int w = announced.next(0); w >= 0; w = announced.next(w + 1)) {
            window.excuse(w, ctx.minVoters());
        }
        if (window.isOpen() && window.currentRound() < membership.newestHelloRound() && !window.votersFixed()) {
            window.discard();
        }
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private ControlledFragmentHandler.Action onGradient(final GradientChunkFlyweight frame, final int length, final int worker,
        final int sessionId) {
        final MessageHeaderFlyweight msg = frame.header();
        RejectReason reason = window.checkFrame(msg, length);
        if (reason != null) {
            return reject(reason);
        }
        if (!membership.isBound(worker, sessionId)) {
            return reject(RejectReason.UNAUTHENTICATED);
        }
        final long round = msg.round();
        if (membership.isBeforeJoinRound(worker, round)) {
            return reject(RejectReason.STALE_ROUND);
        }
        if (!window.isOpen() || round != window.currentRound()) {
            if (round <= window.currentRound()) {
                return reject(RejectReason.STALE_ROUND);
            }
            if (round > window.openableRound(membership.helloRound(worker))) {
                return reject(RejectReason.FUTURE_ROUND);
            }
            if (window.isOpen() || control.isAbortPending()) {
                return ControlledFragmentHandler.Action.ABORT;
            }
            membership.onRoundOpen(round);
            window.open(round, ctx.nanoClock().nanoTime());
        }
        final int chunk = window.chunkOf(msg);
        reason = window.checkArrival(chunk, worker);
        if (reason != null) {
            return reject(reason);
        }
        if (window.isBeyond(chunk)) {
            return ControlledFragmentHandler.Action.ABORT;
        }
        reason = window.add(frame, chunk, worker);
        if (reason != null) {
            return reject(reason);
        }
        if (!window.votersFixed()) {
            membership.onTimelyVote(worker);
        }
        window.arrived(chunk, membership.active());
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private ControlledFragmentHandler.Action reject(final RejectReason reason) {
        counters.rejected(reason).incrementPlain();
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private void onDeadline(final long now) {
        if (window.isOldestChunkAveraged()) {
            window.progress(now);
            return;
        }
        final VoterSet present = window.presentInOldestChunk();
        membership.drop(missing.copyFrom(window.required(membership.active())).andNot(present));
        if (present.count() < ctx.minVoters()) {
            counters.roundsAbandoned().incrementPlain();
            control.queueAbort(window.currentRound(), present);
            window.abort();
            return;
        }
        window.goOnWith(present, now);
    }

    private int publishNoticesThenMeans() {
        int work = 0;
        for (int w = answers.nextAnswer(); w >= 0; w = answers.nextAnswer()) {
            if (!control.publishHelloAck(w, answers.answerNonce(w), HelloAckFlyweight.NO_JOIN, JoinNoticeFlyweight.NO_DONOR,
                ctx.paramCount(), answerCredentials)) {
                return work;
            }
            answers.answered(w);
            work++;
        }
        for (int w = membership.nextNotice(); w >= 0; w = membership.nextNotice()) {
            if (!control.publishJoinNotice(w, membership.joinRound(w), membership.joinDonor(w))) {
                return work;
            }
            membership.noticeSent(w);
            work++;
        }
        for (MeanWindow.Slot slot = window.nextToPublish(); slot != null; slot = window.nextToPublish()) {
            if (!publishMean(window.currentRound(), slot)) {
                break;
            }
            window.published(ctx.nanoClock().nanoTime(), membership.active());
            work++;
        }
        return work;
    }

    private boolean publishMean(final long round, final MeanWindow.Slot slot) {
        final int wordOffset = layout.wordOffset(slot.chunk);
        final int words = layout.wordsOf(slot.chunk);
        final int params = (int) layout.paramsOf(wordOffset, words);
        final int length = MeanChunkFlyweight.length(slot.voters.wordCount(), params);
        final long position = publication.tryClaim(length, bufferClaim);
        if (position < 0) {
            if (position == Publication.BACK_PRESSURED || position == Publication.ADMIN_ACTION || position == Publication.NOT_CONNECTED) {
                counters.backPressure().incrementPlain();
                return false;
            }
            throw new IllegalStateException("mean publication cannot go on (" + Publication.errorString(position) + "): " + publication.channel());
        }
        meanOut.wrap(bufferClaim.buffer(), bufferClaim.offset()).encode(ctx.jobId(), round, wordOffset, words, ctx.shard(), slot.voters,
            slot.mean, params);
        bufferClaim.commit();
        counters.bytesOut().getAndAddPlain(ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH));
        return true;
    }
}
