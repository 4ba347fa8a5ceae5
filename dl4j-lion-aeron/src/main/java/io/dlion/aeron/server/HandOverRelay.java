package io.dlion.aeron.server;

import io.aeron.Aeron;
import io.aeron.Counter;
import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.wire.HandOverBeginFlyweight;
import io.dlion.aeron.wire.HandOverChunkFlyweight;
import io.dlion.aeron.wire.Hmac;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;

/**
 * The server's relay of hand-overs: a donor sends a joining worker the job's state through the server, which passes
 * every frame on unchanged. So a worker never needs to reach another worker, and no directory is shared: the donor
 * already reaches the server (its votes), the joining worker already hears from it (its results).
 * <pre>
 *   donor --HANDOVER_BEGIN, HANDOVER_CHUNK...--> vote channel, hand-over stream S --> relay
 *   relay --same frames--> result channel, stream S + 1 --> joining worker (the only subscriber of that stream)
 * </pre>
 * A transfer starts with a {@link HandOverBeginFlyweight}: of this job, one joining worker, a donor that is not the
 * joining worker and, when the job has a secret, a valid HMAC of it. That binds the Aeron session it came from to the
 * transfer; its {@link HandOverChunkFlyweight}s are passed on only from that session, in order, up to the payload
 * length the begin frame named. Anything else is dropped and counted. The joining worker checks the length, the
 * SHA-256 digest and the HMAC end to end. A frame the outgoing publication does not take now (no subscriber yet, back
 * pressure) stays in the incoming log and is offered again on the next duty cycle, which back-pressures the donor.
 * <p>
 * Not thread-safe: the server's agent thread only.
 */
final class HandOverRelay implements AutoCloseable {
    private final int jobId;
    private final int workers;
    private final Hmac mac;
    private final int fragmentLimit;
    private final Subscription subscription;
    private final ExclusivePublication publication;
    private final Counter framesRelayed;
    private final Counter bytesRelayed;
    private final Counter framesRejected;
    private final MessageHeaderFlyweight header = new MessageHeaderFlyweight();
    private final HandOverBeginFlyweight begin = new HandOverBeginFlyweight();
    private final HandOverChunkFlyweight chunk = new HandOverChunkFlyweight();
    private final Int2ObjectHashMap<Transfer> transfers = new Int2ObjectHashMap<>();
    private final ControlledFragmentHandler handler = this::onFragment;

    /** A transfer bound to the donor's Aeron session. */
    private static final class Transfer {
        int joiningWorker;
        long round;
        int donor;
        long length;
        long relayed;
    }

    /**
     * @param aeron         client to add the subscription, publication and counters with.
     * @param inChannel     the server's vote channel: donors send here.
     * @param outChannel    the server's result channel: joining workers subscribe here.
     * @param streamId      the hand-over stream id on the vote channel; the relayed frames go out on {@code streamId + 1}.
     * @param jobId         of the job.
     * @param workers       of the job.
     * @param slice         index of the server's slice (for the counters' labels).
     * @param secret        the job's secret, or null when it has none.
     * @param fragmentLimit fragments read per duty cycle.
     */
    HandOverRelay(final Aeron aeron, final String inChannel, final String outChannel, final int streamId, final int jobId, final int workers,
        final int slice, final byte[] secret, final int fragmentLimit) {
        this.jobId = jobId;
        this.workers = workers;
        this.mac = secret == null ? null : HandOverBeginFlyweight.mac(secret);
        this.fragmentLimit = fragmentLimit;
        final String prefix = "dlion-server job=" + jobId + " slice=" + slice + ": ";
        Subscription sub = null;
        ExclusivePublication pub = null;
        Counter relayed = null;
        Counter bytes = null;
        Counter rejected = null;
        try {
            sub = aeron.addSubscription(inChannel, streamId);
            pub = aeron.addExclusivePublication(outChannel, streamId + 1);
            relayed = aeron.addCounter(Configuration.SERVER_COUNTER_TYPE_ID, prefix + "hand-over frames relayed");
            bytes = aeron.addCounter(Configuration.SERVER_COUNTER_TYPE_ID, prefix + "hand-over bytes relayed (payload)");
            rejected = aeron.addCounter(Configuration.SERVER_COUNTER_TYPE_ID, prefix + "hand-over frames rejected");
        } catch (final RuntimeException ex) {
            CloseHelper.quietCloseAll(rejected, bytes, relayed, pub, sub);
            throw ex;
        }
        this.subscription = sub;
        this.publication = pub;
        this.framesRelayed = relayed;
        this.bytesRelayed = bytes;
        this.framesRejected = rejected;
    }

