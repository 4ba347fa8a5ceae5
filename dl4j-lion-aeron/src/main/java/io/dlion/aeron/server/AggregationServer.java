package io.dlion.aeron.server;

import java.util.Objects;
import java.util.concurrent.TimeUnit;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.Image;
import io.aeron.Subscription;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.JobContext;
import io.dlion.aeron.RejectReason;
import io.dlion.aeron.Topology;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.FrameMac;
import io.dlion.aeron.wire.GradientChunkFlyweight;
import io.dlion.aeron.wire.HelloAckFlyweight;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.aeron.wire.MeanChunkFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.codec.DownlinkEncoding;
import io.dlion.vote.VoteRule;
import io.dlion.vote.VoterSet;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.SystemNanoClock;

/**
 * The aggregation server of one slice of a job: an {@link Agent} that subscribes to the workers' chunks,
 * aggregates each chunk as soon as every worker's payload for it has arrived, and publishes the result chunk at once,
 * so aggregating and broadcasting overlap with the workers still sending (pipelined). One engine for both payloads
 * ({@link Context#payload(Payload)}): sign votes ({@link Payload#SIGNS}, voted: D-Lion) or fp32 gradients
 * ({@link Payload#FP32}, summed in double and averaged: the dense baseline); only the {@link Aggregation} differs, and
 * what follows says "vote" and "result" where a dense server takes a gradient and sends a mean.
 * <p>
 * The agent is the duty cycle only; each job is a collaborator:
 * <pre>
 *   chunk subscription -> decode header -> {@link Membership}   HELLO, sessions, authentication, joins, laggards, drops
 *                                       -> {@link ChunkWindow}  chunks of the open round, deadline, quorum
 *                                            '-- {@link Aggregation}  the payload: {@link VoteAggregation} or {@link MeanAggregation}
 *                         duty cycle    -> {@link ResultPublisher} result (or mean) chunks, JOIN_NOTICEs, ROUND_ABORTs
 *   hand-over stream    -> {@link HandOverRelay}   a donor's state, passed on to the joining worker
 * </pre>
 * {@link #doWork()} is the only place a vote is taken: the fragment handler stops the poll as soon as a chunk may have
 * every vote it waits for (and leaves every further message in the log until then), and the duty cycle votes it before
 * it reads another message.
 * <p>
 * Memory: votes are copied out of Aeron's receive buffer into a window of {@link Context#windowChunks()} chunk
 * slots per worker; a vote for a chunk beyond the window is left in Aeron's buffer ({@code ABORT}) and read
 * again once the oldest chunk has been published, which back-pressures a worker that runs ahead. The server
 * therefore holds {@code workers * windowChunks * chunkWords} words, never N full vectors.
 * <p>
 * Who may vote: a worker's HELLO (with an HMAC-SHA256 of the job's secret when {@link Context#secret(byte[])} is
 * set) binds its worker id to the Aeron session it came from; a vote from any other session is rejected as
 * {@link RejectReason#UNAUTHENTICATED}. A new valid HELLO (a restarted worker) moves the binding. Every accepted HELLO
 * is answered with a HELLO_ACK that proves the server to the worker ({@link HelloAnswers}); with a manual
 * multi-destination-cast result channel ({@link io.dlion.aeron.Channels#udpResultsPublication}) the worker's result
 * endpoint becomes a destination only then, so nobody who has not said a valid HELLO receives results.
 * <p>
 * Rounds: the first vote of the next round (the current one + 1, or on a fresh server the round a worker's HELLO
 * named) opens it once the current round is complete; a vote of a closed round is rejected as
 * {@link RejectReason#STALE_ROUND}, of a later one as {@link RejectReason#FUTURE_ROUND}. A chunk is voted as soon
 * as every <em>active</em> worker's vote for it is in; the first chunk voted fixes the round's voters.
 * <p>
 * Deadline and quorum: when a round makes no progress for {@link Context#roundTimeoutNs()} (since it opened or since
 * its last published chunk; a pause of the server's own process, a gap between duty cycles over {@link Context#pauseNs()},
 * does not count), the active workers missing from its oldest open chunk are dropped (counted in
 * {@link ServerCounters#workersDropped()}) and the round goes on with the workers present, provided they are at least
 * {@link Context#minVoters()}; otherwise, unless the missing workers that may still vote (starting, or whose process
 * is alive, {@link QuorumGrace}) would make the quorum, when the round waits up to {@link QuorumGrace#DEADLINES} more
 * round timeouts for them, the round is aborted with a {@code ROUND_ABORT} message (workers throw
 * {@code QuorumLostException}). A dropped worker's later votes of that round are rejected as
 * {@link RejectReason#LATE}; it reads the round's result from the broadcast like everyone else, and becomes active
 * again when its vote for a round arrives before that round's voters are fixed, or when it says HELLO again (a restarted
 * worker), from the next round whose voters are not fixed yet. Every result frame carries the
 * mask of the workers whose votes it counts: a worker dropped in the middle of a round is counted in the chunks voted
 * before the deadline and not in the later ones, so with {@link VoteRule#AVERAGE} one round's chunks can count
 * different numbers of voters; workers apply each chunk with its own count ({@code AeronVoteExchange},
 * {@code RoundResult.averageSegments}). Every rejected message is counted by reason in {@link ServerCounters}
 * and never enters a vote.
 * <p>
 * Rejoin: a HELLO whose round is {@link HelloFlyweight#JOIN_ROUND} comes from a restarted worker without
 * parameters. The server names its first round R (highest round opened + 2) and a donor (the lowest live worker) in a
 * {@code JOIN_NOTICE} broadcast before any further result (and again after every answer to the donor until round R
 * opens), and waits for the worker again from round R on; the donor hands it its parameters as of the start of round R
 * (see {@code AeronVoteExchange.awaitJoin}).
 * <p>
 * Take-over: a server started for a dead rank's slice may be given the old server's last result as its host's worker
 * received it ({@link Context#held}). A worker whose part of that result was cut off by the death names its round in
 * its HELLO while the others name the next; it is sent the held result again, whole, after the answers and before any
 * later result, instead of being told to rejoin, and its votes of that round are stale.
 * <p>
 * Start it with {@link #launch(Context)}: a running server on a thread of its own, stopped and freed by {@link #close()}
 * (several servers on one thread: {@link AggregationServers#launch(java.util.List)}). Tests that pump the duty cycle
 * on their own thread construct it and call {@link #doWork()} themselves (or through an {@code AgentInvoker}).
 */
