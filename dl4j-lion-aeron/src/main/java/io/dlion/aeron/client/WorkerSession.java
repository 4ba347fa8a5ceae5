package io.dlion.aeron.client;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.exchange.JoinNotice;
import org.agrona.concurrent.EpochClock;

/**
 * A worker's session with its job, the same for every slice: the round it is in, whether it is still joining, what
 * the servers' JOIN_NOTICEs said (its own first round and donor, a demand to rejoin, other workers joining) and the
 * credentials its HELLOs carry. It holds no result data ({@link ResultAssembly} does) and no connection
 * ({@link SliceLink} does).
 * <p>
 * Rounds: {@link #startRound(long)} at submit, {@link #endRound(long)} when the round completed or was aborted. Between
 * the two the worker is {@link #inRound() in the round}.
 */
final class WorkerSession {
    private final int workerId;
    private final HelloCredentials credentials;
    private final EpochClock epochClock;
    private final SplittableRandom nonces = new SplittableRandom(System.nanoTime());
    /** Per slice: the first round its server announced for this joining worker, or -1. */
    private final long[] joinRound;
    /** Per slice: the donor its server named with {@link #joinRound}, -1 for none. */
    private final int[] joinDonor;
    private final List<JoinNotice> notices = new ArrayList<>();
    /**
     * Every other worker's notice received in this session: each slice's server announces a join, so in a sharded job the
     * same notice comes once per slice, rounds apart; it is handed on once (a donor gives one hand-over).
     */
    private final java.util.Set<JoinNotice> noticed = new java.util.HashSet<>();
    private long nextRound;
    private long submittedRound = -1;
    private boolean joining;
    /** The first round this worker joined at, -1 when it did not join. */
    private long joinedRound = -1;
    private JoinNotice rejoinRequired;
    private long laterRoundSeen = -1;

    /**
     * @param workerId    this worker.
     * @param slices      number of slices.
     * @param firstRound  the round submitted first, unless joining.
     * @param join        true for a worker that asks the servers for its first round and donor.
     * @param credentials signs every HELLO, or null for servers without a secret.
     * @param epochClock  for HELLO timestamps.
     */
    WorkerSession(final int workerId, final int slices, final long firstRound, final boolean join, final HelloCredentials credentials,
        final EpochClock epochClock) {
        this.workerId = workerId;
        this.credentials = credentials;
        this.epochClock = epochClock;
        this.joining = join;
        this.nextRound = join ? Long.MAX_VALUE : firstRound;
        this.joinRound = new long[slices];
        this.joinDonor = new int[slices];
        Arrays.fill(joinRound, -1L);
        Arrays.fill(joinDonor, -1);
    }

    int workerId() {
        return workerId;
    }

    /** @return true until every slice's server has announced this joining worker's first round. */
    boolean joining() {
        return joining;
    }

    /** @return the round this worker submits next (the one awaited while {@link #inRound()}). */
    long nextRound() {
        return nextRound;
    }

    /** @return the round submitted last, -1 before the first. */
    long submittedRound() {
        return submittedRound;
    }

    /** @return true between a round's submit and its end. */
    boolean inRound() {
        return submittedRound == nextRound;
    }

    /**
     * @return the round whose result frames are read now: in a round the round submitted; between rounds the round
     *     completed last (its frames are all read, later ones are stale).
     */
    long resultRound() {
        return inRound() ? submittedRound : nextRound - 1;
    }

    /** @return the round a HELLO names: the next round, or {@link MessageHeaderFlyweight#JOIN_ROUND} while joining. */
    long helloRound() {
        return joining ? MessageHeaderFlyweight.JOIN_ROUND : nextRound;
    }

    void startRound(final long round) {
        submittedRound = round;
    }

    /** The round completed, or was aborted by a server: the next one follows. */
    void endRound(final long round) {
        nextRound = round + 1;
    }

    /** @return the HELLO credentials, or null. */
    HelloCredentials credentials() {
        return credentials;
    }

    /** @return a fresh nonce for a HELLO. */
    long nextNonce() {
        return nonces.nextLong();
    }

    /** @return the time for a HELLO, epoch milliseconds. */
    long epochTimeMs() {
        return epochClock.time();
    }

    /**
     * A valid JOIN_NOTICE from a slice's server, or a HELLO_ACK that names a join round. About this worker, while it
     * joins: its first round. Once joined, a notice of the round it joined at (or an earlier one) is the announcement of
     * that same join, late: the HELLO_ACK that completed the join can arrive before the server's JOIN_NOTICE broadcast,
     * or before the answer to a HELLO it repeated while the join was pending. Only a later round is a demand to rejoin
     * (a restarted server found it behind the others).
     *
     * @param slice  index of the slice.
     * @param worker the worker that (re)joins.
     * @param round  its first round.
     * @param donor  the worker handing over its parameters, -1 for none.
     */
    void onJoinNotice(final int slice, final int worker, final long round, final int donor) {
        if (worker == workerId) {
            if (joining) {
                joinRound[slice] = round;
                joinDonor[slice] = donor;
            } else if (round > joinedRound && rejoinRequired == null) {
                rejoinRequired = new JoinNotice(worker, round, donor);
            }
        } else {
            final JoinNotice notice = new JoinNotice(worker, round, donor);
            if (noticed.add(notice)) {
                notices.add(notice);
            }
        }
    }

    /**
     * For a joining worker: when every slice's server has announced its first round, the session joins at the latest of
     * them.
     *
     * @return the notice (first round and that slice's donor), or null while a slice has not announced it yet.
     */
    JoinNotice tryJoin() {
        long first = -1;
        int donor = -1;
        for (int s = 0; s < joinRound.length; s++) {
            if (joinRound[s] < 0) {
                return null;
            }
            if (joinRound[s] > first) {
                first = joinRound[s];
                donor = joinDonor[s];
            }
        }
        joining = false;
        joinedRound = first;
        nextRound = first;
        return new JoinNotice(workerId, first, donor);
    }

    /**
     * A frame of a later round arrived while this worker's round is incomplete: its result is lost for this worker.
     *
     * @param laterRound the round of that frame.
     */
    void onResultLost(final long laterRound) {
        if (laterRoundSeen < 0) {
            laterRoundSeen = laterRound;
        }
    }

    /** @return the later round whose frame showed that this worker's round result is lost, or -1. */
    long laterRoundSeen() {
        return laterRoundSeen;
    }

    /** @return the server's demand that this (running) worker rejoin, or null. */
    JoinNotice rejoinRequired() {
        return rejoinRequired;
    }

    /** @return the other workers' join notices received since the last call. */
    List<JoinNotice> takeJoinNotices() {
        if (notices.isEmpty()) {
            return List.of();
        }
        final List<JoinNotice> taken = List.copyOf(notices);
        notices.clear();
        return taken;
    }
}
