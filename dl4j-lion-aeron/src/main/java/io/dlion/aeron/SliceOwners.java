package io.dlion.aeron;

import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import io.dlion.vote.VoterSet;

/**
 * Who serves which slice of a sharded job now, as this worker sees it, and what it does when a slice's server dies.
 * <p>
 * <b>The rule.</b> When the server of a slice falls silent, the slice moves to the first rank, in ring order
 * {@code s, s + 1, ..., s - 1 (mod N)} from the slice's own rank {@code s}, that is a <i>candidate</i>: a rank counted
 * among the voters of the last round this worker applied and of the round it applied before, and not found dead since
 * the last round began. Counted in two rounds in a row, a rank has applied a round itself (it voted in the second after
 * it applied the first), so it is no longer joining and serves a slice the rule gives it: a rank counted in one round
 * only may be a restarted rank still applying its first round, which would not serve in time, so the others would find
 * it dead and move the slice on while it starts serving later (two servers of one slice: seen in a chaos soak). At the
 * start every rank serves its own slice ({@link Topology}). A server is found dead once it fell silent: a worker waiting for a result
 * (or for its join round) has heard nothing from it for {@link #silenceNs()} although it said HELLO every second, and its
 * vote publication lost its connection (the server's media driver stopped sending status messages, which Aeron notices
 * after its publication connection timeout, 5 s): the rank's process is gone, not merely slow. Every slice the dead rank
 * served moves by the rule, and the new owner serves it in its own process on the slice's own ports
 * ({@link Topology#votePort(int)}), on its own host: a fresh server there, which the workers find as they find a restarted
 * server (the round goes on, or a worker that lost the dead server's last result is told to rejoin). A rank the rule
 * names that never answers within {@link #silenceNs()}, and serves no other slice this worker reached, is dead too, and
 * the slice moves on by the same rule.
 * <p>
 * <b>A restarted rank serves again.</b> A rank restarted into the running job joins as a new member; once two rounds in a
 * row count it, it is a candidate again, so a later move can give it a slice, its own first: a slice goes back to its own
 * rank at the next move that finds that rank a candidate. So a job survives any number of deaths over its life, as long as the
 * quorum holds at every moment. Should no rank counted in the last round be left (those it did not count were late,
 * or joining), the slice moves to the first rank from the slice not found dead since that round began.
 * <p>
 * <b>Why they agree.</b> Every worker applies the same rule to the same facts. The voters of a round are in its result,
 * which every worker applies bit for bit; and a server's death is found by the workers that go on (those that received
 * its last result) while they await the next round, when each has applied exactly the same rounds. So every one of them
 * moves slice {@code s} to the same rank, and the rank it moves to is the one that starts serving it. A worker that did
 * not receive the dead server's last result is told to rejoin by the new server (and its view of who serves what is then
 * set again by the servers' answers, which name the rank serving, {@link #onServedBy(int, int)}). A slice never has two
 * servers at once: its new owner serves it only after it found the previous server dead, and a dead server does not come
 * back. A result is never applied twice: a worker completes a round once, and a slice moved in the middle of a round is
 * read again whole from the new server ({@code ResultAssembly}).
 * <p>
 * <b>A joining worker</b> (a restarted rank) does not know which ranks died before it started. It looks for each slice's
 * server along the ring, {@link #silenceNs()} per candidate, and takes the first that proves itself (whose answer names
 * the rank serving it); the ranks it passed are dead to it from then on, as they are to the others. It serves no slice
 * until it applied a round ({@link #onApplied(long, VoterSet)}), when it follows the rule as every other worker does.
 * <p>
 * Not thread-safe: the worker's training thread only.
 */
public final class SliceOwners {
    /** Default {@link #silenceNs()}: a server silent this long, with its publication disconnected, is dead. */
    public static final long DEFAULT_SILENCE_NS = TimeUnit.SECONDS.toNanos(5);

    private final Topology topology;
    private final int rank;
    private final int workers;
    private final long silenceNs;
    private final Serve serve;
    /** Joining only: ranks found dead (by a silent server, or passed on the ring). */
    private final boolean[] dead;
    private final int[] owner;
    /** The voters of the last round applied (every rank before the first). */
    private final boolean[] voted;
    /**
     * The voters of the round applied before it (every rank before the second; this rank not, after it restarted or
     * joined again: it knows it was not counted before its first round, while which other ranks were is not known to it).
     */
    private final boolean[] votedBefore;
    /** Per rank: the round awaited when it was found dead ({@link Long#MIN_VALUE}: never; MAX_VALUE: while joining). */
    private final long[] foundDeadIn;
    private long lastApplied = -1;
    private boolean joining;