public final class AggregationServer implements Agent, AutoCloseable {
    private final Context ctx;
    private final ChunkLayout layout;
    private final int workers;
    private final Subscription subscription;
    private final ExclusivePublication publication;
    /** Votes and frames of workers in this server's own process, by IPC ({@link Context#local}); null without. */
    private final Subscription localSubscription;
    private final ExclusivePublication localPublication;
    /** Per worker: its accepted HELLO came by IPC, so its votes must too, and its answers go on the local publication. */
    private final boolean[] boundLocal;
    /** The subscription being polled is the local one. */
    private boolean pollingLocal;
    private final ServerCounters counters;
    private final QuorumGrace quorumGrace = new QuorumGrace();
    private final Membership membership;
    private final ChunkWindow window;
    /** Whether a duty cycle ran yet, and when the last one ended: a longer gap than {@link Context#pauseNs()} was a pause. */
    private boolean cycled;
    private long lastCycleNs;
    private final Aggregation aggregation;
    private final ResultPublisher publisher;
    private final HelloAnswers answers;
    private final HelloCredentials answerCredentials;
    /** Checks votes and, in the publisher, tags what the server sends; shared, as both run on the agent thread. */
    private final FrameMac frameMac;
    private final HandOverRelay relay;
    private final MessageHeaderFlyweight header = new MessageHeaderFlyweight();
    private final VoterSet missing;
    private final HelloFlyweight hello = new HelloFlyweight();
    private final ControlledFragmentHandler fragmentHandler = this::onFragment;
    /** The old server's last result, held by this server's host ({@link Context#held}); null without, or once not needed. */
    private HeldResult held;
    /** The next chunk of the held result to send; the chunk count when none is due. */
    private int heldNextChunk;
    /** One chunk of the held result, chunk-local, as the publisher takes it. */
    private final long[][] heldChunk;
    /** The thread {@link #launch(Context)} runs this server on, null when the caller runs the duty cycle. */
    private final AgentRunner runner;

    /**
     * Create the server without starting it: adds the chunk subscription, the result publication and the counters; the
     * caller runs {@link #doWork()} (an {@code AgentRunner}, an {@code AgentInvoker}, or a test's own loop).
     *
     * @param ctx configuration, concluded here.
     */
    public AggregationServer(final Context ctx) {
        this(ctx, false);
    }

    /**
     * Create the server and start its duty cycle on a thread of its own ({@link Context#idleStrategy()}, errors to
     * {@link Context#errorHandler()}): the one way a process starts a server.
     *
     * @param ctx configuration, concluded here.
     * @return the running server; {@link #close()} stops its thread and frees what it holds.
     */
    public static AggregationServer launch(final Context ctx) {
        final AggregationServer server = new AggregationServer(ctx, true);
        AgentRunner.startOnThread(server.runner);
        return server;
    }

