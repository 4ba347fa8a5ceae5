package io.dlion.aeron.client;

import java.util.concurrent.TimeUnit;

import io.aeron.Image;
import io.aeron.Subscription;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.HelloAckFlyweight;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;

/**
 * Which server a slice's link believes: the state machine that proves a slice server's result session, one per
 * {@link SliceLink}.
 * <p>
 * Frames are read only from the result image whose session the server proved with a HELLO_ACK: an answer to one of this
 * worker's last HELLOs (its nonce), naming the session it arrived on and, with the job's secret, signed with it. Until
 * then the link says HELLO at once and then at intervals that start at twice {@link #HELLO_INTERVAL_NS} and double up to
 * {@link #MAX_HELLO_INTERVAL_NS}, and while another image is present every {@link #UNPROVEN_IMAGE_HELLO_INTERVAL_NS};
 * frames of other images are dropped and counted, and an image that has not proven itself within
 * {@link #UNPROVEN_IMAGE_TIMEOUT_NS}, or that sent a forged answer, is rejected ({@link Image#reject}) and counted. A
 * proven image of a new session is a restarted (or moved) server: {@link #onHelloAck} says so, and the link sends the
 * round again. A server that has sent nothing for {@link #SERVER_SILENCE_NS} (since the round started or its last frame)
 * while a result is awaited is greeted again: a restarted server with manual destinations learns this worker's result
 * endpoint only from a HELLO.
 * <p>
 * States: unproven (HELLO at the doubling interval), proven (a session), unproven again after the slice moved to
 * another server ({@link #serverMoved}). It sends nothing itself: {@link #helloDue} says when the link sends a HELLO, and
 * the link reports it with {@link #helloSent}. Not thread-safe (the exchange has one thread).
 */
final class ServerProof {
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
    /** {@link #heardNs()} of a link whose server is not proven. */
    static final long NEVER_HEARD = Long.MIN_VALUE;

    /** What a HELLO_ACK did, {@link #onHelloAck}. */
    enum Answer {
        /** Not an answer to this worker, or to one of its last HELLOs: nothing changes. */
        IGNORED,
        /** Malformed or forged: counted, its image is refused unless it is the proven server's. */
        FORGED,
        /** Proves the session: the server this link already believes, or its first server. */
        PROVEN,
        /** Proves a new session after another was proven, or after the slice moved: the round is sent again. */
        NEW_SERVER
    }

    private final Subscription subscription;
    private final WorkerCounters counters;
    private final int workerId;
    private final int workers;
    private final long paramCount;
    private final long[] nonces = new long[NONCES];
    private int nonceCount;
    private final int[] unprovenSession = new int[TRACKED_IMAGES];
    private final long[] unprovenSinceNs = new long[TRACKED_IMAGES];
    private final boolean[] unprovenRefused = new boolean[TRACKED_IMAGES];
    /** {@link #checkImage} for every image of one read of the subscription's images, made once (no allocation per pass). */
    private final java.util.function.Consumer<Image> checkImage = this::checkImage;
    private long checkNowNs;
    private int refused;
    private int unprovenCount;
    private boolean proven;
    /** Set when the slice moved to another server ({@link #serverMoved}): the round is sent again once that server proves itself. */
    private boolean moved;
    private int provenSession;
    /** The rank whose process serves the proven server, as its answer said, or -1. */
    private int serverRank = -1;
    private boolean forgedAnswer;
    private int forgedSession;
    private long lastHelloNs;
    private long helloIntervalNs = HELLO_INTERVAL_NS;
    private long lastServerFrameNs;

    /**
     * @param subscription the link's result subscription, whose images are proven or refused.
     * @param counters     the worker's Aeron counters.
     * @param workerId     this worker.
     * @param workers      workers of the job.
     * @param paramCount   parameters of the job, which an answer must name.
     * @param nowNs        the clock now: the first HELLO is due at once.
     */
    ServerProof(final Subscription subscription, final WorkerCounters counters, final int workerId, final int workers, final long paramCount,
        final long nowNs) {
        this.subscription = subscription;
        this.counters = counters;
        this.workerId = workerId;
        this.workers = workers;
        this.paramCount = paramCount;
        this.lastHelloNs = nowNs - HELLO_INTERVAL_NS;
    }