    /**
     * @param topology  the sharded layout: rank r serves slice r at the start.
     * @param rank      this worker's rank.
     * @param silenceNs how long a server may be silent while a result is awaited before it counts as dead (if its
     *                  publication is disconnected too).
     * @param serve     starts serving a slice in this process, told the ranks just found dead (its rounds need not wait
     *                  for them), when the rule makes this rank its server; called on the training thread.
     */
    public SliceOwners(final Topology topology, final int rank, final long silenceNs, final Serve serve) {
        this.topology = Objects.requireNonNull(topology, "topology");
        this.workers = topology.slices();
        if (topology.kind() != Topology.Kind.SHARDED) {
            throw new IllegalArgumentException("slices move only in the sharded topology (every worker serves a slice), got " + topology);
        }
        if (rank < 0 || rank >= workers) {
            throw new IllegalArgumentException("rank must be in [0, " + workers + "), got " + rank);
        }
        if (silenceNs < TimeUnit.SECONDS.toNanos(1)) {
            throw new IllegalArgumentException("silenceNs must be >= 1 s (a live server answers a HELLO every second), got " + silenceNs);
        }
        this.rank = rank;
        this.silenceNs = silenceNs;
        this.serve = Objects.requireNonNull(serve, "serve");
        this.dead = new boolean[workers];
        this.owner = new int[workers];
        this.voted = new boolean[workers];
        this.votedBefore = new boolean[workers];
        this.foundDeadIn = new long[workers];
        Arrays.fill(voted, true);
        Arrays.fill(votedBefore, true);
        Arrays.fill(foundDeadIn, Long.MIN_VALUE);
        for (int s = 0; s < workers; s++) {
            owner[s] = s;
        }
    }

    /**
     * This worker restarted into a running job: it serves no slice (its own moved when it died) and looks for each
     * slice's server along the ring, until it applied a round ({@link #onApplied(long, VoterSet)}).
     *
     * @return this.
     */
    public SliceOwners joining() {
        joining = true;
        voted[rank] = false;
        dead[rank] = true;
        owner[rank] = next(rank, rank);
        return this;
    }

    /**
     * This worker's process lives on but joins the job again (it lost a round's result): until it applied a round it
     * moves no slice to itself, for the others do not count it among the voters meanwhile; the servers it runs keep
     * running.
     *
     * @return this.
     */
    public SliceOwners rejoining() {
        joining = true;
        voted[rank] = false;
        for (int r = 0; r < workers; r++) {
            dead[r] = r == rank || foundDeadIn[r] != Long.MIN_VALUE;
        }
        return this;
    }

    /** @return the slices of the job, one per rank. */
    public int slices() {
        return workers;
    }

    /** @return true for a worker that restarted into a running job and has not applied a round yet (it looks for the servers). */
    public boolean isJoining() {
        return joining;
    }

    /** @return how long a server may be silent, with its publication disconnected, before it counts as dead. */
    public long silenceNs() {
        return silenceNs;
    }

    /**
     * @param slice a slice.
     * @return the rank that serves it now, as this worker sees it.
     */
    public int owner(final int slice) {
        return owner[slice];
    }

    /**
     * @param r a rank.
     * @return true when the rule would not move a slice to rank r now: while joining, r's server was found dead or
     *     passed on the ring; then, r was not counted in the last round applied, or was found dead since it began.
     */
    public boolean isDead(final int r) {
        return joining ? dead[r] : !isCandidate(r);
    }

    /**
     * @param r a rank.
     * @return true when a slice that moves may move to rank r: counted in the last round applied and in the one applied
     *     before it, not found dead since the last one began.
     */
    public boolean isCandidate(final int r) {
        return !joining && voted[r] && votedBefore[r] && foundDeadIn[r] < lastApplied;
    }

    /**
     * This worker applied a round: its voters that the round before counted too are the candidates of the next move. The
     * first round a joining worker applies ends its search: it follows the rule from then on, and serves a slice the rule
     * moves to it.
     *
     * @param round  the round applied.
     * @param voters the workers its result counts.
     */
    public void onApplied(final long round, final VoterSet voters) {
        lastApplied = round;
        for (int r = 0; r < workers; r++) {
            votedBefore[r] = voted[r];
            voted[r] = voters.contains(r);
            if (foundDeadIn[r] == Long.MAX_VALUE) {
                foundDeadIn[r] = round; // found dead while joining: a candidate again only once a later round counts it
            }
        }
        joining = false;
    }

    /**
     * The server of {@code slice} fell silent, or the rank the rule named for it never answered: that rank is dead, and
     * every slice it served moves by the rule (while joining: to the next rank on the ring not found dead). When that is
     * this rank, it starts serving the slice first.
     *
     * @param slice the slice whose server fell silent.
     * @throws IllegalStateException when no rank is left.
     */
    public void onServerLost(final int slice) {
        onServersLost(slice);
    }

