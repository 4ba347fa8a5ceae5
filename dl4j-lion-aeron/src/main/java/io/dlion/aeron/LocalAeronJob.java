package io.dlion.aeron;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

import io.aeron.Aeron;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.server.AggregationServers;
import io.dlion.aeron.server.ServerCounters;
import io.dlion.aeron.server.SliceServers;
import io.dlion.exchange.VoteExchange;
import org.agrona.CloseHelper;

/**
 * A whole Distributed Lion job in one JVM over a real Aeron media driver, for examples, demos and tests: the
 * media driver (embedded by default), the aggregation server(s) and one {@link AeronVoteExchange} per worker, over
 * {@link Transport#IPC IPC} or {@link Transport#UDP UDP} on 127.0.0.1 (free ports are picked here). The
 * {@link Context#topology(Topology.Kind) topology} is {@link Topology}'s: the star (S servers, one by default) or sharded
 * (one slice server per worker, S = N, with {@link Topology#chunkWords(long, int, int)}'s chunk size); slices are
 * {@link Topology#sliceBounds}'s.
 * <ul>
 *   <li><b>The star</b>, and <b>the sharded topology over IPC</b>: the job launches the S servers itself, on one agent
 *       thread ({@link AggregationServers}), and gives every worker their fixed endpoints. Their slices never move: a
 *       {@link Topology} places a slice's server by host and port, which IPC has not.</li>
 *   <li><b>The sharded topology over UDP</b> is a sharded job as its worker processes run it: the job picks the
 *       {@link #topology() Topology} (every rank on 127.0.0.1, two free ports per slice) and gives each worker's exchange
 *       that topology and its rank ({@link AeronVoteExchange.Context#topology(Topology)}). The exchange serves its own
 *       slice ({@link SliceServers}; its own slice reached by IPC, {@link Topology#servedHere}), takes over a dead rank's
 *       slice, and closes its servers with itself: the code path of a worker process, with no server of the job's own.
 *       {@link #rejoin(int)} is then a rank's death and restart: the old exchange closes with its slice servers, the
 *       others find the server silent and move the slice to the next live rank ({@link SliceOwners}), and the new
 *       exchange joins. {@link #server(int)} is the server that serves a slice now, and {@link #servingRank(int)} the rank
 *       whose exchange runs it. Stream ids are then the {@link Configuration} defaults on every slice's own ports
 *       ({@link Context#streamIdBase(int)} is not used).</li>
 * </ul>
 * Every stream has the term length of {@link Channels#termLength(int)} for the streams of its topology's busiest link, so
 * the driver's log buffers grow with the streams (N² in the sharded topology, at 192 KiB each from N = 16 on), not with
 * Aeron's default IPC term of 64 MiB.
 * <p>
 * Call order: {@link #launch(Context)} → {@link #exchange(int)} once per worker, from the thread that will use
 * it (creation may run on N threads at once; it returns once the worker is connected, and when the workers serve the
 * slices it waits for every other worker's slice server, so their exchanges are created at once) → {@code submit/await}
 * per round on that thread → {@link #close()}, once every worker is done with its rounds, which closes the exchanges (and
 * the slice servers they run, at once: no worker is left to read their results), the job's servers, the client and the
 * driver, in that order.
 * <pre>{@code
 * try (LocalAeronJob job = LocalAeronJob.launch(new LocalAeronJob.Context()
 *         .jobId(1).workers(3).paramCount(model.numParams()).transport(LocalAeronJob.Transport.UDP))) {
 *     // on worker thread i:
 *     VoteExchange exchange = job.exchange(i);
 * }
 * }</pre>
 */
public final class LocalAeronJob implements AutoCloseable {
    /** How the workers reach the servers. */
    public enum Transport {
        /** Shared memory ({@code aeron:ipc}): the fastest, one host only. */
        IPC,
        /** UDP on 127.0.0.1, votes by unicast and results by multi-destination-cast, as on a real cluster. */
        UDP
    }

    private static final String LOOPBACK = "127.0.0.1";