    /** @return work done: frames read. */
    int doWork() {
        return subscription.controlledPoll(handler, fragmentLimit);
    }

    /** @return frames passed on to the joining workers. */
    Counter framesRelayed() {
        return framesRelayed;
    }

    /** @return payload bytes passed on. */
    Counter bytesRelayed() {
        return bytesRelayed;
    }

    /** @return frames dropped: malformed, of another job, unauthenticated, out of order or from an unbound session. */
    Counter framesRejected() {
        return framesRejected;
    }

    private ControlledFragmentHandler.Action onFragment(final DirectBuffer buffer, final int offset, final int length, final Header h) {
        if (h.flags() != FrameDescriptor.UNFRAGMENTED || length < MessageHeaderFlyweight.HEADER_LENGTH
            || length > publication.maxPayloadLength()) {
            return reject();
        }
        final MessageHeaderFlyweight msg = header.wrapForRead(buffer, offset);
        if (msg.magic() != (MessageHeaderFlyweight.MAGIC & 0xFF) || msg.version() != MessageHeaderFlyweight.VERSION || msg.jobId() != jobId) {
            return reject();
        }
        final int joining = msg.joiningWorker();
        if (joining < 0 || joining >= workers || msg.workerId() >= workers || joining == msg.workerId()) {
            return reject();
        }
        if (msg.type() == MessageType.HANDOVER_BEGIN) {
            return onBegin(buffer, offset, length, h.sessionId());
        }
        if (msg.type() == MessageType.HANDOVER_CHUNK && length > HandOverChunkFlyweight.DATA_OFFSET) {
            return onChunk(buffer, offset, length, h.sessionId());
        }
        return reject();
    }

    private ControlledFragmentHandler.Action onBegin(final DirectBuffer buffer, final int offset, final int length, final int sessionId) {
        final HandOverBeginFlyweight frame = begin.wrapForRead(buffer, offset);
        if (!frame.hasValidLength(length) || frame.payloadLength() <= 0 || frame.firstRound() < 0 || (mac != null && !frame.verify(mac))) {
            return reject();
        }
        final ControlledFragmentHandler.Action action = forward(buffer, offset, length, 0);
        if (action == ControlledFragmentHandler.Action.CONTINUE) {
            final Transfer t = new Transfer();
            t.joiningWorker = frame.joiningWorker();
            t.round = frame.firstRound();
            t.donor = frame.donor();
            t.length = frame.payloadLength();
            transfers.put(sessionId, t);
        }
        return action;
    }

    private ControlledFragmentHandler.Action onChunk(final DirectBuffer buffer, final int offset, final int length, final int sessionId) {
        final HandOverChunkFlyweight frame = chunk.wrapForRead(buffer, offset);
        final Transfer t = transfers.get(sessionId);
        final int piece = length - HandOverChunkFlyweight.DATA_OFFSET;
        if (t == null || t.joiningWorker != frame.joiningWorker() || t.round != frame.firstRound() || t.donor != frame.donor()
            || frame.payloadOffset() != t.relayed || t.relayed + piece > t.length) {
            return reject();
        }
        final ControlledFragmentHandler.Action action = forward(buffer, offset, length, piece);
        if (action == ControlledFragmentHandler.Action.CONTINUE) {
            t.relayed += piece;
            if (t.relayed == t.length) {
                transfers.remove(sessionId);
            }
        }
        return action;
    }

    private ControlledFragmentHandler.Action forward(final DirectBuffer buffer, final int offset, final int length, final int payload) {
        final long result = publication.offer(buffer, offset, length);
        if (result > 0) {
            framesRelayed.incrementPlain();
            bytesRelayed.getAndAddPlain(payload);
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        if (result == Publication.BACK_PRESSURED || result == Publication.NOT_CONNECTED || result == Publication.ADMIN_ACTION) {
            return ControlledFragmentHandler.Action.ABORT;
        }
        return reject();
    }

    private ControlledFragmentHandler.Action reject() {
        framesRejected.incrementPlain();
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    @Override
    public void close() {
        CloseHelper.closeAll(framesRejected, bytesRelayed, framesRelayed, publication, subscription);
    }
}
