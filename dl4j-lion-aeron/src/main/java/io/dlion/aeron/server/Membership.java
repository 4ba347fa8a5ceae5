package io.dlion.aeron.server;

import java.util.Arrays;

import io.dlion.aeron.RejectReason;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import org.agrona.concurrent.EpochClock;

/**
 * Who may vote on one shard's server, and who is waited for.
 * <ul>
 *   <li><b>Sessions and authentication</b>: a HELLO (with an HMAC-SHA256 of the job's secret when the server has one)
 *       binds its worker id to the Aeron session it came from ({@link #isBound}), which the HELLO itself names; a new
 *       valid HELLO (a restarted worker) moves the binding. A HELLO older than the last one accepted from the worker, a
 *       replay, or one that names another session is refused. A repeat of the HELLO that bound the worker changes
 *       nothing (the worker repeats it until the server's answer reaches it).</li>
 *   <li><b>Active workers</b>: the workers a round waits for before its voters are fixed. A worker is dropped at a
 *       deadline it missed ({@link #drop}) and is active again when its vote of a round arrives before that round's
 *       voters are fixed ({@link #onTimelyVote}), or when it says HELLO again.</li>
 *   <li><b>Joins</b>: a join HELLO comes from a restarted worker without parameters. It is named a first round R (the
 *       highest round opened + 2) and a donor (the lowest live worker), announced in a JOIN_NOTICE
 *       ({@link #nextNotice()}), and waited for again from round R on ({@link #onRoundOpen}).</li>
 *   <li><b>Laggards</b>: on a fresh server (no round completed), workers whose HELLO names an older round than the
 *       others' missed a result of the old server; they are told to rejoin (a JOIN_NOTICE naming themselves).</li>
 * </ul>
 * Membership decides who; the {@link VoteWindow} holds the votes. Each call that announces joins records the workers
 * announced ({@link #announced()}), for the server to excuse them from the open round. Not thread-safe: the server's
 * agent thread only.
 */
final class Membership {
    private final int shard;
    private final long paramCount;
    private final HelloCredentials credentials;
    private final int helloFlags;
    private final long helloMaxSkewMs;
    private final EpochClock epochClock;
    private final ServerCounters counters;
    private final int[] sessionOf;
    private final long[] lastHelloMs;
    private final long[] lastHelloNonce;
    private final long[] helloRound;
    private final long[] joinRound;
    private final int[] joinDonor;
    private long boundMask;
    private long votedMask;
    private long activeMask;
    private long joinPendingMask;
    /** Workers bound by a join HELLO: a later join HELLO of the same session repeats that join, pending or not. */
    private long joinHelloMask;
    private long noticeMask;
    private long announced;
    private long newestHelloRound = -1;

    /**
     * @param workers        of the job, 1 to 64.
     * @param shard          index of the server's slice.
     * @param paramCount     of the job's vector.
     * @param secret         the job's secret, or null to accept HELLOs without credentials.
     * @param frameMac       true when the job's frames carry tags: HELLOs must say so, and others are refused.
     * @param helloMaxSkewMs how far a HELLO's timestamp may be from the clock.
     * @param epochClock     for HELLO timestamps.
     * @param counters       where joins, drops and rejoins are counted.
     */
    Membership(final int workers, final int shard, final long paramCount, final byte[] secret, final boolean frameMac,
        final long helloMaxSkewMs, final EpochClock epochClock, final ServerCounters counters) {
        this.shard = shard;
        this.helloFlags = frameMac ? HelloFlyweight.FLAG_FRAME_MAC : 0;
        this.paramCount = paramCount;
        this.credentials = secret == null ? null : new HelloCredentials(secret);
        this.helloMaxSkewMs = helloMaxSkewMs;
        this.epochClock = epochClock;
        this.counters = counters;
        this.activeMask = workers == Long.SIZE ? -1L : (1L << workers) - 1;
        this.sessionOf = new int[workers];
        this.lastHelloMs = new long[workers];
        this.lastHelloNonce = new long[workers];
        this.helloRound = new long[workers];
        this.joinRound = new long[workers];
        this.joinDonor = new int[workers];
        Arrays.fill(lastHelloMs, Long.MIN_VALUE);
    }

    /** @return workers a round waits for before its voters are fixed: every worker not dropped and not joining. */
    long activeMask() {
        return activeMask;
    }

    /** @return workers whose HELLO was accepted, each bound to the Aeron session it came from. */
    long boundMask() {
        return boundMask;
    }