    private final Context ctx;
    private final AeronRuntime runtime;
    /** The job's own servers' thread; null when the workers serve the slices ({@link #topology}). */
    private final AggregationServers serverThread;
    /** The sharded layout the workers serve over UDP; null when the job runs the servers. */
    private final Topology topology;
    private final List<SliceEndpoint> slices;
    /** The server of each slice now: the job's, or the one a worker's exchange runs (null while none does). */
    private final AtomicReferenceArray<AggregationServer> serving;
    private final AtomicReferenceArray<AeronVoteExchange> exchanges;
    private final AtomicIntegerArray claimed;
    private final AtomicReference<Throwable> serverError;
    /** Keeps {@link #serving} up to date as the workers' exchanges start and close slice servers. */
    private final SliceServers.Listener servingListener = new SliceServers.Listener() {
        @Override
        public void onServing(final AggregationServer server, final boolean takenOver) {
            serving.set(server.context().slice(), server);
        }

        @Override
        public void onClosing(final AggregationServer server) {
            serving.compareAndSet(server.context().slice(), server, null);
        }
    };
    private volatile boolean closed;

    private LocalAeronJob(final Context ctx, final AeronRuntime runtime, final AggregationServers serverThread, final Topology topology,
        final List<SliceEndpoint> slices, final AtomicReference<Throwable> serverError) {
        this.serverError = serverError;
        this.ctx = ctx;
        this.runtime = runtime;
        this.serverThread = serverThread;
        this.topology = topology;
        this.slices = slices;
        this.serving = new AtomicReferenceArray<>(ctx.slices);
        if (serverThread != null) {
            for (int s = 0; s < ctx.slices; s++) {
                serving.set(s, serverThread.servers().get(s));
            }
        }
        this.exchanges = new AtomicReferenceArray<>(ctx.workers);
        this.claimed = new AtomicIntegerArray(ctx.workers);
    }

    /**
     * Start the driver (unless an existing one is used), and the servers and their agent thread unless the workers
     * serve the slices (the sharded topology over UDP: there the job only picks the {@link #topology()}).
     *
     * @param ctx configuration, concluded here.
     * @return the running job; close it to stop everything.
     */
    public static LocalAeronJob launch(final Context ctx) {
        ctx.conclude();
        AeronRuntime runtime = null;
        try {
            runtime = AeronRuntime.launch(new AeronRuntime.Context()
                .embeddedDriver(ctx.embeddedDriver).aeronDirectoryName(ctx.aeronDirectoryName));
            if (ctx.workersServe()) {
                // the slice servers bind every address of the host, as a worker process's do: the ports must be free there
                final Topology topology = Topology.sharded(Collections.nCopies(ctx.workers, LOOPBACK),
                    Channels.freeUdpPorts(new InetSocketAddress(0).getAddress(), 2 * ctx.workers));
                return new LocalAeronJob(ctx, runtime, null, topology,
                    topology.endpoints(ctx.paramCount, ctx.chunkWords, ctx.workers, LOOPBACK), new AtomicReference<>());
            }
            final List<AggregationServer.Context> contexts = new ArrayList<>();
            final List<SliceEndpoint> endpoints = new ArrayList<>();
            final long[] bounds = Topology.sliceBounds(ctx.paramCount, ctx.slices, ctx.chunkWords);
            final int streams = Topology.linkStreams(ctx.topology, ctx.workers);
            final AtomicReference<Throwable> error = new AtomicReference<>();
            for (int s = 0; s < ctx.slices; s++) {
                final int voteStream = ctx.streamIdBase + 2 * s;
                final int resultStream = voteStream + 1;
                final String serverVotes;
                final String serverResults;
                final String workerResults;
                if (ctx.transport == Transport.IPC) {
                    serverVotes = Channels.ipc(streams);
                    serverResults = serverVotes;
                    workerResults = serverVotes;
                } else {
                    final int votePort = Channels.freeUdpPort();
                    final int controlPort = Channels.freeUdpPort();
                    serverVotes = Channels.udpVotes(LOOPBACK, votePort, streams);
                    serverResults = Channels.udpResultsPublication(LOOPBACK, controlPort, streams, true);
                    workerResults = Channels.udpResultsSubscription(LOOPBACK, streams);
                }
                final long to = bounds[s + 1];
                contexts.add(new AggregationServer.Context()
                    .aeron(runtime.aeron()).jobId(ctx.jobId).workers(ctx.workers).paramCount(ctx.paramCount).rule(ctx.rule)
                    .slice(s).paramRange(bounds[s], to)
                    .voteChannel(serverVotes).voteStreamId(voteStream)
                    .resultChannel(serverResults).resultStreamId(resultStream).handOverStreamId(ctx.handOverStreamId() + 2 * s)
                    .chunkWords(ctx.chunkWords).windowChunks(ctx.windowChunks).roundTimeoutNs(ctx.roundTimeoutNs)
                    .minVoters(ctx.minVoters).secret(ctx.secret()).frameMac(ctx.frameMac())
                    .errorHandler(ex -> error.compareAndSet(null, ex)));
                endpoints.add(new SliceEndpoint(s, bounds[s], to == ctx.paramCount ? -1 : to, serverVotes, voteStream, workerResults,
                    resultStream));
            }
            return new LocalAeronJob(ctx, runtime, AggregationServers.launch(contexts), null, Collections.unmodifiableList(endpoints), error);
        } catch (final RuntimeException ex) {
            CloseHelper.quietClose(runtime);
            throw ex;
        }
    }

