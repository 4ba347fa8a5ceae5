package io.dlion.aeron.server;

import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.logbuffer.BufferClaim;
import io.dlion.aeron.Channels;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.FrameMac;
import io.dlion.aeron.wire.HelloAckFlyweight;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.aeron.wire.MeanChunkFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.ResultChunkFlyweight;
import io.dlion.aeron.wire.RoundAbortFlyweight;
import io.dlion.codec.DownlinkEncoding;
import io.dlion.codec.TernaryEncoding;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoterSet;
import org.agrona.MutableDirectBuffer;

/**
 * Everything one slice's server sends, on its result publication: result chunks (or means), HELLO_ACKs, JOIN_NOTICEs and ROUND_ABORTs, each
 * claimed with {@code tryClaim} and written by its frame flyweight in place (then tagged, when the job's frames carry
 * {@link FrameMac} tags).
 * <p>
 * With a local publication (IPC, for a worker in the server's own process) every frame but a HELLO_ACK goes out on both:
 * claimed on each publication that is connected, written once, copied into the other claim and tagged with each
 * publication's session, then committed on both, or on neither (a refused claim aborts the other). A HELLO_ACK names the
 * session it goes out on, so it goes only on the publication of the transport the worker's HELLO came by.
 * <p>
 * An offer that is not accepted is never retried in a loop: {@code BACK_PRESSURED}, {@code ADMIN_ACTION} and
 * {@code NOT_CONNECTED} are counted ({@link ServerCounters#backPressure()}) and the send methods return false, so the
 * duty cycle offers again on its next turn; the round does not progress meanwhile, which bounds the wait by the round
 * deadline. {@code CLOSED} and {@code MAX_POSITION_EXCEEDED} cannot recover and throw. A result chunk too large for one
 * frame (count planes of many voters) goes as several frames; the publisher remembers how far it got.
 * Not thread-safe: the server's agent thread only.
 */
final class ResultPublisher {
    private final ExclusivePublication publication;
    /** The IPC publication for a worker in this process, or null. */
    private final ExclusivePublication local;
    private final int jobId;
    private final int slice;
    private final ChunkLayout layout;
    private final ServerCounters counters;
    private final int maxBodyLength;
    private final FrameMac frameMac;
    private final int tag;
    private final BufferClaim bufferClaim = new BufferClaim();
    private final BufferClaim localClaim = new BufferClaim();
    /** What the last {@link #claim} took: the network publication's claim, the local one's. */
    private boolean claimed;
    private boolean localClaimed;
    private final ResultChunkFlyweight result = new ResultChunkFlyweight();
    private final MeanChunkFlyweight meanOut = new MeanChunkFlyweight();
    private final JoinNoticeFlyweight notice = new JoinNoticeFlyweight();
    private final RoundAbortFlyweight abort = new RoundAbortFlyweight();
    private final HelloAckFlyweight ack = new HelloAckFlyweight();

    private boolean abortPending;
    private long abortRound;
    private final VoterSet abortVoters;
    private long sendingRound = -1;
    private int sendingChunk = -1;
    private int sentWords;

    /**
     * @param publication the result publication; not closed here.
     * @param local       the IPC publication for workers in the server's own process, or null; not closed here.
     * @param jobId       of the job.
     * @param slice       index of the server's slice.
     * @param layout      the slice's chunk grid.
     * @param workers     of the job: every frame that names workers carries a voter set of {@code ceil(workers / 64)} words.
     * @param counters    where bytes out and offers not accepted are counted.
     * @param frameMac    tags every frame but the HELLO_ACK (which carries its own MAC), or null for untagged frames.
     */
    ResultPublisher(final ExclusivePublication publication, final ExclusivePublication local, final int jobId, final int slice,
        final ChunkLayout layout, final int workers, final ServerCounters counters, final FrameMac frameMac) {
        this.publication = publication;
        this.local = local;
        final int maxFrameLength = Math.min(publication.maxPayloadLength(), Channels.MAX_FRAME_LENGTH);
        if (local != null && local.maxPayloadLength() < maxFrameLength) {
            throw new IllegalArgumentException("the local publication must carry the result publication's frames: max payload "
                + local.maxPayloadLength() + " < " + maxFrameLength);
        }
        this.frameMac = frameMac;
        this.tag = frameMac == null ? 0 : FrameMac.TAG_LENGTH;
        this.jobId = jobId;
        this.slice = slice;
        this.layout = layout;
        this.counters = counters;
        this.abortVoters = new VoterSet(workers);
        this.maxBodyLength = maxFrameLength - MessageHeaderFlyweight.headerLength(abortVoters.wordCount()) - tag;
    }

    /** @return true when a publication has at least one connected subscriber. */
    boolean isConnected() {
        return publication.isConnected() || (local != null && local.isConnected());
    }

