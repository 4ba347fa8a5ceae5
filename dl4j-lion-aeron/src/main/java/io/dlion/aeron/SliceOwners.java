package io.dlion.aeron;

import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * Who serves which slice of a sharded job now, as this worker sees it, and what it does when a slice's server dies.
 * <p>
 * <b>The rule.</b> Slice {@code s} is served by the first rank, in ring order {@code s, s + 1, ..., s - 1 (mod N)},
 * that is not dead. At the start that is rank {@code s} itself ({@link Topology}); a rank is dead once its slice server
 * fell silent: a worker waiting for a result (or for its join round) has heard nothing from it for
 * {@link #silenceNs()} although it said HELLO every second, and its vote publication lost its connection (the server's
 * media driver stopped sending status messages, which Aeron notices after its publication connection timeout, 5 s):
 * the rank's process is gone, not merely slow. Every slice the dead rank served moves to its successor by the rule,
 * and the successor serves it in its own process on the slice's own ports ({@link Topology#votePort(int)}), on its own
 * host: a fresh server there, which the workers find as they find a restarted server (the round goes on, or a worker that
 * lost the dead server's last result is told to rejoin).
 * <p>
 * <b>Why they agree.</b> Every worker applies the same rule to the same facts: a process that died stays dead to everyone
 * (a restarted worker joins as a new member and serves nothing, see {@link #joining()}), and a live process answers every
 * HELLO within a round trip, while its media driver keeps its publications connected even when its training thread
 * stalls. So every worker moves slice {@code s} to the same rank, and the rank it moves to is the one that starts serving
 * it. A slice never has two servers at once: its successor serves it only after it found the previous server dead, and
 * a dead server does not come back. A result is never applied twice: a worker completes a round once, and a slice moved
 * in the middle of a round is read again whole from the new server ({@code ResultAssembly}).
 * <p>
 * <b>A joining worker</b> (a restarted rank) does not know which ranks died before it started. It looks for each slice's
 * server along the ring, {@link #silenceNs()} per candidate, and takes the first that proves itself; the ranks it passed
 * are dead to it from then on, as they are to the others. It serves no slice: its own slice moved when it died.
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
    private final IntConsumer serve;
    private final boolean[] dead;
    private final int[] owner;
    private boolean joining;

    /**
     * @param topology  the sharded layout: rank r serves slice r at the start.
     * @param rank      this worker's rank.
     * @param silenceNs how long a server may be silent while a result is awaited before it counts as dead (if its
     *                  publication is disconnected too).
     * @param serve     starts serving a slice in this process, on the slice's ports ({@link Topology#votePort(int)}), when
     *                  the rule makes this rank its server; called on the training thread, before the worker greets it.
     */
    public SliceOwners(final Topology topology, final int rank, final long silenceNs, final IntConsumer serve) {
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
        for (int s = 0; s < workers; s++) {
            owner[s] = s;
        }
    }

    /**
     * This worker restarted into a running job: it serves no slice (its own moved when it died) and looks for each
     * slice's server along the ring.
     *
     * @return this.
     */
    public SliceOwners joining() {
        joining = true;
        dead[rank] = true;
        owner[rank] = next(rank, rank);
        return this;
    }

    /** @return the slices of the job, one per rank. */
    public int slices() {
        return workers;
    }

    /** @return true for a worker that restarted into a running job (it looks for the servers). */
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
     * @return true when this worker found rank r's server dead.
     */
    public boolean isDead(final int r) {
        return dead[r];
    }

    /**
     * The server of {@code slice} fell silent: the rank serving it is dead, and every slice it served moves to the next
     * live rank. When that is this rank, it starts serving the slice first.
     *
     * @param slice the slice whose server fell silent.
     * @throws IllegalStateException when no rank is left.
     */
    public void onServerLost(final int slice) {
        final int lost = owner[slice];
        dead[lost] = true;
        for (int s = 0; s < workers; s++) {
            if (owner[s] == lost) {
                owner[s] = next(s, lost);
                if (owner[s] == rank && !joining) {
                    serve.accept(s);
                }
            }
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
        return Channels.udpVotes(topology.host(owner[slice]), topology.votePort(slice), topology.linkStreams(workers));
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