    /**
     * Connect worker {@code workerId}: call it on the thread that will use the exchange. Safe to call from N
     * threads at once, once per worker id.
     *
     * @param workerId in [0, workers).
     * @return the worker's exchange, connected to every slice; the job closes it on {@link #close()}.
     * @throws IllegalArgumentException when the id is out of range.
     * @throws IllegalStateException    when the id was taken already, the job is closed or a slice does not connect in time.
     */
    public VoteExchange exchange(final int workerId) {
        return exchange(workerId, 0);
    }

    /**
     * Connect worker {@code workerId} to a job that is already at round {@code firstRound} (a late or restarted worker
     * that resumed from the job's parameters of that round), on the thread that will use the exchange.
     *
     * @param workerId   in [0, workers).
     * @param firstRound the round the worker submits first.
     * @return the worker's exchange; the job closes it on {@link #close()}.
     */
    public VoteExchange exchange(final int workerId, final long firstRound) {
        return connect(workerId, firstRound, false);
    }

    /**
     * Restart worker {@code workerId} in the running job: its current exchange is closed (as if its process had died)
     * and a new one joins the job without parameters ({@link AeronVoteExchange.Context#join(boolean)}): call
     * {@link AeronVoteExchange#awaitJoin(long)} on it to learn its first round and donor. When the workers serve the
     * slices ({@link #topology()}), the old exchange's slice servers close with it, at once, as a dead process's do; the
     * other workers find them silent and move their slices to the next live rank, and the new exchange finds every
     * slice's server wherever it is now, and serves no slice until a later move gives it one.
     *
     * @param workerId in [0, workers), which has an exchange.
     * @return the worker's new exchange; the job closes it on {@link #close()}.
     */
    public AeronVoteExchange rejoin(final int workerId) {
        checkWorkerId(workerId);
        final AeronVoteExchange old = exchanges.get(workerId);
        if (old == null || !claimed.compareAndSet(workerId, 1, 0)) {
            throw new IllegalStateException("worker " + workerId + " has no exchange to restart");
        }
        old.close();
        return connect(workerId, 0, true);
    }

    private void checkWorkerId(final int workerId) {
        if (workerId < 0 || workerId >= ctx.workers) {
            throw new IllegalArgumentException("workerId must be in [0, workers=" + ctx.workers + "), got " + workerId);
        }
    }