    private AggregationServer(final Context ctx, final boolean ownThread) {
        this.ctx = ctx.conclude();
        final int chunkWords = ctx.payloadChunkWords();
        this.layout = new ChunkLayout(ctx.paramCount(), ctx.fromParam, ctx.toParam, chunkWords);
        this.workers = ctx.workers();
        this.missing = new VoterSet(workers);
        Subscription sub = null;
        ExclusivePublication pub = null;
        Subscription localSub = null;
        ExclusivePublication localPub = null;
        ServerCounters cnt = null;
        try {
            sub = ctx.aeron.addSubscription(ctx.voteChannel, ctx.voteStreamId);
            pub = ctx.aeron.addExclusivePublication(ctx.resultChannel, ctx.resultStreamId);
            if (ctx.localChannel != null) {
                localSub = ctx.aeron.addSubscription(ctx.localChannel, ctx.localVoteStreamId);
                localPub = ctx.aeron.addExclusivePublication(ctx.localChannel, ctx.localResultStreamId);
            }
            cnt = new ServerCounters(ctx.aeron, ctx.jobId(), ctx.slice);
        } catch (final RuntimeException ex) {
            CloseHelper.quietCloseAll(cnt, localPub, localSub, pub, sub);
            throw ex;
        }
        this.subscription = sub;
        this.publication = pub;
        this.localSubscription = localSub;
        this.localPublication = localPub;
        this.boundLocal = new boolean[workers];
        this.counters = cnt;
        final int tag = ctx.frameMac() ? FrameMac.TAG_LENGTH : 0;
        // a vote chunk must fit one frame; results are cut into as many frames as their voter set and body need; a mean
        // chunk goes in one frame with its voter set
        final int need = (ctx.payload == Payload.FP32 ? MeanChunkFlyweight.length(VoterSet.wordsFor(workers), (long) chunkWords * Long.SIZE)
            : MessageHeaderFlyweight.HEADER_LENGTH + chunkWords * Long.BYTES) + tag;
        if (publication.maxPayloadLength() < need) {
            free();
            throw new IllegalArgumentException("resultChannel mtu too small for " + ctx.payload + " chunks of " + chunkWords + " words: max payload "
                + publication.maxPayloadLength() + " bytes, need " + need + " (use mtu=8k or fewer chunkWords)");
        }
        this.membership = new Membership(workers, ctx.slice, ctx.paramCount(), ctx.secret(), ctx.frameMac(), ctx.helloMaxSkewMs,
            ctx.epochClock, counters);
        if (ctx.absent != null) {
            membership.excuse(ctx.absent);
        }
        this.held = ctx.held;
        this.heldNextChunk = layout.chunkCount();
        this.heldChunk = held == null ? null : new long[held.planes().length][chunkWords];
        if (held != null) {
            membership.holdResult(held.round());
        }
        this.aggregation = ctx.payload == Payload.FP32 ? new MeanAggregation(workers, chunkWords, ctx.windowChunks)
            : new VoteAggregation(workers, chunkWords, ctx.windowChunks, ctx.rule(), counters);
        this.window = new ChunkWindow(layout, ctx.slice, workers, ctx.windowChunks, aggregation, ctx.minVoters, counters);
        this.frameMac = ctx.frameMac() ? new FrameMac(ctx.secret()) : null;
        this.publisher = new ResultPublisher(publication, localPublication, ctx.jobId(), ctx.slice, layout, workers, counters, frameMac);
        this.answers = new HelloAnswers(workers, publication, subscription, counters);
        this.answerCredentials = ctx.secret() == null ? null : new HelloCredentials(ctx.secret());
        try {
            this.relay = new HandOverRelay(ctx.aeron, ctx.voteChannel, ctx.resultChannel, ctx.handOverStreamId, ctx.jobId(), workers, ctx.slice,
                ctx.secret(), ctx.fragmentLimit);
        } catch (final RuntimeException ex) {
            free();
            throw ex;
        }
        this.runner = ownThread ? new AgentRunner(ctx.idleStrategy(), ctx.errorHandler(), null, this) : null;
    }

    @Override
    public String roleName() {
        return (ctx.payload == Payload.FP32 ? "dlion-dense-server-job" : "dlion-server-job") + ctx.jobId() + "-slice" + ctx.slice;
    }

    /**
     * One duty cycle: send what is pending (an abort, join notices, then results), read chunks until a chunk has every
     * payload it waits for, aggregate every such chunk, send again, and at the round deadline drop the missing workers
     * (or abort the round) and aggregate what that completes.
     *
     * @return work done.
     */
    @Override
    public int doWork() {
        final long startNs = ctx.nanoClock.nanoTime();
        if (cycled && startNs - lastCycleNs > ctx.pauseNs) {
            // this process did not run (stopped, a long GC, a stalled host): the pause is the server's, not the workers'
            window.paused(startNs - lastCycleNs);
        }
        int work = publisher.publishAbort();
        work += publishNoticesThenResults();
        work += subscription.controlledPoll(fragmentHandler, ctx.fragmentLimit);
        if (localSubscription != null) {
            pollingLocal = true;
            work += localSubscription.controlledPoll(fragmentHandler, ctx.fragmentLimit);
            pollingLocal = false;
        }
        work += window.aggregateReady(membership.active());
        work += publishNoticesThenResults();
        final long now = ctx.nanoClock.nanoTime();
        work += answers.removeGoneWorkers(now);
        if (window.deadlinePassed(now, ctx.roundTimeoutNs)) {
            onDeadline(now);
            work += 1 + window.aggregateReady(membership.active());
        }
        cycled = true;
        lastCycleNs = ctx.nanoClock.nanoTime();
        return work + relay.doWork();
    }

    @Override
    public void onClose() {
        free();
    }

    /**
     * Stop the server: a launched server's thread is stopped first (it frees the server as it ends); a server the caller
     * runs is freed at once.
     */
    @Override
    public void close() {
        if (runner != null) {
            CloseHelper.close(runner);
        } else {
            free();
        }
    }

    private void free() {
        CloseHelper.closeAll(relay, counters, localPublication, localSubscription, publication, subscription);
    }

    /** @return hand-over frames relayed from donors to joining workers, and payload bytes, and frames rejected. */
    public long[] handOverCounts() {
        return new long[] {relay.framesRelayed().get(), relay.bytesRelayed().get(), relay.framesRejected().get()};
    }

