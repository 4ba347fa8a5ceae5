package io.dlion.aeron.server;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;

import io.aeron.Aeron;
import io.aeron.exceptions.RegistrationException;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.JobContext;
import io.dlion.aeron.SliceOwners;
import io.dlion.aeron.Topology;
import io.dlion.vote.VoterSet;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;

/**
 * The slice servers a worker process of a sharded job runs: its own slice's from the start, and every slice a dead rank
 * served that the failover rule gives to this rank ({@link SliceOwners}), each an {@link AggregationServer} launched on
 * the worker's Aeron client, on the slice's ports of the {@link Topology}, bound to every address of the host.
 * <p>
 * A worker does not make one itself: the exchange does, when its context is given the topology
 * ({@code AeronVoteExchange.Context.topology}), and closes it with the exchange. What is asked of the servers (the round
 * deadline, the quorum, how long to linger for the other workers at the end) is this class's {@link Context}.
 * <p>
 * Call order: {@link #serve(int)} for this rank's slice before the worker connects, then {@link #takeOver(int)} from the
 * training thread for each slice taken over, and {@link #retryPending} from its duty cycle → {@link #close()}, which
 * keeps the servers up while another worker still reads their results (at most {@link Context#lingerNs()}), then closes
 * them. Not thread-safe: the worker's training thread only.
 * <p>
 * A slice taken over on the dead rank's own host (several ranks share a host) binds the port the dead process held. A
 * killed process keeps its sockets until the kernel has torn it down, which took up to 8 s for a JVM on a loaded host (a
 * chaos soak's workers found it dead after 3 s of silence) and may take longer for a GPU process. A take-over whose port
 * is still held is therefore <em>pending</em> ({@link #takeOver(int, VoterSet)} returns null): {@link #retryPending}, called
 * from the worker's duty cycle, tries it again every {@value #PORT_RETRY_MS} ms for up to {@link #PORT_HELD_NS} before it
 * fails, and the training thread goes on meanwhile, reading the other slices' links. While it waits, the other workers may
 * find this rank silent and name the next rank on the ring, which finds the port held too: whichever of them binds it
 * first serves the slice, its answers name its rank, every worker's view follows them ({@link SliceOwners#onServedBy}),
 * and the other rank's pending take-over stands down once its own view says the slice is not its own any more (a chaos
 * soak's worker failed on the port after 15 s before: the rank first named had bound it 1 s after it was passed over).
 * The port decides which server a slice has only among ranks on one host, the only place a port can be held by another.
 */