    private AeronVoteExchange connect(final int workerId, final long firstRound, final boolean join) {
        checkWorkerId(workerId);
        if (closed) {
            throw new IllegalStateException("job closed");
        }
        checkServer();
        if (!claimed.compareAndSet(workerId, 0, 1)) {
            throw new IllegalStateException("worker " + workerId + " already has an exchange");
        }
        final AeronVoteExchange exchange;
        try {
            final AeronVoteExchange.Context exchangeCtx = new AeronVoteExchange.Context()
                .aeron(runtime.aeron()).jobId(ctx.jobId).workerId(workerId).workers(ctx.workers).paramCount(ctx.paramCount)
                .rule(ctx.rule).chunkWords(ctx.chunkWords).connectTimeoutNs(ctx.connectTimeoutNs).secret(ctx.secret())
                .frameMac(ctx.frameMac()).firstRound(firstRound).join(join);
            if (topology != null) {
                // the worker process's path: this rank serves its slice (reached by IPC) and takes over a dead rank's
                exchangeCtx.topology(topology).sliceServers(new SliceServers.Context()
                    .roundTimeoutNs(ctx.roundTimeoutNs).minVoters(ctx.minVoters).windowChunks(ctx.windowChunks)
                    .lingerNs(0).listener(servingListener).errorHandler(ex -> serverError.compareAndSet(null, ex)));
            } else {
                exchangeCtx.slices(slices);
            }
            exchange = new AeronVoteExchange(exchangeCtx);
        } catch (final RuntimeException ex) {
            claimed.set(workerId, 0);
            throw ex;
        }
        exchanges.set(workerId, exchange);
        if (closed) {
            exchange.close();
            throw new IllegalStateException("job closed");
        }
        return exchange;
    }

    /** @return the counters of slice 0's server (the only one unless {@link Context#slices(int)} > 1). */
    public ServerCounters serverCounters() {
        return serverCounters(0);
    }

    /**
     * @param slice index of a slice.
     * @return the channel its server publishes results on (for UDP, the port its workers' status messages go to).
     * @throws IllegalStateException when no server serves the slice now.
     */
    public String resultChannel(final int slice) {
        return servingNow(slice).context().resultChannel();
    }

    /**
     * @param slice index in [0, slices).
     * @return the counters of that slice's server now (when the workers serve the slices, a server taken over counts
     *     from its start).
     * @throws IllegalStateException when no server serves the slice now.
     */
    public ServerCounters serverCounters(final int slice) {
        return servingNow(slice).counters();
    }

    /**
     * @param slice index in [0, slices).
     * @return that slice's server now (its agent runs on a thread of its own or the job's: read only its counters from
     *     elsewhere); null while no server serves it (a dead rank's slice not yet taken over, or a worker not yet
     *     connected, when the workers serve the slices).
     */
    public AggregationServer server(final int slice) {
        return serving.get(slice);
    }

    /**
     * @param slice index in [0, slices).
     * @return the rank whose exchange serves the slice now ({@link #topology()}), or -1 for a server of the job's own, or
     *     while none serves it.
     */
    public int servingRank(final int slice) {
        final AggregationServer server = serving.get(slice);
        return server == null ? -1 : server.context().servingRank();
    }

    private AggregationServer servingNow(final int slice) {
        final AggregationServer server = serving.get(slice);
        if (server == null) {
            throw new IllegalStateException("no server serves slice " + slice + " now");
        }
        return server;
    }

    /**
     * @return the sharded layout whose slices the workers' exchanges serve (the sharded topology over UDP), for an
     *     exchange built by hand ({@link AeronVoteExchange.Context#topology(Topology)}); null when the job runs the
     *     servers.
     */
    public Topology topology() {
        return topology;
    }

    /**
     * @return the workers' view of every slice: parameter slices and channels, in order (with {@link #topology()}, its
     *     endpoints over UDP, as a rank that does not serve the slice reaches it).
     */
    public List<SliceEndpoint> slices() {
        return slices;
    }

    /** @return the job's Aeron client (owned by the job), to add more publications or counters on its driver. */
    public Aeron aeron() {
        return runtime.aeron();
    }

    /** @return the Aeron directory of the driver (for {@code AeronStat}). */
    public String aeronDirectoryName() {
        return runtime.aeronDirectoryName();
    }