    /** @return the counters of this server. */
    public ServerCounters counters() {
        return counters;
    }

    /** @return the chunk grid of this server's slice. */
    public ChunkLayout layout() {
        return layout;
    }

    /** @return the configuration. */
    public Context context() {
        return ctx;
    }

    /** @return the highest round opened so far, -1 before the first vote. */
    public long currentRound() {
        return window.currentRound();
    }

    /**
     * @return workers the next round waits for: every worker not dropped for missing a deadline (the server's own set:
     *     read it on the agent's thread, or once the agent stopped).
     */
    public VoterSet activeWorkers() {
        return membership.active();
    }

    /** @return workers whose HELLO was accepted, each bound to the Aeron session it came from (the server's own set). */
    public VoterSet joinedWorkers() {
        return membership.bound();
    }

    /** @return true when the result publication has at least one connected subscriber. */
    public boolean isConnected() {
        return publisher.isConnected();
    }

    private ControlledFragmentHandler.Action onFragment(final DirectBuffer buffer, final int offset, final int length, final Header header) {
        return onMessage(buffer, offset, length, header.flags(), header.sessionId());
    }

    /**
     * Handle one message as if it came off the vote subscription: the server's whole decoder, for tools and tests that
     * feed it frames directly (fuzzing) on the thread that runs the agent. A chunk the message completes is voted by
     * the next {@link #doWork()}.
     *
     * @param buffer    holding the message.
     * @param offset    of the message.
     * @param length    of the message.
     * @param flags     Aeron frame flags ({@code FrameDescriptor.UNFRAGMENTED} for a whole message).
     * @param sessionId Aeron session the message came from.
     * @return {@code ABORT} when the message must be offered again later (its round or chunk is not open yet, or a
     *     chunk waits for the duty cycle to vote it), {@code BREAK} when a chunk may now be voted, otherwise
     *     {@code CONTINUE} (accepted, or rejected and counted).
     */
    public ControlledFragmentHandler.Action onMessage(final DirectBuffer buffer, final int offset, final int length, final byte flags,
        final int sessionId) {
        if (window.aggregateDue()) {
            // the poll goes on with the subscription's other images after a BREAK: leave their messages in the log
            // until the duty cycle has aggregated, so that no message is read between a chunk's last payload and its
            // aggregation
            return ControlledFragmentHandler.Action.ABORT;
        }
        final ControlledFragmentHandler.Action action = handle(buffer, offset, length, flags, sessionId);
        if (action == ControlledFragmentHandler.Action.ABORT) {
            return action;
        }
        counters.bytesIn().getAndAddPlain(ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH));
        return window.aggregateDue() ? ControlledFragmentHandler.Action.BREAK : action;
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
        if (type != aggregation.frameType()) {
            // a worker started with the other payload (votes to a dense server, gradients to a vote server) fails its
            // round instead of mixing payloads
            return reject(RejectReason.UNEXPECTED_TYPE);
        }
        if (frameMac == null) {
            return onChunk(buffer, offset, length, worker, sessionId);
        }
        // verified again each time the frame is offered after an ABORT: the log may only be trusted once it is read
        if (!frameMac.verify(buffer, offset, length, sessionId)) {
            return reject(RejectReason.BAD_MAC);
        }
        return onChunk(buffer, offset, length - FrameMac.TAG_LENGTH, worker, sessionId);
    }

    private ControlledFragmentHandler.Action onHello(final HelloFlyweight hello, final int length, final int worker, final int sessionId) {
        if (!pollingLocal && answers.requiresEndpoint() && length >= HelloFlyweight.LENGTH && hello.resultAddressLength() == 0) {
            // results go only to destinations the server adds: a HELLO without a result endpoint cannot be served
            return reject(RejectReason.MALFORMED);
        }
        final RejectReason reason = membership.onHello(hello, length, worker, sessionId, window.currentRound(), window.hasCompletedRound());
        if (reason != null) {
            return reject(reason);
        }
        boundLocal[worker] = pollingLocal;
        answers.onHello(worker, hello, sessionId, pollingLocal);
        if (membership.takeHeldResultDue()) {
            heldNextChunk = 0; // the whole result again, after the answers
            System.getLogger(AggregationServer.class.getName()).log(System.Logger.Level.INFO, () -> "slice " + ctx.slice + " (rank "
                + ctx.servingRank + "): sends round " + held.round() + "'s result, as its host holds it, again to the workers that lack it");
        }
        final VoterSet announced = membership.announced();
        for (int w = announced.next(0); w >= 0; w = announced.next(w + 1)) {
            window.excuse(w, ctx.minVoters);
        }
        if (window.isOpen() && window.currentRound() < membership.newestHelloRound() && !window.votersFixed()) {
            // only laggards voted in it: close it unvoted; the next round is currentRound + 1 = the others' round
            window.discard();
        }
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private ControlledFragmentHandler.Action onChunk(final DirectBuffer buffer, final int offset, final int length, final int worker,
        final int sessionId) {
        final MessageHeaderFlyweight msg = header;
        RejectReason reason = window.checkFrame(msg, length);
        if (reason != null) {
            return reject(reason);
        }
        if (!membership.isBound(worker, sessionId) || boundLocal[worker] != pollingLocal) {
            return reject(RejectReason.UNAUTHENTICATED);
        }
        final long round = msg.round();
        if (membership.isBeforeJoinRound(worker, round)) {
            // a worker told to rejoin: its votes count again from its join round, and must not open an earlier one
            return reject(RejectReason.STALE_ROUND);
        }
        if (held != null && round <= held.round()) {
            // a laggard votes again in the round whose result it is sent: that round is over
            return reject(RejectReason.STALE_ROUND);
        }
        if (!window.isOpen() || round != window.currentRound()) {
            if (round <= window.currentRound()) {
                return reject(RejectReason.STALE_ROUND);
            }
            if (round > window.openableRound(membership.helloRound(worker))) {
                return reject(RejectReason.FUTURE_ROUND);
            }
            if (window.isOpen() || publisher.isAbortPending()) {
                return ControlledFragmentHandler.Action.ABORT;
            }
            membership.onRoundOpen(round);
            window.open(round, ctx.nanoClock.nanoTime());
        }
        final int chunk = window.chunkOf(msg);
        reason = window.checkArrival(chunk, worker);
        if (reason != null) {
            return reject(reason);
        }
        if (window.isBeyond(chunk)) {
            return ControlledFragmentHandler.Action.ABORT;
        }
        reason = window.add(buffer, offset, chunk, worker);
        if (reason != null) {
            return reject(reason);
        }
        membership.onVote(worker);
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

    /**
     * No progress for a round timeout: the workers missing from the oldest open chunk are dropped and the round goes on
     * with the others, or, with fewer than the quorum, the round is aborted; unless the missing workers that may still vote
     * (never voted on this server, or alive: {@link QuorumGrace}) would make the quorum: then the round waits another round
     * timeout, up to {@link QuorumGrace#DEADLINES} times.
     */
    private void onDeadline(final long now) {
        if (window.isOldestChunkAggregated()) {
            window.progress(now);
            return;
        }
        final VoterSet present = window.presentInOldestChunk();
        missing.copyFrom(window.required(membership.active())).andNot(present);
        if (present.count() < ctx.minVoters && present.count() + mayStillVote(missing) >= ctx.minVoters
            && quorumGrace.waitAgain(window.currentRound())) {
            window.progress(now);
            return;
        }
        membership.drop(missing);
        if (present.count() < ctx.minVoters) {
            System.getLogger(AggregationServer.class.getName()).log(System.Logger.Level.WARNING, () -> abortReport(present));
            counters.roundsAbandoned().incrementPlain();
            publisher.queueAbort(window.currentRound(), present);
            window.abort();
            return;
        }
        window.goOnWith(present, now);
    }

    /**
     * @return what an operator needs to tell why a round is aborted: who voted, and for each worker missing, whether an
     *     accepted HELLO bound it to a session here, whether that session's image is connected, and whether it ever voted
     *     on this server.
     */
    private String abortReport(final VoterSet present) {
        final StringBuilder sb = new StringBuilder("slice ").append(ctx.slice).append(" (rank ").append(ctx.servingRank).append("): round ")
            .append(window.currentRound()).append(" aborted below the quorum of ").append(ctx.minVoters).append(": voted ").append(present);
        for (int w = missing.next(0); w >= 0; w = missing.next(w + 1)) {
            sb.append("; worker ").append(w).append(membership.bound().contains(w) ? " bound to session " + membership.sessionOf(w)
                + (boundLocal[w] ? " (IPC)" : "") + (isAlive(w) ? ", image connected" : ", image gone") : " never bound here")
                .append(membership.voted().contains(w) ? ", voted here before" : ", never voted here");
        }
        return sb.toString();
    }

    /**
     * @param workers workers missing from the open round.
     * @return how many of them may still vote: never voted on this server (starting), or their session's image is still
     *     connected (their process lives).
     */
    private int mayStillVote(final VoterSet workers) {
        int count = 0;
        for (int w = workers.next(0); w >= 0; w = workers.next(w + 1)) {
            if (!membership.voted().contains(w) || isAlive(w)) {
                count++;
            }
        }
        return count;
    }

    /** @return true while the worker is bound and the image of its session, on the transport it is bound to, is connected. */
    private boolean isAlive(final int worker) {
        if (!membership.bound().contains(worker)) {
            return false;
        }
        final Subscription votes = boundLocal[worker] ? localSubscription : subscription;
        final Image image = votes == null ? null : votes.imageBySessionId(membership.sessionOf(worker));
        return image != null && !image.isClosed();
    }

    /**
     * HELLO_ACKs first, then JOIN_NOTICEs, which go out before any further result frame, so no worker reads a result of
     * round R - 1 before them. An answer to the donor of a pending join is followed by that join's notice again
     * ({@code Membership.answered}): the first one may have gone out before the donor's image was set up.
     */
    private int publishNoticesThenResults() {
        int work = 0;
        for (int w = answers.nextAnswer(); w >= 0; w = answers.nextAnswer()) {
            final long joinRound = membership.answerJoinRound(w);
            if (!publisher.publishHelloAck(w, boundLocal[w], answers.answerNonce(w), joinRound < 0 ? HelloAckFlyweight.NO_JOIN : joinRound,
                joinRound < 0 ? JoinNoticeFlyweight.NO_DONOR : membership.joinDonor(w), ctx.paramCount(), ctx.servingRank, answerCredentials)) {
                return work;
            }
            answers.answered(w);
            membership.answered(w);
            work++;
        }
        for (int w = membership.nextNotice(); w >= 0; w = membership.nextNotice()) {
            if (!publisher.publishJoinNotice(w, membership.joinRound(w), membership.joinDonor(w))) {
                return work;
            }
            membership.noticeSent(w);
            work++;
        }
        for (; heldNextChunk < layout.chunkCount(); heldNextChunk++) {
            if (!publishHeldChunk(heldNextChunk)) {
                return work;
            }
            work++;
        }
        for (ChunkSlot slot = window.nextToPublish(); slot != null; slot = window.nextToPublish()) {
            if (!aggregation.publish(publisher, window.currentRound(), slot)) {
                break;
            }
            if (held != null) {
                // a later round's result goes out: a laggard that comes from now on would read it before the held one
                held = null;
                membership.holdResult(-1);
            }
            window.published(ctx.nanoClock.nanoTime(), membership.active());
            work++;
        }
        return work;
    }

    /**
     * Send one chunk of the held result as the old server sent it: the voters of its run, and the encoding a server
     * gives that many voters under the job's rule.
     *
     * @return true when the whole chunk went out.
     */
    private boolean publishHeldChunk(final int chunk) {
        final int wordOffset = layout.wordOffset(chunk);
        final int words = layout.wordsOf(chunk);
        for (int p = 0; p < heldChunk.length; p++) {
            System.arraycopy(held.planes()[p], wordOffset - held.fromWord(), heldChunk[p], 0, words);
        }
        final VoterSet voters = held.votersAt(wordOffset);
        final int count = voters.count();
        return publisher.publishResult(held.round(), chunk, voters, count, Encoding.ofResult(ctx.rule(), count), DownlinkEncoding.of(ctx.rule(), count),
            heldChunk);
    }

    /**
     * Configuration of one aggregation server: the job's shared settings ({@link JobContext}) and the server's own.
     * Required: {@link #aeron(Aeron)}, {@link #jobId(int)}, {@link #workers(int)}, {@link #paramCount(long)}; everything
     * else has a default from {@link Configuration}.
     */
    public static final class Context extends JobContext<Context> {
        /** Default {@link #pauseNs(long)}: 200 ms. */
        public static final long PAUSE_NS_DEFAULT = 200_000_000L;

        private Aeron aeron;
        private int slice;
        private long fromParam;
        private long toParam = -1;
        private String voteChannel = Configuration.voteChannel();
        private int voteStreamId = Configuration.voteStreamId();
        private String resultChannel = Configuration.resultChannel();
        private int resultStreamId = Configuration.resultStreamId();
        private int handOverStreamId;
        private String localChannel;
        private int localVoteStreamId;
        private int localResultStreamId;
        private int windowChunks = Configuration.windowChunks();
        private long roundTimeoutNs = TimeUnit.MILLISECONDS.toNanos(Configuration.roundTimeoutMs());
        private long pauseNs = PAUSE_NS_DEFAULT;
        private int fragmentLimit = Configuration.fragmentLimit();
        private NanoClock nanoClock = SystemNanoClock.INSTANCE;
        private int minVoters;
        private int servingRank = -1;
        private VoterSet absent;
        private HeldResult held;
        private long helloMaxSkewMs = Configuration.HELLO_MAX_SKEW_MS_DEFAULT;
        private EpochClock epochClock = SystemEpochClock.INSTANCE;
        private Payload payload = Payload.SIGNS;
        private IdleStrategy idleStrategy;
        private ErrorHandler errorHandler;

        /**
         * Validate the configuration once and fill derived defaults.
         *
         * @return this for a fluent API.
         * @throws IllegalArgumentException naming the field that is wrong.
         */
        @Override
        public Context conclude() {
            super.conclude();
            Objects.requireNonNull(aeron, "aeron");
            if (toParam < 0) {
                toParam = paramCount();
            }
            if (slice < 0 || slice >= MessageHeaderFlyweight.MAX_SLICES) {
                throw new IllegalArgumentException("slice must be in [0, " + (MessageHeaderFlyweight.MAX_SLICES - 1) + "], got " + slice);
            }
            Objects.requireNonNull(voteChannel, "voteChannel");
            Objects.requireNonNull(resultChannel, "resultChannel");
            if (localChannel != null && (!localChannel.startsWith("aeron:ipc") || localVoteStreamId == localResultStreamId)) {
                throw new IllegalArgumentException("local: two different streams of an aeron:ipc channel, got " + localChannel + " #"
                    + localVoteStreamId + " #" + localResultStreamId);
            }
            if (handOverStreamId == 0) {
                handOverStreamId = voteStreamId + Configuration.HANDOVER_STREAM_OFFSET;
            }
            if (handOverStreamId == voteStreamId || handOverStreamId == resultStreamId || handOverStreamId + 1 == voteStreamId
                || handOverStreamId + 1 == resultStreamId) {
                throw new IllegalArgumentException("handOverStreamId and handOverStreamId + 1 must differ from voteStreamId=" + voteStreamId
                    + " and resultStreamId=" + resultStreamId + ", got " + handOverStreamId);
            }
            if (windowChunks < 1) {
                throw new IllegalArgumentException("windowChunks must be >= 1, got " + windowChunks);
            }
            if (roundTimeoutNs <= 0) {
                throw new IllegalArgumentException("roundTimeoutNs must be > 0, got " + roundTimeoutNs);
            }
            if (pauseNs <= 0) {
                throw new IllegalArgumentException("pauseNs must be > 0, got " + pauseNs);
            }
            if (fragmentLimit < 1) {
                throw new IllegalArgumentException("fragmentLimit must be >= 1, got " + fragmentLimit);
            }
            Objects.requireNonNull(nanoClock, "nanoClock");
            Objects.requireNonNull(payload, "payload");
            if (payload == Payload.FP32 && frameMac()) {
                throw new IllegalArgumentException("frameMac is not supported with payload FP32 (the dense baseline)");
            }
            new ChunkLayout(paramCount(), fromParam, toParam, payloadChunkWords());
            if (minVoters == 0) {
                minVoters = workers() / 2 + 1;
            }
            if (minVoters < 1 || minVoters > workers()) {
                throw new IllegalArgumentException("minVoters must be in [1, workers=" + workers() + "], got " + minVoters);
            }
            if (absent != null && absent.capacity() != workers()) {
                throw new IllegalArgumentException("absent must hold workers=" + workers() + " ids, got a set of " + absent.capacity());
            }
            if (held != null) {
                checkHeld();
            }
            if (servingRank < -1 || servingRank >= workers()) {
                throw new IllegalArgumentException("servingRank must be in [-1, workers=" + workers() + "), got " + servingRank);
            }
            if (helloMaxSkewMs < 0) {
                throw new IllegalArgumentException("helloMaxSkewMs must be >= 0, got " + helloMaxSkewMs);
            }
            Objects.requireNonNull(epochClock, "epochClock");
            if (idleStrategy == null) {
                idleStrategy = new BackoffIdleStrategy();
            }
            if (errorHandler == null) {
                errorHandler = AggregationServer::logError;
            }
            return this;
        }

        /**
         * @param payload what the workers send: {@link Payload#SIGNS} (votes, the default) or {@link Payload#FP32} (gradients
         *                of the dense baseline).
         * @return this for a fluent API.
         */
        public Context payload(final Payload payload) {
            this.payload = payload;
            return this;
        }

        /** @return what the workers send. */
        public Payload payload() {
            return payload;
        }

        /**
         * @return words per chunk of this server's grid: {@link #chunkWords()} for votes; for fp32 gradients
         *     {@link GradientChunkFlyweight#CHUNK_WORDS} (a 5,120-byte frame), or fewer when {@link #chunkWords()} is.
         */
        public int payloadChunkWords() {
            return payload == Payload.FP32 ? Math.min(chunkWords(), GradientChunkFlyweight.CHUNK_WORDS) : chunkWords();
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
         * @param slice index of this server's slice, 0 to 65,534.
         * @return this for a fluent API.
         */
        public Context slice(final int slice) {
            this.slice = slice;
            return this;
        }

        public int slice() {
            return slice;
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

        /**
         * Serve slice {@code slice} of a {@link Topology}: its chunk size ({@link Topology#chunkWords(long, int)} of the
         * chunk words set so far, or of {@link GradientChunkFlyweight#CHUNK_WORDS} for {@link Payload#FP32}), slice index,
         * parameter range and channels on every address of the host, and in a sharded job the local (IPC) streams of the
         * worker in the same process ({@link #local(String, int, int)}). Set the parameter count, the workers, the payload
         * and the chunk words first.
         *
         * @param topology who serves which slice.
         * @param slice    the slice this server owns.
         * @return this for a fluent API.
         */
        public Context slice(final Topology topology, final int slice) {
            chunkWords(topology.chunkWords(paramCount(), payload == Payload.FP32 ? GradientChunkFlyweight.CHUNK_WORDS : chunkWords()));
            final long[] bounds = Topology.sliceBounds(paramCount(), topology.slices(), chunkWords());
            slice(slice).paramRange(bounds[slice], bounds[slice + 1])
                .voteChannel(topology.serverVoteChannel(slice, workers()))
                .resultChannel(topology.serverResultChannel(slice, workers()));
            return topology.kind() == Topology.Kind.SHARDED
                ? local(topology.localChannel(workers()), topology.localVoteStreamId(slice), topology.localResultStreamId(slice)) : this;
        }

        /**
         * Serve workers in this server's own process by IPC besides the network: they vote on {@code voteStreamId} of the
         * IPC channel and read every frame of this server on {@code resultStreamId}, through the process's media driver
         * instead of the kernel's UDP ({@link Topology#servedHere(java.util.List, int)}). A worker is bound to the
         * transport its HELLO came by. Set by {@link #slice(Topology, int)} for a sharded job; default: none.
         *
         * @param channel        an {@code aeron:ipc} channel, or null for none.
         * @param voteStreamId   the stream local workers vote on.
         * @param resultStreamId the stream this server publishes on for them.
         * @return this for a fluent API.
         */
        public Context local(final String channel, final int voteStreamId, final int resultStreamId) {
            this.localChannel = channel;
            this.localVoteStreamId = voteStreamId;
            this.localResultStreamId = resultStreamId;
            return this;
        }

        /** @return the IPC channel of workers in this server's process, or null. */
        public String localChannel() {
            return localChannel;
        }

        public long fromParam() {
            return fromParam;
        }

        /**
         * @param servingRank the rank of the sharded job whose process runs this server, named in every HELLO_ACK so that a
         *                    worker knows who serves the slice wherever it looked; -1 (default) for a server of no rank.
         * @return this for a fluent API.
         */
        public Context servingRank(final int servingRank) {
            this.servingRank = servingRank;
            return this;
        }

        public int servingRank() {
            return servingRank;
        }

        /**
         * @param absent workers known to be gone (a dead rank whose slice this server takes over): rounds do not wait for
         *               them until they say HELLO; null (default) waits for every worker from the start.
         * @return this for a fluent API.
         */
        public Context absent(final VoterSet absent) {
            this.absent = absent;
            return this;
        }

        public VoterSet absent() {
            return absent;
        }

        /**
         * @param held the old server's last result of this slice, as this server's host holds it (a slice taken over): sent
         *             again to the workers that name its round while the others name the next, those that lost part of it
         *             with the old server, instead of telling them to rejoin ({@code Membership}); votes of its round or an
         *             earlier one are stale. Sign votes only. Null (default): none.
         * @return this for a fluent API.
         */
        public Context held(final HeldResult held) {
            this.held = held;
            return this;
        }

        public HeldResult held() {
            return held;
        }

        private void checkHeld() {
            if (payload != Payload.SIGNS) {
                throw new IllegalArgumentException("held: a held result is for sign votes only, got payload " + payload);
            }
            final int fromWord = (int) (fromParam >>> 6);
            final int toWord = (int) ((toParam + 63) >>> 6);
            final int planes = VoteAggregation.planes(rule(), workers());
            if (held.fromWord() != fromWord || held.toWord() != toWord || held.planes().length != planes) {
                throw new IllegalArgumentException("held: a result of words [" + fromWord + ", " + toWord + ") in " + planes + " planes, got words ["
                    + held.fromWord() + ", " + held.toWord() + ") in " + held.planes().length + " planes");
            }
            for (final VoterSet voters : held.runVoters()) {
                if (voters.capacity() != workers() || voters.isEmpty()) {
                    throw new IllegalArgumentException("held: every run's voters must be a non-empty set of workers=" + workers() + " ids");
                }
            }
        }

        public long toParam() {
            return toParam;
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
         * @param streamId of hand-overs from donors on the vote channel; the server relays them to joining workers on the
         *                 result channel with {@code streamId + 1}. Neither may be the vote or result stream id. Default
         *                 (0): {@code voteStreamId + }{@link Configuration#HANDOVER_STREAM_OFFSET}.
         * @return this for a fluent API.
         */
        public Context handOverStreamId(final int streamId) {
            this.handOverStreamId = streamId;
            return this;
        }

        public int handOverStreamId() {
            return handOverStreamId;
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
         * @param pauseNs a gap between two duty cycles longer than this means the server's process did not run (stopped, a
         *                long GC pause, a stalled host): the open round's deadline moves on by the gap, since the workers'
         *                votes may be waiting in the driver (default {@value #PAUSE_NS_DEFAULT} ns; the agent's idle strategy
         *                parks for at most 1 ms).
         * @return this for a fluent API.
         */
        public Context pauseNs(final long pauseNs) {
            this.pauseNs = pauseNs;
            return this;
        }

        public long pauseNs() {
            return pauseNs;
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

        /**
         * @param minVoters the quorum: a round whose deadline passes with fewer workers' votes is aborted
         *                  ({@code QuorumLostException} on the workers); default (0) a majority, {@code workers / 2 + 1}.
         * @return this for a fluent API.
         */
        public Context minVoters(final int minVoters) {
            this.minVoters = minVoters;
            return this;
        }

        public int minVoters() {
            return minVoters;
        }

        /**
         * @param helloMaxSkewMs how far a HELLO's timestamp may be from this server's clock.
         * @return this for a fluent API.
         */
        public Context helloMaxSkewMs(final long helloMaxSkewMs) {
            this.helloMaxSkewMs = helloMaxSkewMs;
            return this;
        }

        public long helloMaxSkewMs() {
            return helloMaxSkewMs;
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

        /**
         * @param idleStrategy how a launched server's thread idles between duty cycles (default: a new
         *                     {@link BackoffIdleStrategy}; one per server, as an idle strategy has state).
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
         * @param errorHandler what a launched server's thread does with an exception of the duty cycle (default: log it
         *                     at ERROR and go on).
         * @return this for a fluent API.
         */
        public Context errorHandler(final ErrorHandler errorHandler) {
            this.errorHandler = errorHandler;
            return this;
        }

        public ErrorHandler errorHandler() {
            return errorHandler;
        }
    }

    private static void logError(final Throwable ex) {
        System.getLogger(AggregationServer.class.getName()).log(System.Logger.Level.ERROR, "aggregation server error", ex);
    }
}