    /**
     * The servers of these slices were found dead together (in one look at the links): every rank serving one of them is
     * dead, and only then does every slice they served move by the rule, so that no slice moves to a rank found dead with
     * the others, and a new server here does not wait for any of their votes.
     *
     * @param slices slices whose servers fell silent (their ranks may repeat).
     * @throws IllegalStateException when no rank is left.
     */
    public void onServersLost(final int... slices) {
        final boolean[] lost = new boolean[workers];
        for (final int slice : slices) {
            lost[owner[slice]] = owner[slice] != rank; // this process's own server is not dead while this code runs
        }
        if (joining) {
            for (int r = 0; r < workers; r++) {
                if (lost[r]) {
                    dead[r] = true;
                    foundDeadIn[r] = Long.MAX_VALUE;
                }
            }
            for (int s = 0; s < workers; s++) {
                if (lost[owner[s]]) {
                    owner[s] = next(s, owner[s]);
                }
            }
            return;
        }
        for (int r = 0; r < workers; r++) {
            if (lost[r]) {
                foundDeadIn[r] = lastApplied + 1;
            }
        }
        for (int s = 0; s < workers; s++) {
            if (lost[owner[s]]) {
                owner[s] = successor(s);
                if (owner[s] == rank) {
                    serve.serve(s, foundDeadNow());
                }
            }
        }
    }

    /**
     * The server of {@code slice} proved itself, naming the rank that serves it: this worker's view follows (a server
     * reached on a host several ranks share may be another rank's than the one this worker looked for).
     *
     * @param slice the slice.
     * @param r     the rank serving it, as its answer says; a negative value says nothing.
     */
    public void onServedBy(final int slice, final int r) {
        if (r >= 0 && r < workers && r != rank) {
            owner[slice] = r;
        }
    }

    /**
     * A joining worker found no server of {@code slice} at its current candidate: try the next rank along the ring (and
     * around again: a successor may not have taken the slice over yet).
     *
     * @param slice the slice.
     */
    public void probeNext(final int slice) {
        int candidate = owner[slice];
        do {
            candidate = (candidate + 1) % workers;
        } while (candidate == rank);
        owner[slice] = candidate;
    }

    /**
     * A joining worker found the server of {@code slice}: the ranks before it on the ring are dead, as they are to the
     * others (it serves the slice because they died).
     *
     * @param slice the slice whose server proved itself.
     */
    public void onFound(final int slice) {
        for (int r = slice; r != owner[slice]; r = (r + 1) % workers) {
            dead[r] = true;
        }
    }

    /**
     * @param slice a slice.
     * @return the vote channel of its server now: the slice's port on its server's host.
     */
    public String voteChannel(final int slice) {
        return topology.voteChannel(slice, owner[slice], workers);
    }

    /** @return the ranks found dead since the last round applied began: a new server need not wait for their votes. */
    private VoterSet foundDeadNow() {
        final VoterSet now = new VoterSet(workers);
        for (int r = 0; r < workers; r++) {
            if (foundDeadIn[r] > lastApplied) {
                now.add(r);
            }
        }
        return now;
    }

    /** Starts serving a slice in this process. */
    @FunctionalInterface
    public interface Serve {
        /**
         * @param slice the slice the rule moved to this rank.
         * @param dead  the ranks just found dead: the new server does not wait for their votes (a restarted one says HELLO
         *              first, which makes it waited for again).
         */
        void serve(int slice, VoterSet dead);
    }

    /** The rule: the first candidate from the slice's own rank on. */
    private int successor(final int slice) {
        for (int i = 0; i < workers; i++) {
            final int r = (slice + i) % workers;
            if (isCandidate(r)) {
                return r;
            }
        }
        for (int i = 0; i < workers; i++) {
            final int r = (slice + i) % workers;
            if (foundDeadIn[r] <= lastApplied) {
                return r; // no rank counted in the last round lives: any rank not found dead since that round began
            }
        }
        throw new IllegalStateException("slice " + slice + ": no rank left to serve it (every rank was found dead since round "
            + lastApplied + " began)");
    }

    private int next(final int slice, final int from) {
        for (int i = 1; i <= workers; i++) {
            final int r = (from + i) % workers;
            if (!dead[r]) {
                return r;
            }
        }
        throw new IllegalStateException("slice " + slice + ": every rank's server is dead");
    }

    @Override
    public String toString() {
        final StringBuilder sb = new StringBuilder("SliceOwners{");
        for (int s = 0; s < workers; s++) {
            sb.append(s == 0 ? "" : ", ").append(s).append("->").append(owner[s]);
        }
        return sb.append('}').toString();
    }
}
