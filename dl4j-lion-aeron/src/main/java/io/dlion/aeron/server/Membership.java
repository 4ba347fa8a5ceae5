package io.dlion.aeron.server;

import java.util.Arrays;

import io.dlion.aeron.RejectReason;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.vote.VoterSet;
import org.agrona.concurrent.EpochClock;

/**
 * Who may vote on one slice's server, and who is waited for.
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
 *       highest round opened + 2; on a fresh server, the round the live workers name + 2) and a donor (the lowest live
 *       worker), announced in a JOIN_NOTICE ({@link #nextNotice()}), announced again after every answer to its donor
 *       until round R opens ({@link #answered}), and waited for again from round R on ({@link #onRoundOpen}).</li>
 *   <li><b>Laggards</b>: on a fresh server (no round completed), workers whose HELLO names an older round than the
 *       others' missed a result of the old server; they are told to rejoin (a JOIN_NOTICE naming themselves), unless the
 *       server holds that result ({@link #holdResult}): then they are sent it again ({@link #takeHeldResultDue()}).</li>
 * </ul>
 * Membership decides who; the {@link ChunkWindow} holds the chunks. Each call that announces joins records the workers
 * announced ({@link #announced()}), for the server to excuse them from the open round. Not thread-safe: the server's
 * agent thread only.
 */
final class Membership {
    /** The join round of a join that a fresh server cannot name yet: no live worker has said HELLO to it. */
    private static final long ROUND_UNKNOWN = Long.MAX_VALUE;

    private final int slice;
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
    private final VoterSet bound;
    private final VoterSet voted;
    /** Joining workers whose first vote has not come yet: they have no parameters to hand over. */
    private final VoterSet withoutParameters;
    private final VoterSet active;
    private final VoterSet joinPending;
    /** Workers bound by a join HELLO: a later join HELLO of the same session repeats that join, pending or not. */
    private final VoterSet joinHello;
    private final VoterSet notices;
    private final VoterSet announced;
    /** Laggards the held result was sent to (or is due to): they are not told to rejoin. */
    private final VoterSet servedHeld;
    private long newestHelloRound = -1;
    /** The round of the result the server holds ({@link #holdResult}), -1 for none. */
    private long heldRound = -1;
    private boolean heldResultDue;

    /**
     * @param workers        of the job, 1 to {@link io.dlion.aeron.wire.MessageHeaderFlyweight#MAX_WORKERS}.
     * @param slice          index of the server's slice.
     * @param paramCount     of the job's vector.
     * @param secret         the job's secret, or null to accept HELLOs without credentials.
     * @param frameMac       true when the job's frames carry tags: HELLOs must say so, and others are refused.
     * @param helloMaxSkewMs how far a HELLO's timestamp may be from the clock.
     * @param epochClock     for HELLO timestamps.
     * @param counters       where joins, drops and rejoins are counted.
     */
    Membership(final int workers, final int slice, final long paramCount, final byte[] secret, final boolean frameMac,
        final long helloMaxSkewMs, final EpochClock epochClock, final ServerCounters counters) {
        this.slice = slice;
        this.helloFlags = frameMac ? HelloFlyweight.FLAG_FRAME_MAC : 0;
        this.paramCount = paramCount;
        this.credentials = secret == null ? null : new HelloCredentials(secret);
        this.helloMaxSkewMs = helloMaxSkewMs;
        this.epochClock = epochClock;
        this.counters = counters;
        this.bound = new VoterSet(workers);
        this.voted = new VoterSet(workers);
        this.withoutParameters = new VoterSet(workers);
        this.active = VoterSet.all(workers);
        this.joinPending = new VoterSet(workers);
        this.joinHello = new VoterSet(workers);
        this.notices = new VoterSet(workers);
        this.announced = new VoterSet(workers);
        this.servedHeld = new VoterSet(workers);
        this.sessionOf = new int[workers];
        this.lastHelloMs = new long[workers];
        this.lastHelloNonce = new long[workers];
        this.helloRound = new long[workers];
        this.joinRound = new long[workers];
        this.joinDonor = new int[workers];
        Arrays.fill(lastHelloMs, Long.MIN_VALUE);
    }

    /** @return workers a round waits for before its voters are fixed: every worker not dropped and not joining. */
    VoterSet active() {
        return active;
    }