    /**
     * Queue the ROUND_ABORT of a round, sent by {@link #publishAbort()}.
     *
     * @param round     the round aborted.
     * @param voters the workers that voted (copied).
     */
    void queueAbort(final long round, final VoterSet voters) {
        abortPending = true;
        abortRound = round;
        abortVoters.copyFrom(voters);
    }

    /** @return true while a ROUND_ABORT waits to be sent: no new round may open before it goes out. */
    boolean isAbortPending() {
        return abortPending;
    }

    /** @return 1 when the pending ROUND_ABORT went out, otherwise 0. */
    int publishAbort() {
        final int length = RoundAbortFlyweight.length(abortVoters.wordCount());
        if (!abortPending || !claim(length + tag)) {
            return 0;
        }
        abort.wrap(frameBuffer(), frameOffset()).encode(jobId, abortRound, layout.fromWord(), slice, abortVoters);
        commitTagged(length);
        abortPending = false;
        return 1;
    }

    /**
     * Answer a worker's accepted HELLO, proving the server: the answer echoes the HELLO's nonce and names this
     * publication's session, signed with the job's secret when there is one.
     *
     * @param worker      the worker answered.
     * @param toLocal     its HELLO came by IPC: answer on the local publication.
     * @param nonce       of its HELLO.
     * @param joinRound   its first round when its join is pending, else {@link HelloAckFlyweight#NO_JOIN}.
     * @param donor       the donor of that join, or {@link JoinNoticeFlyweight#NO_DONOR}.
     * @param paramCount  of the job's vector.
     * @param servingRank the rank whose process serves this slice, or -1.
     * @param credentials of the job's secret, or null.
     * @return true when the answer went out.
     */
    boolean publishHelloAck(final int worker, final boolean toLocal, final long nonce, final long joinRound, final int donor,
        final long paramCount, final int servingRank, final HelloCredentials credentials) {
        final int length = HelloAckFlyweight.length(credentials != null);
        final ExclusivePublication on = toLocal && local != null ? local : publication;
        final BufferClaim claim = on == local ? localClaim : bufferClaim;
        if (!accepted(on.tryClaim(length, claim), on)) {
            return false;
        }
        ack.wrap(claim.buffer(), claim.offset()).encode(jobId, joinRound, layout.fromWord(), donor, worker, slice, paramCount,
            nonce, on.sessionId(), servingRank, credentials);
        claim.commit();
        counters.bytesOut().getAndAddPlain(ChunkLayout.frameLength(length - MessageHeaderFlyweight.HEADER_LENGTH));
        return true;
    }

    /**
     * @param joiningWorker the worker that (re)joins.
     * @param firstRound    the first round it votes in.
     * @param donor         its donor, or {@link JoinNoticeFlyweight#NO_DONOR}.
     * @return true when the JOIN_NOTICE went out.
     */
    boolean publishJoinNotice(final int joiningWorker, final long firstRound, final int donor) {
        if (!claim(JoinNoticeFlyweight.LENGTH + tag)) {
            return false;
        }
        notice.wrap(frameBuffer(), frameOffset()).encode(jobId, firstRound, layout.fromWord(), donor, slice, joiningWorker);
        commitTagged(JoinNoticeFlyweight.LENGTH);
        return true;
    }

    /**
     * Send a voted chunk's result, in as many frames as it needs, continuing where a refused offer stopped.
     *
     * @param round     the round.
     * @param chunk     the chunk voted.
     * @param voters     the workers it counts.
     * @param voterCount how many.
     * @param encoding  of the result: sign bits, ternary or count planes.
     * @param downlink  the result's down-link encoding.
     * @param out       the result's planes, chunk-local.
     * @return true when the whole chunk went out.
     */
    boolean publishResult(final long round, final int chunk, final VoterSet voters, final int voterCount, final int encoding,
        final DownlinkEncoding downlink, final long[][] out) {
        if (round != sendingRound || chunk != sendingChunk) {
            sendingRound = round;
            sendingChunk = chunk;
            sentWords = 0;
        }
        final int chunkWordOffset = layout.wordOffset(chunk);
        final int words = layout.wordsOf(chunk);
        final long chunkParams = layout.paramsOf(chunkWordOffset, words);
        final int maxFrameWords = maxFrameWords(encoding, voterCount);
        while (sentWords < words) {
            final int from = sentWords;
            final int frameWords = Math.min(words - from, maxFrameWords);
            final int length = ResultChunkFlyweight.length(voters.wordCount(), downlink, chunkParams, from, from + frameWords);
            if (!claim(length + tag)) {
                return false;
            }
            result.wrap(frameBuffer(), frameOffset()).encode(encoding, jobId, round, chunkWordOffset + from, frameWords,
                slice, voters, downlink, out, chunkParams, from);
            commitTagged(length);
            sentWords += frameWords;
        }
        sendingChunk = -1;
        return true;
    }