public final class SliceServers implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(SliceServers.class.getName());

    /** What a process does when it starts or stops serving a slice, e.g. print it or export its metrics. */
    public interface Listener {
        /**
         * A server of this process started.
         *
         * @param server    the running server; {@code server.context().slice()} is its slice.
         * @param takenOver true for a slice the failover rule moved here (a dead rank's, or this rank's own coming back
         *                  after a restart), false for this rank's own at the start.
         */
        void onServing(AggregationServer server, boolean takenOver);

        /**
         * A server of this process is about to close, its rounds done: its counters are final.
         *
         * @param server the server.
         */
        default void onClosing(AggregationServer server) {
        }
    }

    /** How long a take-over waits for its slice's port on this host to be let go by the dead rank's process: 15 s. */
    public static final long PORT_HELD_NS = TimeUnit.SECONDS.toNanos(15);
    /** How often a take-over tries its port again meanwhile. */
    static final long PORT_RETRY_MS = 100;

    private final Context ctx;
    private final List<AggregationServer> servers = new ArrayList<>();
    /** Take-overs whose port this host still holds, in the order they were asked for. */
    private final List<Pending> pending = new ArrayList<>();
    private long nextRetryNs;
    private boolean closed;

    /**
     * A take-over waiting for its port: the slice, the ranks found dead when it was asked for, the old server's last
     * result held here, and when it gives up.
     */
    private record Pending(int slice, VoterSet dead, HeldResult held, long deadlineNs) {
    }

    /**
     * Nothing is served until {@link #serve(int)}.
     *
     * @param ctx configuration, concluded here.
     */
    public SliceServers(final Context ctx) {
        this.ctx = ctx.conclude();
    }

    /**
     * Start serving a slice in this process, on its own thread.
     *
     * @param slice the slice: this rank's at the start, or one the failover rule moved here.
     * @return the running server, or null when the slice's port on this host is still held (a moved slice only): the
     *     take-over is pending ({@link #retryPending}).
     * @throws IllegalStateException when closed, or when the slice is served (or pending) here already.
     */
    public AggregationServer serve(final int slice) {
        return serve(slice, slice != ctx.rank || !servers.isEmpty(), null, null);
    }

    /**
     * Start serving a slice the failover rule moved to this rank (its own slice too, when it comes back to a restarted
     * rank), on its own thread.
     *
     * @param slice the slice.
     * @return the running server, or null when the slice's port on this host is still held: the take-over is pending
     *     ({@link #retryPending}).
     * @throws IllegalStateException when closed, or when the slice is served (or pending) here already.
     */
    public AggregationServer takeOver(final int slice) {
        return serve(slice, true, null, null);
    }

    /**
     * Start serving a slice the failover rule moved to this rank, whose rounds do not wait for the ranks just found dead
     * (without this the fresh server would wait for their votes until its round deadline; a restarted rank says HELLO
     * first, which makes it waited for again).
     *
     * @param slice the slice.
     * @param dead  the ranks found dead; null or empty for none.
     * @return the running server, or null when the slice's port on this host is still held: the take-over is pending
     *     ({@link #retryPending}).
     * @throws IllegalStateException when closed, or when the slice is served (or pending) here already.
     */
    public AggregationServer takeOver(final int slice, final VoterSet dead) {
        return serve(slice, true, dead, null);
    }

    /**
     * Start serving a slice the failover rule moved to this rank, as {@link #takeOver(int, VoterSet)}, with the old
     * server's last result as this process's worker received it in full: the new server sends it again to the workers
     * that lost part of it with the old server ({@link AggregationServer.Context#held}).
     *
     * @param slice the slice.
     * @param dead  the ranks found dead; null or empty for none.
     * @param held  the slice's last result held here, or null.
     * @return the running server, or null when the slice's port on this host is still held: the take-over is pending
     *     ({@link #retryPending}).
     * @throws IllegalStateException when closed, or when the slice is served (or pending) here already.
     */
    public AggregationServer takeOver(final int slice, final VoterSet dead, final HeldResult held) {
        return serve(slice, true, dead, held);
    }

    /**
     * Try the pending take-overs again, at most every {@value #PORT_RETRY_MS} ms: one whose slice is no longer this
     * rank's by the worker's view stands down (another rank bound the port first, and its answers said so), one whose port
     * is free now starts serving.
     *
     * @param stillOwned whether a slice is still this rank's by the worker's view of who serves what.
     * @return how many take-overs started or stood down.
     * @throws RegistrationException when a take-over's port stayed held for {@link #PORT_HELD_NS}, or its server could
     *     not start for another reason.
     */
    public int retryPending(final IntPredicate stillOwned) {
        if (pending.isEmpty() || closed || System.nanoTime() - nextRetryNs < 0) {
            return 0;
        }
        nextRetryNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PORT_RETRY_MS);
        int work = 0;
        for (final java.util.Iterator<Pending> it = pending.iterator(); it.hasNext();) {
            final Pending p = it.next();
            if (!stillOwned.test(p.slice)) {
                it.remove();
                work++;
                LOG.log(System.Logger.Level.WARNING, "rank " + ctx.rank + " stands down from slice " + p.slice
                    + ": another rank on this host bound its port first and serves it");
                continue;
            }
            final AggregationServer launched;
            try {
                launched = AggregationServer.launch(serverContext(p.slice, p.dead, p.held));
            } catch (final RegistrationException ex) {
                if (!isPortHeld(ex) || System.nanoTime() - p.deadlineNs >= 0) {
                    it.remove();
                    throw ex;
                }
                continue;
            }
            it.remove();
            work++;
            started(launched, true);
        }
        return work;
    }

    /**
     * @param slice a slice.
     * @return true while its take-over waits for the slice's port here.
     */
    public boolean isPending(final int slice) {
        for (final Pending p : pending) {
            if (p.slice == slice) {
                return true;
            }
        }
        return false;
    }

    private AggregationServer serve(final int slice, final boolean takenOver, final VoterSet dead, final HeldResult held) {
        if (closed) {
            throw new IllegalStateException("slice servers closed");
        }
        for (final AggregationServer s : servers) {
            if (s.context().slice() == slice) {
                throw new IllegalStateException("slice " + slice + " is served here already");
            }
        }
        if (isPending(slice)) {
            throw new IllegalStateException("slice " + slice + "'s take-over is pending here already");
        }
        final AggregationServer launched;
        try {
            launched = AggregationServer.launch(serverContext(slice, dead, held));
        } catch (final RegistrationException ex) {
            if (!takenOver || !isPortHeld(ex)) {
                throw ex;
            }
            pending.add(new Pending(slice, dead, held, System.nanoTime() + PORT_HELD_NS));
            nextRetryNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PORT_RETRY_MS);
            LOG.log(System.Logger.Level.WARNING, "rank " + ctx.rank + ": slice " + slice + "'s port on this host is still held (the dead"
                + " rank's process has not let it go yet): its take-over is pending, tried again every " + PORT_RETRY_MS + " ms for up to "
                + TimeUnit.NANOSECONDS.toSeconds(PORT_HELD_NS) + " s");
            return null;
        }
        return started(launched, takenOver);
    }

    private AggregationServer started(final AggregationServer launched, final boolean takenOver) {
        final int slice = launched.context().slice();
        servers.add(launched);
        LOG.log(System.Logger.Level.INFO, () -> "rank " + ctx.rank + (takenOver ? " takes over slice " : " serves slice ") + slice
            + " of " + ctx.topology.slices() + ": " + launched.layout());
        if (ctx.listener != null) {
            ctx.listener.onServing(launched, takenOver);
        }
        return launched;
    }

    /**
     * @param ex what adding a subscription or publication threw.
     * @return true when the driver could not bind the channel's port because a socket on this host holds it.
     */
    static boolean isPortHeld(final RegistrationException ex) {
        return String.valueOf(ex.getMessage()).contains("Address already in use"); // Aeron 1.51 reports it as a GENERIC_ERROR
    }

    private AggregationServer.Context serverContext(final int slice, final VoterSet dead, final HeldResult held) {
        final AggregationServer.Context server = new AggregationServer.Context()
            .aeron(ctx.aeron).jobId(ctx.jobId()).workers(ctx.workers()).paramCount(ctx.paramCount()).rule(ctx.rule())
            .chunkWords(ctx.chunkWords()).secret(ctx.secret()).frameMac(ctx.frameMac())
            .roundTimeoutNs(ctx.roundTimeoutNs).minVoters(ctx.minVoters).windowChunks(ctx.windowChunks)
            .voteStreamId(Configuration.VOTE_STREAM_ID_DEFAULT).resultStreamId(Configuration.RESULT_STREAM_ID_DEFAULT) // as Topology.endpoints
            .slice(ctx.topology, slice).servingRank(ctx.rank).absent(dead).held(held);
        if (ctx.errorHandler != null) {
            server.errorHandler(ctx.errorHandler);
        }
        return server;
    }

    /** @return the servers running here, in the order they started (this rank's own first, unless it joined). */
    public List<AggregationServer> servers() {
        return Collections.unmodifiableList(servers);
    }

    /** @return the configuration. */
    public Context context() {
        return ctx;
    }

    /**
     * Keep the servers up while another worker is still connected to their results (it may still be reading the last
     * round's result or its retransmissions), at most {@link Context#lingerNs()}, then close them.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        pending.clear();
        final long deadline = System.nanoTime() + ctx.lingerNs;
        try {
            for (final AggregationServer server : servers) {
                while (server.isConnected() && System.nanoTime() - deadline < 0) {
                    Thread.sleep(10);
                }
            }
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
        } finally {
            for (final AggregationServer server : servers) {
                if (ctx.listener != null) {
                    ctx.listener.onClosing(server);
                }
            }
            CloseHelper.closeAll(servers);
        }
    }

    /**
     * Configuration of a process's slice servers: the job's shared settings ({@link JobContext}, which the exchange
     * copies from its own context), the topology and this rank, and what is asked of the servers. Required:
     * {@link #aeron(Aeron)}, {@link #topology(Topology)}, {@link #rank(int)} and the job's settings.
     */
    public static final class Context extends JobContext<Context> {
        private Aeron aeron;
        private Topology topology;
        private int rank = -1;
        private long roundTimeoutNs = TimeUnit.MILLISECONDS.toNanos(Configuration.roundTimeoutMs());
        private int minVoters;
        private int windowChunks = Configuration.windowChunks();
        private long lingerNs = TimeUnit.SECONDS.toNanos(Configuration.LINGER_S_DEFAULT);
        private long silenceNs = SliceOwners.DEFAULT_SILENCE_NS;
        private Listener listener;
        private ErrorHandler errorHandler;

        /**
         * Validate once.
         *
         * @return this for a fluent API.
         * @throws IllegalArgumentException naming the field that is wrong.
         */
        @Override
        public Context conclude() {
            super.conclude();
            Objects.requireNonNull(aeron, "aeron");
            Objects.requireNonNull(topology, "topology");
            if (topology.kind() != Topology.Kind.SHARDED) {
                throw new IllegalArgumentException("topology must be sharded (every worker serves a slice), got " + topology);
            }
            if (topology.slices() != workers()) {
                throw new IllegalArgumentException("topology has " + topology.slices() + " slices, must be one per worker, workers="
                    + workers());
            }
            if (rank < 0 || rank >= workers()) {
                throw new IllegalArgumentException("rank must be in [0, " + workers() + "), got " + rank);
            }
            if (roundTimeoutNs <= 0) {
                throw new IllegalArgumentException("roundTimeoutNs must be > 0, got " + roundTimeoutNs);
            }
            if (minVoters < 0 || minVoters > workers()) {
                throw new IllegalArgumentException("minVoters must be in [0, workers=" + workers() + "] (0: a majority), got " + minVoters);
            }
            if (windowChunks < 1) {
                throw new IllegalArgumentException("windowChunks must be >= 1, got " + windowChunks);
            }
            if (lingerNs < 0) {
                throw new IllegalArgumentException("lingerNs must be >= 0, got " + lingerNs);
            }
            return this;
        }

        /**
         * @param aeron the worker's client, which the servers share; not closed here.
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
         * @param topology the sharded layout: rank r serves slice r on {@code hosts[r]} at the start.
         * @return this for a fluent API.
         */
        public Context topology(final Topology topology) {
            this.topology = topology;
            return this;
        }

        public Topology topology() {
            return topology;
        }

        /**
         * @param rank this worker's rank (its worker id).
         * @return this for a fluent API.
         */
        public Context rank(final int rank) {
            this.rank = rank;
            return this;
        }

        public int rank() {
            return rank;
        }

        /**
         * @param roundTimeoutNs each server's round deadline ({@link AggregationServer.Context#roundTimeoutNs(long)}; default
         *                       {@link Configuration#roundTimeoutMs()}).
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
         * @param minVoters each server's quorum ({@link AggregationServer.Context#minVoters(int)}); 0 (default) for a
         *                  majority of the workers.
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
         * @param windowChunks chunks each server holds per worker at once ({@link AggregationServer.Context#windowChunks(int)};
         *                     default {@link Configuration#windowChunks()}).
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
         * @param lingerNs how long {@link SliceServers#close()} keeps the servers up for workers still reading their
         *                 results (default {@value Configuration#LINGER_S_DEFAULT} s).
         * @return this for a fluent API.
         */
        public Context lingerNs(final long lingerNs) {
            this.lingerNs = lingerNs;
            return this;
        }

        public long lingerNs() {
            return lingerNs;
        }

        /**
         * @param silenceNs how long a slice's server may be silent, its publication disconnected, before the worker counts
         *                  its rank dead ({@link SliceOwners#silenceNs()}; default {@link SliceOwners#DEFAULT_SILENCE_NS}).
         * @return this for a fluent API.
         */
        public Context silenceNs(final long silenceNs) {
            this.silenceNs = silenceNs;
            return this;
        }

        public long silenceNs() {
            return silenceNs;
        }

        /**
         * @param listener told when a server starts and before it closes; null for none (default).
         * @return this for a fluent API.
         */
        public Context listener(final Listener listener) {
            this.listener = listener;
            return this;
        }

        public Listener listener() {
            return listener;
        }

        /**
         * @param errorHandler the servers' threads' ({@link AggregationServer.Context#errorHandler(ErrorHandler)}); null
         *                     (default) logs.
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
}