    /** @return workers whose HELLO was accepted, each bound to the Aeron session it came from. */
    VoterSet bound() {
        return bound;
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
        announced.clear();
        newestHelloRound = -1;
        if (hello.header().slice() != slice) {
            return RejectReason.WRONG_SLICE;
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
        final boolean newSession = !isBound(worker, sessionId);
        if (newSession) {
            counters.workersJoined().incrementPlain();
        }
        sessionOf[worker] = sessionId;
        bound.add(worker);
        if (hello.isJoin()) {
            joinHello.add(worker);
            announceJoin(worker, latestRound);
        } else {
            joinHello.remove(worker);
            helloRound[worker] = hello.round();
            active.add(worker);
            announceDeferredJoins(latestRound);
            if (!roundCompleted) {
                resyncLaggards(latestRound, worker);
            } else if (newSession && hello.round() < latestRound) {
                // a session new to this server names a round whose result went out before it was a destination: it will
                // never get that result (a lagging worker that reached a slice's new server after that server went on
                // without it, found by a chaos soak: it waited for the result while its unread results of the other
                // slices held every worker back), so it is told to rejoin
                counters.laggardsResynced().incrementPlain();
                announceJoin(worker, latestRound);
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
        if (joinPending.contains(worker)) {
            return true;
        }
        return hello.isJoin() ? joinHello.contains(worker) : hello.round() == helloRound[worker];
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
        return (joinPending.contains(worker) || joinHello.contains(worker)) && joinRound[worker] != ROUND_UNKNOWN ? joinRound[worker] : -1;
    }

    /**
     * @param worker a worker id of the job.
     * @return the Aeron session its last accepted HELLO bound it to (meaningful while it is bound).
     */
    int sessionOf(final int worker) {
        return sessionOf[worker];
    }

    /** @return the workers the last {@link #onHello} told to (re)join, to be excused from the open round. */
    VoterSet announced() {
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
     * The server holds the old server's result of a round, as the worker in its process received it in full (a slice
     * taken over): a laggard that names that round, when the newest round named is the next one, is sent the result
     * again instead of being told to rejoin. Without it, a chaos soak's job at its quorum's edge lost the worker whose
     * part of the dead server's last result was cut off: told to rejoin, it left the host alone below the quorum, and
     * the job failed.
     *
     * @param round the round of the held result, or -1 once it is not to be sent any more (a later round's result went
     *              out: a laggard that comes now would read it first).
     */
    void holdResult(final long round) {
        heldRound = round;
        if (round < 0) {
            heldResultDue = false;
        }
    }

    /**
     * @return true once after a HELLO made the held result due (a laggard newly sent it, or one that said HELLO again on
     *     a new session): the server sends it again, whole, after the answers.
     */
    boolean takeHeldResultDue() {
        final boolean due = heldResultDue;
        heldResultDue = false;
        return due;
    }

    /**
     * A fresh server (no round completed yet) whose workers' HELLOs name different rounds: the old server died after
     * some workers had received all of round r's result and before others had. A lagging worker that names the round of
     * the result the server holds ({@link #holdResult}), the one before the newest named, is sent it again; every other
     * is told to rejoin (JOIN_NOTICE naming itself; its exchange then throws {@code RejoinRequiredException}), as nobody
     * can give it round r's result any more.
     *
     * @param worker the worker whose HELLO this is.
     */
    private void resyncLaggards(final long latestRound, final int worker) {
        long newest = -1;
        for (int w = bound.next(0); w >= 0; w = bound.next(w + 1)) {
            if (!joinPending.contains(w)) {
                newest = Math.max(newest, helloRound[w]);
            }
        }
        for (int w = bound.next(0); w >= 0; w = bound.next(w + 1)) {
            if (joinPending.contains(w) || helloRound[w] >= newest) {
                continue;
            }
            if (heldRound >= 0 && helloRound[w] == heldRound && newest == heldRound + 1) {
                if (!servedHeld.contains(w) || w == worker) {
                    servedHeld.add(w);
                    heldResultDue = true;
                    counters.laggardsServed().incrementPlain();
                }
                continue;
            }
            servedHeld.remove(w);
            counters.laggardsResynced().incrementPlain();
            announceJoin(w, latestRound);
        }
        newestHelloRound = newest;
    }

    /**
     * A worker (re)joins a running job and has no parameters yet: it is waited for again from round R = the highest
     * round opened + 2 (before any result of round R - 1 goes out, the JOIN_NOTICE does, so every worker reads it while
     * awaiting round R - 1 at the latest), and the lowest live worker is named donor: it hands the joining worker the
     * parameters it holds when round R starts. A worker that joined and has not voted yet has no parameters to hand
     * over: it is not named (two workers joining one after the other, the second named the first as its donor, which
     * waited for its own hand-over meanwhile, found by the chaos soak). Votes of the worker's previous incarnation are not waited for any more.
     * <p>
     * A fresh server (no round opened) will open the round the live workers' HELLOs name (they vote in it again here,
     * the round the other slices' servers have open), so that round counts as opened: R is the same on every slice and
     * the joining worker, which joins at the latest R its slices name, is not waited for on this slice in a round it
     * does not vote in. A fresh server that no live worker has said HELLO to yet knows no round: the join is announced
     * when one does ({@link #announceDeferredJoins}). Before, it named round 1, and the slice waited a round deadline
     * for the joining worker in a round before its first; the worker's first vote then came after that round's voters
     * were fixed, and the round counted it on every slice but this one.
     */
    private void announceJoin(final int worker, final long latestRound) {
        active.remove(worker);
        joinPending.add(worker);
        withoutParameters.add(worker);
        long latest = latestRound;
        if (latest < 0) {
            for (int w = bound.next(0); w >= 0; w = bound.next(w + 1)) {
                if (!joinPending.contains(w)) {
                    latest = Math.max(latest, helloRound[w]);
                }
            }
            if (latest < 0) {
                joinRound[worker] = ROUND_UNKNOWN;
                return;
            }
        }
        final long first = latest + 2;
        joinRound[worker] = first;
        helloRound[worker] = first;
        int donor = JoinNoticeFlyweight.NO_DONOR;
        for (int w = bound.next(0); w >= 0; w = bound.next(w + 1)) {
            if (active.contains(w) && !joinPending.contains(w) && !withoutParameters.contains(w)) {
                donor = w;
                break;
            }
        }
        joinDonor[worker] = donor;
        notices.add(worker);
        announced.add(worker);
        counters.joinsAnnounced().incrementPlain();
    }

    /**
     * A live worker said HELLO: joins that a fresh server heard before any live worker's HELLO get their round now.
     *
     * @param latestRound the highest round opened so far, -1 on a fresh server.
     */
    private void announceDeferredJoins(final long latestRound) {
        for (int w = joinPending.next(0); w >= 0; w = joinPending.next(w + 1)) {
            if (joinRound[w] == ROUND_UNKNOWN) {
                announceJoin(w, latestRound);
            }
        }
    }

    /**
     * @param worker    a worker id of the job.
     * @param sessionId the Aeron session a vote came from.
     * @return true when an accepted HELLO bound the worker id to that session.
     */
    boolean isBound(final int worker, final int sessionId) {
        return bound.contains(worker) && sessionOf[worker] == sessionId;
    }

    /**
     * @param worker a worker id of the job.
     * @param round  of its vote.
     * @return true when the worker was told to rejoin and the round is before its join round: such a vote counts no more
     *     and must not open a round.
     */
    boolean isBeforeJoinRound(final int worker, final long round) {
        return joinPending.contains(worker) && round < joinRound[worker];
    }

    /**
     * @param worker a worker id of the job.
     * @return the round it votes in next as far as this server knows: the round its last HELLO named (its join round after
     *     a join), or the one after the held result's round when it is sent that result.
     */
    long helloRound(final int worker) {
        return servedHeld.contains(worker) && helloRound[worker] == heldRound ? heldRound + 1 : helloRound[worker];
    }

    /**
     * A round opens: joining workers whose first round it is (or an earlier one) are waited for again.
     *
     * @param round the round.
     */
    void onRoundOpen(final long round) {
        for (int w = joinPending.next(0); w >= 0; w = joinPending.next(w + 1)) {
            if (joinRound[w] <= round) {
                active.add(w);
                joinPending.remove(w);
            }
        }
    }

    /**
     * @param worker a worker whose vote this server accepted.
     */
    void onVote(final int worker) {
        voted.add(worker);
        withoutParameters.remove(worker);
    }

    /** @return workers whose votes this server has accepted at least once: the others are still starting. */
    VoterSet voted() {
        return voted;
    }

    /**
     * A worker's vote arrived before the round's voters were fixed: a dropped worker is waited for again.
     *
     * @param worker the voter.
     */
    void onTimelyVote(final int worker) {
        if (!active.contains(worker)) {
            active.add(worker);
            counters.workersRejoined().incrementPlain();
        }
    }

    /**
     * Workers known to be gone when the server starts (the dead rank of a slice taken over): not waited for until they say
     * HELLO. Not counted as drops.
     *
     * @param gone the workers.
     */
    void excuse(final VoterSet gone) {
        active.andNot(gone);
    }

    /**
     * Workers missed a round deadline: they are not waited for any more.
     *
     * @param missing the workers.
     */
    void drop(final VoterSet missing) {
        active.andNot(missing);
        counters.workersDropped().getAndAddPlain(missing.count());
    }

    /**
     * A HELLO_ACK went out to a worker: every pending join it is the donor of is announced again, after that answer. The
     * first JOIN_NOTICE can go out before the donor's image of the result stream is set up (the donor's first HELLO to a
     * fresh server, whose answer is lost the same way, is what made it a donor), and it is never sent again otherwise:
     * a chaos soak's donor, proven by the answer to a HELLO it repeated, never heard of the join, and the joining worker
     * waited for a hand-over that never began. A donor that is not proven repeats its HELLO until an answer reaches it,
     * so the notice after that answer reaches it too, on the same image.
     *
     * @param worker the worker answered.
     */
    void answered(final int worker) {
        for (int w = joinPending.next(0); w >= 0; w = joinPending.next(w + 1)) {
            if (joinDonor[w] == worker) {
                notices.add(w);
            }
        }
    }

    /** @return the lowest worker whose JOIN_NOTICE has not gone out yet, or -1. */
    int nextNotice() {
        return notices.next(0);
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
        notices.remove(worker);
    }
}