    /**
     * Send an averaged chunk's fp32 mean, one frame (a dense chunk fits one).
     *
     * @param round     the round.
     * @param chunk     the chunk averaged.
     * @param voters the workers it averages.
     * @param mean   the mean, chunk-local.
     * @return true when it went out.
     */
    boolean publishMean(final long round, final int chunk, final VoterSet voters, final float[] mean) {
        final int wordOffset = layout.wordOffset(chunk);
        final int words = layout.wordsOf(chunk);
        final int params = (int) layout.paramsOf(wordOffset, words);
        final int length = MeanChunkFlyweight.length(voters.wordCount(), params);
        if (!claim(length + tag)) {
            return false;
        }
        meanOut.wrap(frameBuffer(), frameOffset()).encode(jobId, round, wordOffset, words, slice, voters, mean, params);
        commitTagged(length);
        return true;
    }

    /** Largest frame of a result chunk in words: a whole chunk for signs, whole 3-word groups for ternary codes. */
    private int maxFrameWords(final int encoding, final int voters) {
        switch (encoding) {
            case Encoding.SIGN_BITS:
                return maxBodyLength / Long.BYTES;
            case Encoding.TERNARY:
                return maxBodyLength / (TernaryEncoding.GROUP_CODE_WORDS * Long.BYTES) * TernaryEncoding.GROUP_WORDS;
            default:
                return maxBodyLength / (VoteAggregator.planes(voters) * Long.BYTES);
        }
    }

    /**
     * Claim a frame on every connected publication, or on none: a claim refused on one (back pressure) aborts the other's,
     * and the frame is offered again on the next duty cycle.
     *
     * @return true when at least one publication took the claim; the frame is written at {@link #frameBuffer()}.
     */
    private boolean claim(final int length) {
        localClaimed = local != null && local.isConnected();
        if (localClaimed) {
            final long position = local.tryClaim(length, localClaim);
            if (position == Publication.NOT_CONNECTED) {
                localClaimed = false;
            } else if (!accepted(position, local)) {
                return false;
            }
        }
        final long position = publication.tryClaim(length, bufferClaim);
        claimed = position >= 0;
        if (!claimed && (position != Publication.NOT_CONNECTED || !localClaimed) && !accepted(position, publication)) {
            if (localClaimed) {
                localClaim.abort();
            }
            return false;
        }
        return true;
    }

    /**
     * @param position an offer's result.
     * @param on       the publication it was offered to.
     * @return true when the offer was taken; false (counted) when it may be offered again later.
     * @throws IllegalStateException when the publication cannot recover.
     */
    private boolean accepted(final long position, final ExclusivePublication on) {
        if (position >= 0) {
            return true;
        }
        if (position == Publication.BACK_PRESSURED || position == Publication.ADMIN_ACTION || position == Publication.NOT_CONNECTED) {
            counters.backPressure().incrementPlain();
            return false;
        }
        if (position == Publication.CLOSED) {
            throw new IllegalStateException("result publication closed: " + on.channel());
        }
        if (position == Publication.MAX_POSITION_EXCEEDED) {
            throw new IllegalStateException("result publication reached its maximum position, restart the server with a larger term-length: "
                + on.channel());
        }
        throw new IllegalStateException("unknown offer result " + position);
    }

    /** @return the buffer the claimed frame is written in: the network publication's claim, else the local one's. */
    private MutableDirectBuffer frameBuffer() {
        return claimed ? bufferClaim.buffer() : localClaim.buffer();
    }

    private int frameOffset() {
        return claimed ? bufferClaim.offset() : localClaim.offset();
    }

    /**
     * Copy the written frame of {@code length} bytes into the other claim, tag each with its publication's session (when
     * frames are tagged), then commit both.
     */
    private void commitTagged(final int length) {
        if (claimed && localClaimed) {
            localClaim.buffer().putBytes(localClaim.offset(), bufferClaim.buffer(), bufferClaim.offset(), length);
        }
        if (frameMac != null) {
            if (claimed) {
                frameMac.sign(bufferClaim.buffer(), bufferClaim.offset(), length, publication.sessionId());
            }
            if (localClaimed) {
                frameMac.sign(localClaim.buffer(), localClaim.offset(), length, local.sessionId());
            }
        }
        if (claimed) {
            bufferClaim.commit();
        }
        if (localClaimed) {
            localClaim.commit();
        }
        counters.bytesOut().getAndAddPlain(ChunkLayout.frameLength(length + tag - MessageHeaderFlyweight.HEADER_LENGTH));
    }
}