    /**
     * Take a HELLO from a worker id of the job.
     *
     * @param hello           the HELLO, wrapped.
     * @param length          of the message.
     * @param worker          its worker id, in [0, workers).
     * @param sessionId       the Aeron session it came from.
     * @param latestRound     the highest round opened so far, -1 on a fresh server.
     * @param roundCompleted  true once the server completed a round.
     * @return why it is refused, or null when accepted; {@link #announced()} then holds the workers told to (re)join.
     */
    RejectReason onHello(final HelloFlyweight hello, final int length, final int worker, final int sessionId, final long latestRound,
        final boolean roundCompleted) {
        announced = 0;
        newestHelloRound = -1;
        if (hello.header().shard() != shard) {
            return RejectReason.WRONG_SHARD;
        }
        if (hello.paramCount() != paramCount) {
            return RejectReason.PARAM_COUNT_MISMATCH;
        }
        final int encoding = hello.header().encoding();
        if (encoding != Encoding.NONE && encoding != Encoding.HMAC_SHA256) {
            return RejectReason.MALFORMED;
        }
        if (length != HelloFlyweight.length(encoding == Encoding.HMAC_SHA256)) {
            return RejectReason.BAD_LENGTH;
        }
        final int addressLength = hello.resultAddressLength();
        if (addressLength != 0 && addressLength != 4 && addressLength != HelloFlyweight.RESULT_ADDRESS_CAPACITY) {
            return RejectReason.MALFORMED;
        }
        final long timestamp = hello.timestampMs();
        final long nonce = hello.nonce();
        if (credentials != null) {
            if (encoding != Encoding.HMAC_SHA256 || Math.abs(timestamp - epochClock.time()) > helloMaxSkewMs || !hello.verify(credentials)) {
                return RejectReason.BAD_CREDENTIALS;
            }
            if (timestamp < lastHelloMs[worker] || (timestamp == lastHelloMs[worker] && nonce == lastHelloNonce[worker])) {
                return RejectReason.REPLAYED_HELLO;
            }
        }
        if (hello.voteSessionId() != sessionId) {
            return RejectReason.REPLAYED_HELLO;
        }
        if (hello.flags() != helloFlags) {
            return RejectReason.FRAME_MAC_MISMATCH;
        }
        lastHelloMs[worker] = timestamp;
        lastHelloNonce[worker] = nonce;
        if (isRepeat(hello, worker, sessionId)) {
            return null;
        }
        if (!isBound(worker, sessionId)) {
            counters.workersJoined().incrementPlain();
        }
        sessionOf[worker] = sessionId;
        boundMask |= 1L << worker;
        if (hello.isJoin()) {
            joinHelloMask |= 1L << worker;
            announceJoin(worker, latestRound);
        } else {
            joinHelloMask &= ~(1L << worker);
            helloRound[worker] = hello.round();
            activeMask |= 1L << worker;
            if (!roundCompleted) {
                resyncLaggards(latestRound);
            }
        }
        return null;
    }

    /**
     * A worker repeats its HELLO until the server's answer reaches it (its result image may not have been set up when the
     * first answer went out). A repeat comes from the session already bound and either the worker's join is pending, or
     * it is a join HELLO and the session was bound by one (the join it repeats may have completed meanwhile: the worker
     * sent it before the answer reached it, and the others opened its first round before the server read it), or it
     * names the same round as before: it changes nothing but is answered again. A new join comes from a new session
     * (a restarted worker, or a new exchange after a rejoin), never from the one a join already bound.
     */
    private boolean isRepeat(final HelloFlyweight hello, final int worker, final int sessionId) {
        if (!isBound(worker, sessionId)) {
            return false;
        }
        final long bit = 1L << worker;
        if ((joinPendingMask & bit) != 0) {
            return true;
        }
        return hello.isJoin() ? (joinHelloMask & bit) != 0 : hello.round() == helloRound[worker];
    }

    /**
     * What a HELLO_ACK to this worker says about its join: the first round of a join that is pending, or of the join
     * that bound its session (also once that round has opened: a joining worker whose first answers and the JOIN_NOTICE
     * went out before its image of the new destination was set up learns its round from a later answer, instead of
     * waiting for a notice that will not come again), else -1. A worker that has joined ignores it.
     *
     * @param worker a worker id of the job.
     * @return its first round, or -1.
     */
    long answerJoinRound(final int worker) {
        return ((joinPendingMask | joinHelloMask) & (1L << worker)) != 0 ? joinRound[worker] : -1;
    }

    /**
     * @param worker a worker id of the job.
     * @return the Aeron session its last accepted HELLO bound it to (meaningful while it is bound).
     */
    int sessionOf(final int worker) {
        return sessionOf[worker];
    }

    /** @return the workers the last {@link #onHello} told to (re)join, to be excused from the open round. */
    long announced() {
        return announced;
    }

    /**
     * @return on a fresh server, the newest round the live workers' HELLOs named when the last {@link #onHello} resynced
     *     laggards, otherwise -1: an open round older than it, with no voters fixed, was opened by laggards only.
     */
    long newestHelloRound() {
        return newestHelloRound;
    }