    /** @return the rank whose process serves the proven server, as its answer said; -1 when it did not say. */
    int serverRank() {
        return serverRank;
    }

    /** @return true once a server proved its session: its frames are read. */
    boolean isProven() {
        return proven;
    }

    /**
     * @return true after the slice moved to another server ({@link #serverMoved}) that has not answered a HELLO yet: a
     *     rank named by the failover rule that has not proven it serves.
     */
    boolean awaitsMovedServer() {
        return moved && !proven;
    }

    /**
     * @param sessionId the session of a result image.
     * @return true when it is the proven server's.
     */
    boolean isServer(final int sessionId) {
        return proven && sessionId == provenSession;
    }

    /**
     * The slice's server moved to another host: unproven until the new server answers a HELLO, which is due at once. Its
     * silence is counted from when this worker last heard its rank on another slice's link, or from now if it never did:
     * a rank that died together with the previous server, whose last result of the open round this worker holds, has
     * been silent since it sent that result, and is found dead {@code silenceNs} after it, not after the move (a chaos
     * soak's kills of two ranks at once took the silence twice).
     *
     * @param nowNs   the clock.
     * @param heardNs when this worker last heard the new server's rank on another slice's link ({@link #heardNs()}), or
     *                {@link #NEVER_HEARD}.
     */
    void serverMoved(final long nowNs, final long heardNs) {
        proven = false;
        moved = true;
        helloIntervalNs = HELLO_INTERVAL_NS;
        lastServerFrameNs = heardNs == NEVER_HEARD ? nowNs : Math.min(nowNs, heardNs);
        lastHelloNs = nowNs - HELLO_INTERVAL_NS;
    }

    /**
     * @return when the proven server last sent a frame or a round started, whichever is later; {@link #NEVER_HEARD} while
     *     no server is proven.
     */
    long heardNs() {
        return proven ? lastServerFrameNs : NEVER_HEARD;
    }

    /**
     * A frame of the proven server arrived, or a round started: the server's silence is counted from now.
     *
     * @param nowNs the clock.
     */
    void serverHeard(final long nowNs) {
        lastServerFrameNs = nowNs;
    }

    /**
     * @param nowNs     the clock.
     * @param silenceNs how long a server may be silent.
     * @return true when the server has sent nothing for {@code silenceNs}, since its last frame or the round's start.
     */
    boolean silentFor(final long nowNs, final long silenceNs) {
        return nowNs - lastServerFrameNs >= silenceNs;
    }

    /**
     * @param nowNs    the clock.
     * @param awaiting true while a result (or a join) is awaited from the server.
     * @return true when a HELLO is due: the server is not proven, another result image is present, or the server has been
     *     silent while a result is awaited, for the interval each of these asks.
     */
    boolean helloDue(final long nowNs, final boolean awaiting) {
        final long interval;
        if (!proven) {
            interval = helloIntervalNs;
        } else if (hasUnprovenImages()) {
            interval = UNPROVEN_IMAGE_HELLO_INTERVAL_NS;
        } else if (awaiting && silentFor(nowNs, SERVER_SILENCE_NS)) {
            interval = SERVER_SILENCE_NS;
        } else {
            return false;
        }
        return nowNs - lastHelloNs >= interval;
    }

    /**
     * A HELLO went out: its nonce proves the server when answered; until the server is proven the next one waits twice as
     * long.
     *
     * @param nonce the HELLO's nonce.
     * @param nowNs the clock.
     */
    void helloSent(final long nonce, final long nowNs) {
        nonces[nonceCount++ % NONCES] = nonce;
        lastHelloNs = nowNs;
        if (!proven) {
            helloIntervalNs = Math.min(2 * helloIntervalNs, MAX_HELLO_INTERVAL_NS);
        }
    }