    /** @return the configuration. */
    public Context context() {
        return ctx;
    }

    /** @return the error that stopped the servers' agent, or null while they run. */
    public Throwable serverError() {
        return serverError.get();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        final List<AutoCloseable> toClose = new ArrayList<>();
        for (int i = 0; i < exchanges.length(); i++) {
            toClose.add(exchanges.getAndSet(i, null));
        }
        CloseHelper.closeAll(toClose);
        CloseHelper.closeAll(serverThread, runtime);
    }

    private void checkServer() {
        final Throwable error = serverError.get();
        if (error != null) {
            throw new IllegalStateException("aggregation server failed", error);
        }
    }

    /**
     * Configuration of a local job: the job's shared settings ({@link JobContext}), passed on to its servers and workers,
     * and how to run them. Required: {@link #jobId(int)}, {@link #workers(int)}, {@link #paramCount(long)}.
     */
    public static final class Context extends JobContext<Context> {
        private Transport transport = Transport.IPC;
        private int slices = 1;
        private Topology.Kind topology = Topology.Kind.STAR;
        private long roundTimeoutNs = TimeUnit.MILLISECONDS.toNanos(Configuration.roundTimeoutMs());
        private long connectTimeoutNs = TimeUnit.MILLISECONDS.toNanos(Configuration.connectTimeoutMs());
        private int windowChunks = Configuration.windowChunks();
        private int streamIdBase = Configuration.VOTE_STREAM_ID_DEFAULT;
        private boolean embeddedDriver = true;
        private String aeronDirectoryName;
        private int minVoters;

        /**
         * Validate once.
         *
         * @return this for a fluent API.
         * @throws IllegalArgumentException naming the field that is wrong.
         */
        @Override
        public Context conclude() {
            super.conclude();
            Objects.requireNonNull(transport, "transport");
            if (roundTimeoutNs <= 0) {
                throw new IllegalArgumentException("roundTimeoutNs must be > 0, got " + roundTimeoutNs);
            }
            if (connectTimeoutNs <= 0) {
                throw new IllegalArgumentException("connectTimeoutNs must be > 0, got " + connectTimeoutNs);
            }
            if (windowChunks < 1) {
                throw new IllegalArgumentException("windowChunks must be >= 1, got " + windowChunks);
            }
            Topology.checkJobKind("topology", topology);
            if (topology == Topology.Kind.SHARDED) {
                if (slices != 1 && slices != workers) {
                    throw new IllegalArgumentException("slices must be the workers (" + workers + ") in the sharded topology, got " + slices);
                }
                slices = workers;
                chunkWords(Topology.chunkWords(paramCount, slices, chunkWords));
            }
            final long chunks = (((paramCount + 63) >>> 6) + chunkWords - 1) / chunkWords;
            if (slices < 1 || slices > chunks) {
                throw new IllegalArgumentException("slices must be in [1, chunks=" + chunks + "], got " + slices);
            }
            if (streamIdBase < 1 || streamIdBase > Integer.MAX_VALUE - 4 * slices - Configuration.HANDOVER_STREAM_OFFSET) {
                throw new IllegalArgumentException("streamIdBase must be >= 1 and leave room for 2 streams per slice and the hand-over"
                    + " streams, got " + streamIdBase);
            }
            if (!embeddedDriver && aeronDirectoryName == null) {
                throw new IllegalArgumentException("aeronDirectoryName must be set when embeddedDriver is false");
            }
            if (minVoters == 0) {
                minVoters = workers / 2 + 1;
            }
            if (minVoters < 1 || minVoters > workers) {
                throw new IllegalArgumentException("minVoters must be in [1, workers=" + workers + "], got " + minVoters);
            }
            return this;
        }

        /**
         * @param transport IPC (default) or UDP on 127.0.0.1.
         * @return this for a fluent API.
         */
        public Context transport(final Transport transport) {
            this.transport = transport;
            return this;
        }

        public Transport transport() {
            return transport;
        }