    /**
     * A fresh server (no round completed yet) whose workers' HELLOs name different rounds: the old server died after
     * some workers had received all of round r's result and before others had. Nobody can give the lagging workers
     * round r's result any more, so they are told to rejoin (JOIN_NOTICE naming themselves; their exchange then throws
     * {@code RejoinRequiredException}).
     */
    private void resyncLaggards(final long latestRound) {
        long newest = -1;
        for (long m = boundMask & ~joinPendingMask; m != 0; m &= m - 1) {
            newest = Math.max(newest, helloRound[Long.numberOfTrailingZeros(m)]);
        }
        for (long m = boundMask & ~joinPendingMask; m != 0; m &= m - 1) {
            final int w = Long.numberOfTrailingZeros(m);
            if (helloRound[w] < newest) {
                counters.laggardsResynced().incrementPlain();
                announceJoin(w, latestRound);
            }
        }
        newestHelloRound = newest;
    }

    /**
     * A worker (re)joins a running job and has no parameters yet: it is waited for again from round R = the highest
     * round opened + 2 (before any result of round R - 1 goes out, the JOIN_NOTICE does, so every worker reads it while
     * awaiting round R - 1 at the latest), and the lowest live worker is named donor: it hands the joining worker the
     * parameters it holds when round R starts. Votes of the worker's previous incarnation are not waited for any more.
     */
    private void announceJoin(final int worker, final long latestRound) {
        final long bit = 1L << worker;
        activeMask &= ~bit;
        long latest = latestRound;
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
        joinDonor[worker] = donors == 0 ? JoinNoticeFlyweight.NO_DONOR : Long.numberOfTrailingZeros(donors);
        joinPendingMask |= bit;
        noticeMask |= bit;
        announced |= bit;
        counters.joinsAnnounced().incrementPlain();
    }

    /**
     * @param worker    a worker id of the job.
     * @param sessionId the Aeron session a vote came from.
     * @return true when an accepted HELLO bound the worker id to that session.
     */
    boolean isBound(final int worker, final int sessionId) {
        return (boundMask & (1L << worker)) != 0 && sessionOf[worker] == sessionId;
    }

    /**
     * @param worker a worker id of the job.
     * @param round  of its vote.
     * @return true when the worker was told to rejoin and the round is before its join round: such a vote counts no more
     *     and must not open a round.
     */
    boolean isBeforeJoinRound(final int worker, final long round) {
        return (joinPendingMask & (1L << worker)) != 0 && round < joinRound[worker];
    }

    /**
     * @param worker a worker id of the job.
     * @return the round its last HELLO named (its join round after a join).
     */
    long helloRound(final int worker) {
        return helloRound[worker];
    }

    /**
     * A round opens: joining workers whose first round it is (or an earlier one) are waited for again.
     *
     * @param round the round.
     */
    void onRoundOpen(final long round) {
        for (long m = joinPendingMask; m != 0; m &= m - 1) {
            final int w = Long.numberOfTrailingZeros(m);
            if (joinRound[w] <= round) {
                activeMask |= 1L << w;
                joinPendingMask &= ~(1L << w);
            }
        }
    }

    /**
     * @param worker a worker whose vote this server accepted.
     */
    void onVote(final int worker) {
        votedMask |= 1L << worker;
    }

    /** @return workers whose votes this server has accepted at least once: the others are still starting. */
    long votedMask() {
        return votedMask;
    }

    /**
     * A worker's vote arrived before the round's voters were fixed: a dropped worker is waited for again.
     *
     * @param worker the voter.
     */
    void onTimelyVote(final int worker) {
        final long bit = 1L << worker;
        if ((activeMask & bit) == 0) {
            activeMask |= bit;
            counters.workersRejoined().incrementPlain();
        }
    }

    /**
     * Workers missed a round deadline: they are not waited for any more.
     *
     * @param missing the workers.
     */
    void drop(final long missing) {
        activeMask &= ~missing;
        counters.workersDropped().getAndAddPlain(Long.bitCount(missing));
    }

    /** @return the lowest worker whose JOIN_NOTICE has not gone out yet, or -1. */
    int nextNotice() {
        return noticeMask == 0 ? -1 : Long.numberOfTrailingZeros(noticeMask);
    }

    /**
     * @param worker a worker with a JOIN_NOTICE to send.
     * @return the first round it votes in.
     */
    long joinRound(final int worker) {
        return joinRound[worker];
    }

    /**
     * @param worker a worker with a JOIN_NOTICE to send.
     * @return its donor, or {@link JoinNoticeFlyweight#NO_DONOR}.
     */
    int joinDonor(final int worker) {
        return joinDonor[worker];
    }

    /**
     * @param worker whose JOIN_NOTICE went out.
     */
    void noticeSent(final int worker) {
        noticeMask &= ~(1L << worker);
    }
}