    /**
     * A server's answer to a HELLO, its header checked (job, slice): an answer to one of this worker's last HELLOs that
     * names the session it came on (and, with the job's secret, carries its MAC) proves that session. A forged one gets
     * its image refused on the next {@link #refuseUnprovenImages}.
     *
     * @param ack         the answer, wrapped.
     * @param length      the message's length.
     * @param sessionId   the session of the image it came on.
     * @param credentials the job's HELLO credentials, or null without a secret.
     * @param nowNs       the clock.
     * @return what it did.
     */
    Answer onHelloAck(final HelloAckFlyweight ack, final int length, final int sessionId, final HelloCredentials credentials, final long nowNs) {
        final MessageHeaderFlyweight msg = ack.header();
        if (msg.workerId() != workerId) {
            return Answer.IGNORED;
        }
        final int encoding = msg.encoding();
        final boolean signed = encoding == Encoding.HMAC_SHA256;
        if ((!signed && (encoding != Encoding.NONE || credentials != null)) || length != HelloAckFlyweight.length(signed)
            || msg.paramCount() != paramCount) {
            return forged(sessionId);
        }
        if (!isNonceOfMine(ack.nonce())) {
            counters.staleResults().incrementRelease();
            return Answer.IGNORED;
        }
        if (ack.serverSessionId() != sessionId || (credentials != null && !ack.verify(credentials))) {
            return forged(sessionId);
        }
        final long joinRound = ack.joinRound();
        final int donor = ack.donor();
        if ((joinRound < 0 && joinRound != HelloAckFlyweight.NO_JOIN) || (donor >= workers && donor != JoinNoticeFlyweight.NO_DONOR)) {
            return forged(sessionId);
        }
        Answer answer = Answer.PROVEN;
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
                answer = Answer.NEW_SERVER;
            }
        }
        lastServerFrameNs = nowNs;
        return answer;
    }

    /** Track result images of unproven sessions; refuse those unproven for too long, beyond the table, or forging. */
    int refuseUnprovenImages(final long nowNs) {
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
                refuse(image, track(forgedSession, nowNs));
                work++;
            }
        }
        // one read of the image list: the client's conductor thread replaces it when an image comes or goes, so a count
        // read first and an index read after it can disagree (a chaos soak's worker failed on imageAtIndex that way)
        checkNowNs = nowNs;
        refused = 0;
        subscription.forEachImage(checkImage);
        return work + refused;
    }

    private void checkImage(final Image image) {
        final int sessionId = image.sessionId();
        if (isServer(sessionId)) {
            return;
        }
        final int t = track(sessionId, checkNowNs);
        if (t < 0 || (!unprovenRefused[t] && checkNowNs - unprovenSinceNs[t] >= UNPROVEN_IMAGE_TIMEOUT_NS)) {
            refuse(image, t);
            refused++;
        }
    }

    private boolean hasUnprovenImages() {
        for (int i = 0; i < unprovenCount; i++) {
            if (!unprovenRefused[i]) {
                return true;
            }
        }
        return false;
    }

    private boolean isNonceOfMine(final long nonce) {
        for (int i = Math.min(nonceCount, NONCES) - 1; i >= 0; i--) {
            if (nonces[i] == nonce) {
                return true;
            }
        }
        return false;
    }

    private Answer forged(final int sessionId) {
        counters.rejectedResults().incrementRelease();
        if (!isServer(sessionId)) {
            forgedAnswer = true;
            forgedSession = sessionId;
        }
        return Answer.FORGED;
    }

    private int track(final int sessionId, final long nowNs) {
        for (int i = 0; i < unprovenCount; i++) {
            if (unprovenSession[i] == sessionId) {
                return i;
            }
        }
        if (unprovenCount == TRACKED_IMAGES) {
            return -1;
        }
        unprovenSession[unprovenCount] = sessionId;
        unprovenSinceNs[unprovenCount] = nowNs;
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
}