        /**
         * @param slices number of aggregation servers, each owning a slice of whole chunks (default 1).
         * @return this for a fluent API.
         */
        public Context slices(final int slices) {
            this.slices = slices;
            return this;
        }

        public int slices() {
            return slices;
        }

        /**
         * @param topology {@link Topology.Kind#STAR} (default: {@link #slices(int)} servers, one unless set) or
         *                 {@link Topology.Kind#SHARDED} (a slice server per worker, S = N: over UDP each worker's exchange
         *                 serves its slice and takes over a dead rank's, {@link #workersServe()}; over IPC the job launches
         *                 them and they never move).
         * @return this for a fluent API.
         */
        public Context topology(final Topology.Kind topology) {
            this.topology = topology;
            return this;
        }

        public Topology.Kind topology() {
            return topology;
        }

        /**
         * @param roundTimeoutNs how long a server keeps a round open.
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
         * @param connectTimeoutNs how long {@link LocalAeronJob#exchange(int)} waits for a worker to connect.
         * @return this for a fluent API.
         */
        public Context connectTimeoutNs(final long connectTimeoutNs) {
            this.connectTimeoutNs = connectTimeoutNs;
            return this;
        }

        public long connectTimeoutNs() {
            return connectTimeoutNs;
        }

        /**
         * @param windowChunks chunks a server holds per worker at once.
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
         * @param streamIdBase vote stream of slice 0; slice s uses {@code base + 2s} for votes and {@code base + 2s + 1}
         *                     for results (change it to run two jobs on one driver). Not used when the workers serve the
         *                     slices ({@link #workersServe()}): their servers use the {@link Configuration} streams, each
         *                     slice on ports of its own.
         * @return this for a fluent API.
         */
        public Context streamIdBase(final int streamIdBase) {
            this.streamIdBase = streamIdBase;
            return this;
        }

        public int streamIdBase() {
            return streamIdBase;
        }

        /**
         * @return the hand-over stream of slice 0's server: its vote stream + {@link Configuration#HANDOVER_STREAM_OFFSET},
         *     or past every slice's vote and result streams when there are more than that many (it relays on the next id;
         *     slice s's server uses this + 2s). When the workers serve the slices, the servers' default: the
         *     {@link Configuration} vote stream + {@link Configuration#HANDOVER_STREAM_OFFSET}.
         */
        public int handOverStreamId() {
            if (workersServe()) {
                return Configuration.VOTE_STREAM_ID_DEFAULT + Configuration.HANDOVER_STREAM_OFFSET;
            }
            return streamIdBase + Math.max(Configuration.HANDOVER_STREAM_OFFSET, 2 * slices);
        }

        /**
         * @return true for the sharded topology over UDP, where every worker's exchange serves its slice and takes over a
         *     dead rank's; false where the job launches the servers.
         */
        public boolean workersServe() {
            return topology == Topology.Kind.SHARDED && transport == Transport.UDP;
        }

        /**
         * @param embeddedDriver true (default) to launch a driver in this JVM, false to use the running driver of
         *                       {@link #aeronDirectoryName(String)}.
         * @return this for a fluent API.
         */
        public Context embeddedDriver(final boolean embeddedDriver) {
            this.embeddedDriver = embeddedDriver;
            return this;
        }

        public boolean embeddedDriver() {
            return embeddedDriver;
        }

        /**
         * @param aeronDirectoryName of the driver; null (default) for a fresh directory of the embedded driver.
         * @return this for a fluent API.
         */
        public Context aeronDirectoryName(final String aeronDirectoryName) {
            this.aeronDirectoryName = aeronDirectoryName;
            return this;
        }

        public String aeronDirectoryName() {
            return aeronDirectoryName;
        }

        /**
         * @param minVoters the quorum: a round whose deadline passes with fewer votes is aborted; default (0) a majority
         *                  of the workers.
         * @return this for a fluent API.
         */
        public Context minVoters(final int minVoters) {
            this.minVoters = minVoters;
            return this;
        }

        public int minVoters() {
            return minVoters;
        }

    }
}
