package io.dlion.aeron;

import java.util.Arrays;
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
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.codec.DownlinkEncoding;
import io.dlion.codec.SignEncoding;
import io.dlion.codec.TernaryEncoding;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochClock;
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
 * Who may vote: a worker's HELLO (with an HMAC-SHA256 of the job's secret when {@link Context#secret(byte[])} is
 * set) binds its worker id to the Aeron session it came from; a vote from any other session is rejected as
 * {@link RejectReason#UNAUTHENTICATED}. A new valid HELLO (a restarted worker) moves the binding.
 * <p>
 * Rounds: the first vote of the next round (the current one + 1, or on a fresh server the round a worker's HELLO
 * named) opens it once the current round is complete; a vote of a closed round is rejected as
 * {@link RejectReason#STALE_ROUND}, of a later one as {@link RejectReason#FUTURE_ROUND}. A chunk is voted as soon
 * as every <em>active</em> worker's vote for it is in; the first chunk voted fixes the round's voters.
 * <p>
 * Deadline and quorum: when a round makes no progress for {@link Context#roundTimeoutNs()} (since it opened or since
 * its last published chunk), the active workers missing from its oldest open chunk are dropped (counted in
 * {@link ServerCounters#workersDropped()}) and the round goes on with the workers present, provided they are at least
 * {@link Context#minVoters()}; otherwise the round is aborted with a {@code ROUND_ABORT} message (workers throw
 * {@link QuorumLostException}). A dropped worker's later votes of that round are rejected as
 * {@link RejectReason#LATE}; it reads the round's result from the broadcast like everyone else, and becomes active
 * again when its vote for a round arrives before that round's voters are fixed, or when it says HELLO again (a restarted
 * worker), from the next round whose voters are not fixed yet. Every result frame carries the
 * mask of the workers whose votes it counts: a worker dropped in the middle of a round is counted in the chunks voted
 * before the deadline and not in the later ones, so with {@link VoteRule#AVERAGE} one round's chunks can count
 * different numbers of voters; workers apply each chunk with its own count ({@link AeronVoteExchange},
 * {@code RoundResult.averageSegments}). Every rejected message is counted by reason in {@link ServerCounters}
 * and never enters a vote.
 * <p>
 * Rejoin: a HELLO whose round is {@link MessageHeaderFlyweight#JOIN_ROUND} comes from a restarted worker without
 * parameters. The server names its first round R (highest round opened + 2) and a donor (the lowest live worker) in a
 * {@code JOIN_NOTICE} broadcast before any further result, and waits for the worker again from round R on; the donor
 * hands it its parameters as of the start of round R (see {@link AeronVoteExchange#awaitJoin(long)}).
 * <p>
 * Run it on an {@code AgentRunner} (dedicated thread) or an {@code AgentInvoker} (tests, one thread).
 */
public final class AggregationServer implements Agent, AutoCloseable {
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

    private final HelloCredentials credentials;
    private final int[] sessionOf;
    private final long[] lastHelloMs;
    private final long[] lastHelloNonce;
    private final long[] helloRound;
    private final long[] joinRound;
    private final int[] joinDonor;
    private long boundMask;
    private long activeMask;
    private long joinPendingMask;
    private long noticeMask;

    private long currentRound = -1;
    private boolean roundOpen;
    private boolean roundCompleted;
    private long progressNs;
    private long roundMask;
    private int baseChunk;
    private boolean abortPending;
    private long abortRound;
    private long abortMask;

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
        this.activeMask = allWorkersMask;
        this.credentials = ctx.secret == null ? null : new HelloCredentials(ctx.secret);
        this.sessionOf = new int[workers];
        this.lastHelloMs = new long[workers];
        this.lastHelloNonce = new long[workers];
        this.helloRound = new long[workers];
        this.joinRound = new long[workers];
        this.joinDonor = new int[workers];
        Arrays.fill(lastHelloMs, Long.MIN_VALUE);

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
        final int planes = majority ? 2 : VoteAggregator.planes(workers);
        this.slots = new ChunkSlot[ctx.windowChunks];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new ChunkSlot(workers, ctx.chunkWords, planes);
        }
    }

    @Override
    public String roleName() {
        return "dlion-server-job" + ctx.jobId + "-shard" + ctx.shard;
    }

    @Override
    public int doWork() {
        int work = sendAbort();
        work += sendNoticesThenResults();
        work += subscription.controlledPoll(fragmentHandler, ctx.fragmentLimit);
        work += sendNoticesThenResults();
        if (roundOpen && ctx.nanoClock.nanoTime() - progressNs > ctx.roundTimeoutNs) {
            onDeadline();
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

    /** @return workers the next round waits for: every worker not dropped for missing a deadline. */
    public long activeMask() {
        return activeMask;
    }

    /** @return workers whose HELLO was accepted, each bound to the Aeron session it came from. */
    public long joinedMask() {
        return boundMask;
    }

    /** @return true when the result publication has at least one connected subscriber. */
    public boolean isConnected() {
        return publication.isConnected();
    }

    private ControlledFragmentHandler.Action onFragment(final DirectBuffer buffer, final int offset, final int length, final Header header) {
        return onMessage(buffer, offset, length, header.flags(), header.sessionId());
    }

    /**
     * Handle one message as if it came off the vote subscription: the server's whole decoder, for tests that feed
     * it frames directly (fuzzing) on the thread that runs the agent.
     *
     * @param buffer    holding the message.
     * @param offset    of the message.
     * @param length    of the message.
     * @param flags     Aeron frame flags ({@code FrameDescriptor.UNFRAGMENTED} for a whole message).
     * @param sessionId Aeron session the message came from.
     * @return {@code ABORT} when the message must be offered again later (its round or chunk is not open yet),
     *     otherwise {@code CONTINUE} (accepted, or rejected and counted).
     */
    ControlledFragmentHandler.Action onMessage(final DirectBuffer buffer, final int offset, final int length, final byte flags,
        final int sessionId) {
        final ControlledFragmentHandler.Action action = handle(buffer, offset, length, flags, sessionId);
        if (action != ControlledFragmentHandler.Action.ABORT) {
            counters.bytesIn().getAndAddPlain(ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH));
        }
        return action;
    }

    private ControlledFragmentHandler.Action handle(final DirectBuffer buffer, final int offset, final int length, final byte flags,
        final int sessionId) {
        if (flags != FrameDescriptor.UNFRAGMENTED || length < MessageHeaderFlyweight.HEADER_LENGTH) {
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
            return onHello(msg, length, worker, sessionId);
        }
        if (type != MessageType.VOTE_CHUNK) {
            return reject(RejectReason.UNEXPECTED_TYPE);
        }
        if (msg.shard() != ctx.shard) {
            return reject(RejectReason.WRONG_SHARD);
        }
        final int chunk = layout.chunkAt(msg.chunkWordOffset());
        if (chunk < 0 || msg.chunkWords() != layout.wordsOf(chunk)) {
            return reject(RejectReason.OUT_OF_RANGE);
        }
        if (msg.encoding() != Encoding.SIGN_BITS) {
            return reject(RejectReason.MALFORMED);
        }
        final int words = msg.chunkWords();
        final long chunkParams = layout.paramsOf(msg.chunkWordOffset(), words);
        if (length != MessageHeaderFlyweight.HEADER_LENGTH + Encoding.bodyLength(Encoding.SIGN_BITS, words, chunkParams, 1)) {
            return reject(RejectReason.BAD_LENGTH);
        }
        final long bit = 1L << worker;
        if ((boundMask & bit) == 0 || sessionOf[worker] != sessionId) {
            return reject(RejectReason.UNAUTHENTICATED);
        }
        final long round = msg.round();
        if ((joinPendingMask & bit) != 0 && round < joinRound[worker]) {
            // a worker told to rejoin: its votes count again from its join round, and must not open an earlier one
            return reject(RejectReason.STALE_ROUND);
        }
        if (!roundOpen || round != currentRound) {
            if (round <= currentRound) {
                return reject(RejectReason.STALE_ROUND);
            }
            if (round > (currentRound >= 0 ? currentRound + 1 : helloRound[worker])) {
                return reject(RejectReason.FUTURE_ROUND);
            }
            if (roundOpen || abortPending) {
                return ControlledFragmentHandler.Action.ABORT;
            }
            openRound(round);
        }
        if (chunk < baseChunk) {
            return reject(RejectReason.DUPLICATE);
        }
        if (roundMask != 0 && (roundMask & bit) == 0) {
            return reject(RejectReason.LATE);
        }
        if (chunk >= baseChunk + slots.length) {
            return ControlledFragmentHandler.Action.ABORT;
        }
        final ChunkSlot slot = slots[chunk % slots.length];
        if (slot.chunk != chunk) {
            slot.reset(chunk);
        }
        if ((slot.arrived & bit) != 0 || slot.voted) {
            return reject(RejectReason.DUPLICATE);
        }
        SignEncoding.INSTANCE.decode(WireBuffers.byteBuffer(buffer), WireBuffers.index(buffer, msg.bodyOffset()), chunkParams, 0, words,
            slot.voteView[worker]);
        slot.arrived |= bit;
        if (roundMask == 0 && (activeMask & bit) == 0) {
            activeMask |= bit;
            counters.workersRejoined().incrementPlain();
        }
        tryVote(slot);
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private ControlledFragmentHandler.Action onHello(final MessageHeaderFlyweight msg, final int length, final int worker, final int sessionId) {
        if (msg.shard() != ctx.shard) {
            return reject(RejectReason.WRONG_SHARD);
        }
        if (msg.paramCount() != ctx.paramCount) {
            return reject(RejectReason.PARAM_COUNT_MISMATCH);
        }
        final int encoding = msg.encoding();
        if (encoding != Encoding.NONE && encoding != Encoding.HMAC_SHA256) {
            return reject(RejectReason.MALFORMED);
        }
        if (length != MessageHeaderFlyweight.HEADER_LENGTH + Encoding.bodyLength(encoding, 0, 0, 0)) {
            return reject(RejectReason.BAD_LENGTH);
        }
        if (credentials != null) {
            if (encoding != Encoding.HMAC_SHA256) {
                return reject(RejectReason.BAD_CREDENTIALS);
            }
            final DirectBuffer buffer = msg.buffer();
            final long timestamp = HelloCredentials.timestampMs(buffer, msg.offset());
            final long nonce = HelloCredentials.nonce(buffer, msg.offset());
            if (Math.abs(timestamp - ctx.epochClock.time()) > ctx.helloMaxSkewMs
                || timestamp < lastHelloMs[worker] || (timestamp == lastHelloMs[worker] && nonce == lastHelloNonce[worker])
                || !credentials.verify(buffer, msg.offset())) {
                return reject(RejectReason.BAD_CREDENTIALS);
            }
            lastHelloMs[worker] = timestamp;
            lastHelloNonce[worker] = nonce;
        }
        sessionOf[worker] = sessionId;
        boundMask |= 1L << worker;
        counters.workersJoined().incrementPlain();
        if (msg.round() == MessageHeaderFlyweight.JOIN_ROUND) {
            announceJoin(worker);
        } else {
            helloRound[worker] = msg.round();
            activeMask |= 1L << worker;
            if (!roundCompleted) {
                resyncLaggards(worker);
            }
        }
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    /**
     * A fresh server (no round completed yet) whose workers' HELLOs name different rounds: the old server died after
     * some workers had received all of round r's result and before others had. Nobody can give the lagging workers
     * round r's result any more, so they are told to rejoin (JOIN_NOTICE naming themselves; their exchange then throws
     * {@link RejoinRequiredException}), and a round r they opened is dropped so that the others go on with r + 1.
     */
    private void resyncLaggards(final int worker) {
        long newest = -1;
        for (long m = boundMask & ~joinPendingMask; m != 0; m &= m - 1) {
            newest = Math.max(newest, helloRound[Long.numberOfTrailingZeros(m)]);
        }
        for (long m = boundMask & ~joinPendingMask; m != 0; m &= m - 1) {
            final int w = Long.numberOfTrailingZeros(m);
            if (helloRound[w] < newest) {
                counters.laggardsResynced().incrementPlain();
                announceJoin(w);
            }
        }
        if (roundOpen && currentRound < newest && roundMask == 0) {
            // only laggards voted in it: close it unvoted; the next round is currentRound + 1 = the others' round
            roundOpen = false;
            for (final ChunkSlot slot : slots) {
                slot.reset(-1);
            }
        }
    }

    /**
     * A worker (re)joins a running job and has no parameters yet: it is waited for again from round R = the highest
     * round opened + 2 (before any result of round R - 1 goes out, the JOIN_NOTICE does, so every worker reads it while
     * awaiting round R - 1 at the latest), and the lowest live worker is named donor: it hands the joining worker the
     * parameters it holds when round R starts. Votes of the worker's previous incarnation are not waited for any more.
     */
    private void announceJoin(final int worker) {
        final long bit = 1L << worker;
        activeMask &= ~bit;
        long latest = currentRound;
        if (latest < 0) {
            // a fresh server: the others' HELLOs name the round they vote in next
            for (long m = boundMask & ~bit & ~joinPendingMask; m != 0; m &= m - 1) {
                latest = Math.max(latest, helloRound[Long.numberOfTrailingZeros(m)] - 1);
            }
        }
        final long first = latest + 2;
        joinRound[worker] = first;
        helloRound[worker] = first;
        final long donors = boundMask & activeMask & ~joinPendingMask;
        joinDonor[worker] = donors == 0 ? MessageHeaderFlyweight.SERVER_WORKER_ID : Long.numberOfTrailingZeros(donors);
        joinPendingMask |= bit;
        noticeMask |= bit;
        counters.joinsAnnounced().incrementPlain();
        if (roundOpen && roundMask != 0 && (roundMask & bit) != 0 && Long.bitCount(roundMask & ~bit) >= ctx.minVoters) {
            roundMask &= ~bit;
            voteWindow();
        } else if (roundOpen && roundMask == 0) {
            voteWindow();
        }
    }

    private ControlledFragmentHandler.Action reject(final RejectReason reason) {
        counters.rejected(reason).incrementPlain();
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    private void openRound(final long round) {
        for (long m = joinPendingMask; m != 0; m &= m - 1) {
            final int w = Long.numberOfTrailingZeros(m);
            if (joinRound[w] <= round) {
                activeMask |= 1L << w;
                joinPendingMask &= ~(1L << w);
            }
        }
        currentRound = round;
        roundOpen = true;
        progressNs = ctx.nanoClock.nanoTime();
        roundMask = 0;
        baseChunk = 0;
        for (final ChunkSlot slot : slots) {
            slot.reset(-1);
        }
    }

    private void tryVote(final ChunkSlot slot) {
        final long required = roundMask != 0 ? roundMask : activeMask;
        if (!slot.voted && (slot.arrived & required) == required) {
            final long voters = roundMask != 0 ? slot.arrived & roundMask : slot.arrived;
            if (roundMask == 0) {
                roundMask = voters;
            }
            vote(slot, layout.wordsOf(slot.chunk), voters);
        }
    }

    /**
     * No progress for a round timeout: the workers missing from the oldest open chunk are dropped and the round goes on
     * with the others, or, with fewer than the quorum, the round is aborted.
     */
    private void onDeadline() {
        final long now = ctx.nanoClock.nanoTime();
        final ChunkSlot base = slots[baseChunk % slots.length];
        if (base.chunk == baseChunk && base.voted) {
            progressNs = now;
            return;
        }
        final long arrived = base.chunk == baseChunk ? base.arrived : 0;
        final long required = roundMask != 0 ? roundMask : activeMask;
        final long present = roundMask != 0 ? arrived & roundMask : arrived;
        final long missing = required & ~present;
        activeMask &= ~missing;
        counters.workersDropped().getAndAddPlain(Long.bitCount(missing));
        if (Long.bitCount(present) < ctx.minVoters) {
            counters.roundsAbandoned().incrementPlain();
            abortPending = true;
            abortRound = currentRound;
            abortMask = present;
            roundOpen = false;
            return;
        }
        roundMask = present;
        progressNs = now;
        voteWindow();
    }

    /** Vote every chunk of the window whose required votes are in (after the required workers changed). */
    private void voteWindow() {
        for (int c = baseChunk; c < Math.min(layout.chunkCount(), baseChunk + slots.length); c++) {
            final ChunkSlot slot = slots[c % slots.length];
            if (slot.chunk == c) {
                tryVote(slot);
            }
        }
    }

    /** JOIN_NOTICEs go out before any further result frame, so no worker reads a result of round R - 1 before them. */
    private int sendNoticesThenResults() {
        int work = 0;
        while (noticeMask != 0) {
            final int w = Long.numberOfTrailingZeros(noticeMask);
            final long result = publication.tryClaim(MessageHeaderFlyweight.HEADER_LENGTH, bufferClaim);
            if (result < 0) {
                onOfferFailure(result);
                return work;
            }
            outHeader.wrap(bufferClaim.buffer(), bufferClaim.offset())
                .writeHeader(MessageType.JOIN_NOTICE, Encoding.NONE)
                .jobId(ctx.jobId)
                .round(joinRound[w])
                .chunkWordOffset(layout.fromWord())
                .chunkWords(0)
                .workerId(joinDonor[w])
                .shard(ctx.shard)
                .voterMask(1L << w);
            bufferClaim.commit();
            counters.bytesOut().getAndAddPlain(ChunkLayout.frameLength(0));
            noticeMask &= ~(1L << w);
            work++;
        }
        return work + sendResults();
    }

    private int sendAbort() {
        if (!abortPending) {
            return 0;
        }
        final long result = publication.tryClaim(MessageHeaderFlyweight.HEADER_LENGTH, bufferClaim);
        if (result < 0) {
            onOfferFailure(result);
            return 0;
        }
        outHeader.wrap(bufferClaim.buffer(), bufferClaim.offset())
            .writeHeader(MessageType.ROUND_ABORT, Encoding.NONE)
            .jobId(ctx.jobId)
            .round(abortRound)
            .chunkWordOffset(layout.fromWord())
            .chunkWords(0)
            .workerId(MessageHeaderFlyweight.SERVER_WORKER_ID)
            .shard(ctx.shard)
            .voterMask(abortMask);
        bufferClaim.commit();
        counters.bytesOut().getAndAddPlain(ChunkLayout.frameLength(0));
        abortPending = false;
        return 1;
    }

    private void vote(final ChunkSlot slot, final int words, final long voterMask) {
        int voters = 0;
        for (long m = voterMask; m != 0; m &= m - 1) {
            slot.present[voters++] = slot.votes[Long.numberOfTrailingZeros(m)];
        }
        slot.voterMask = voterMask;
        slot.voters = voters;
        slot.downlink = DownlinkEncoding.of(ctx.rule, voters);
        if (majority) {
            final int ties = VoteAggregator.majority(slot.present, voters, 0, words, slot.out[0], slot.out[1]);
            counters.ties().getAndAddPlain(ties);
            slot.encoding = (voters & 1) == 1 ? Encoding.SIGN_BITS : Encoding.TERNARY;
        } else {
            VoteAggregator.count(slot.present, voters, 0, words, slot.out);
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
            progressNs = ctx.nanoClock.nanoTime();
            work++;
            if (baseChunk == layout.chunkCount()) {
                roundOpen = false;
                roundCompleted = true;
                counters.votersLastRound().setRelease(Long.bitCount(roundMask));
                counters.rounds().incrementRelease();
            } else {
                final ChunkSlot next = slots[baseChunk % slots.length];
                if (next.chunk == baseChunk) {
                    tryVote(next);
                }
            }
        }
        return work;
    }

    private boolean sendSlot(final ChunkSlot slot) {
        final int chunkWordOffset = layout.wordOffset(slot.chunk);
        final int words = layout.wordsOf(slot.chunk);
        final long chunkParams = layout.paramsOf(chunkWordOffset, words);
        final int maxFrameWords = maxFrameWords(slot.encoding, slot.voters);
        while (slot.sentWords < words) {
            final int from = slot.sentWords;
            final int frameWords = Math.min(words - from, maxFrameWords);
            final int bodyLength = slot.downlink.encodedLength(chunkParams, from, from + frameWords);
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
            slot.downlink.encode(slot.out, chunkParams, from, from + frameWords, WireBuffers.byteBuffer(buffer),
                WireBuffers.index(buffer, outHeader.bodyOffset()));
            bufferClaim.commit();
            counters.bytesOut().getAndAddPlain(ChunkLayout.frameLength(bodyLength));
            slot.sentWords += frameWords;
        }
        return true;
    }

    /** Largest frame of a result chunk in words: a whole chunk for signs, whole 5-word groups for ternary bytes. */
    private int maxFrameWords(final int encoding, final int voters) {
        switch (encoding) {
            case Encoding.SIGN_BITS:
                return maxBodyLength / Long.BYTES;
            case Encoding.TERNARY:
                return maxBodyLength / (TernaryEncoding.WORD_ALIGNMENT * Long.SIZE / Encoding.TRITS_PER_BYTE) * TernaryEncoding.WORD_ALIGNMENT;
            default:
                return maxBodyLength / (VoteAggregator.planes(voters) * Long.BYTES);
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

    /** One chunk in flight; every array is chunk-local (word 0 = the chunk's first word). */
    private static final class ChunkSlot {
        final long[][] votes;
        final long[][][] voteView;
        final long[][] present;
        final long[][] out;
        int chunk = -1;
        long arrived;
        boolean voted;
        long voterMask;
        int voters;
        int encoding;
        DownlinkEncoding downlink;
        int sentWords;

        ChunkSlot(final int workers, final int chunkWords, final int planes) {
            votes = new long[workers][chunkWords];
            voteView = new long[workers][][];
            for (int w = 0; w < workers; w++) {
                voteView[w] = new long[][] {votes[w]};
            }
            present = new long[workers][];
            out = new long[planes][chunkWords];
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
        private int minVoters;
        private byte[] secret;
        private long helloMaxSkewMs = Configuration.HELLO_MAX_SKEW_MS_DEFAULT;
        private EpochClock epochClock = SystemEpochClock.INSTANCE;

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
            if (minVoters == 0) {
                minVoters = workers / 2 + 1;
            }
            if (minVoters < 1 || minVoters > workers) {
                throw new IllegalArgumentException("minVoters must be in [1, workers=" + workers + "], got " + minVoters);
            }
            if (secret != null && secret.length < HelloCredentials.MIN_SECRET_LENGTH) {
                throw new IllegalArgumentException("secret must be at least " + HelloCredentials.MIN_SECRET_LENGTH + " bytes, got "
                    + secret.length);
            }
            if (helloMaxSkewMs < 0) {
                throw new IllegalArgumentException("helloMaxSkewMs must be >= 0, got " + helloMaxSkewMs);
            }
            Objects.requireNonNull(epochClock, "epochClock");
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

        /**
         * @param minVoters the quorum: a round whose deadline passes with fewer workers' votes is aborted
         *                  ({@link QuorumLostException} on the workers); default (0) a majority, {@code workers / 2 + 1}.
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
         * @param secret the job's shared secret (at least 16 bytes): HELLOs must carry its HMAC-SHA256; null (default)
         *               accepts any HELLO (votes are still bound to the Aeron session of their worker's HELLO).
         * @return this for a fluent API.
         */
        public Context secret(final byte[] secret) {
            this.secret = secret == null ? null : secret.clone();
            return this;
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
    }
}
