package io.dlion.aeron;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Who serves which slice of the parameters, and where: the one place that says it.
 * <ul>
 *   <li><b>star</b>: one aggregation server (S = 1) owns every parameter; every worker sends its whole vote to it and
 *       reads every result from it. Its link carries N votes in and N copies of the result out.</li>
 *   <li><b>sharded</b>: every worker process also serves one slice (S = N): rank {@code r} serves slice {@code r} on
 *       {@code hosts[r]}, votes on port {@code basePort + 2r}, results controlled from {@code basePort + 2r + 1}. A
 *       worker sends each slice of its vote to the slice's owner and reads every owner's result slice, so every link
 *       carries about {@code 2·(N−1)/N} vote-sized payloads each way, whatever N is (the all-to-all and all-gather of
 *       a 1-bit compressed all-reduce); its own slice never leaves its process: a worker reaches the server in its own
 *       process by IPC ({@link #servedHere(List, int)}).</li>
 *   <li><b>dedicated servers</b>: S server processes, one slice each, on hosts and ports of their own
 *       ({@link #servers(List, int)}): the same layout without workers serving.</li>
 * </ul>
 * Slices are whole chunks, as even as chunks allow ({@link #sliceBounds(long, int, int)}): slice {@code s} holds chunks
 * {@code [C·s/S, C·(s+1)/S)} of the {@code C} chunks, the layout every server ({@code --slice}) and worker must share.
 * Channels come from {@link Channels}, so their link settings are the same for every topology. Immutable.
 */
public final class Topology {
    /** The kinds of topology; a job's configuration and the {@code --topology} option name the first two. */
    public enum Kind {
        /** One aggregation server for every parameter. */
        STAR,
        /** Every worker serves a slice. */
        SHARDED,
        /** Dedicated server processes, one slice each. */
        SERVERS;

        /** @return the name as the {@code --topology} option and the logs spell it: star, sharded, servers. */
        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Where the IPC streams of slices served in a worker's own process begin ({@link #localVoteStreamId(int)}). */
    public static final int LOCAL_STREAM_BASE = 1 << 20;

    private final Kind kind;
    private final List<String> hosts;
    private final int[] votePorts;
    private final int[] controlPorts;
    /** Per host index: whether it is this host ({@link Channels#isLocal(String)}), looked up once per distinct host on first use. */
    private volatile boolean[] localHosts;

    private Topology(final Kind kind, final List<String> hosts, final int[] votePorts, final int[] controlPorts) {
        this.kind = kind;
        this.hosts = List.copyOf(hosts);
        this.votePorts = votePorts;
        this.controlPorts = controlPorts;
        for (int s = 0; s < hosts.size(); s++) {
            checkPort("vote port of slice " + s, votePorts[s]);
            checkPort("control port of slice " + s, controlPorts[s]);
        }
    }

    /**
     * @param host        the server's address.
     * @param votePort    its vote port.
     * @param controlPort its result control port.
     * @return one server for every parameter.
     */
    public static Topology star(final String host, final int votePort, final int controlPort) {
        return new Topology(Kind.STAR, List.of(host), new int[] {votePort}, new int[] {controlPort});
    }

    /**
     * @param hosts    the address of every worker, by rank: rank r serves slice r.
     * @param basePort vote port of slice 0; slice r uses {@code basePort + 2r} and {@code basePort + 2r + 1}.
     * @return every worker serves a slice.
     */
    public static Topology sharded(final List<String> hosts, final int basePort) {
        return spread(Kind.SHARDED, hosts, basePort);
    }

    /**
     * Every worker serves a slice, each on ports of its own choosing (Spark's tasks, which learn each other's ports by
     * {@code allGather}).
     *
     * @param hosts     the address of every worker, by rank.
     * @param votePorts the vote port of every worker's slice server, by rank; its control port is the next.
     * @return every worker serves a slice.
     */
    public static Topology sharded(final List<String> hosts, final int[] votePorts) {
        if (votePorts.length != hosts.size()) {
            throw new IllegalArgumentException("votePorts: one per host (" + hosts.size() + "), got " + votePorts.length);
        }
        final int[] control = new int[votePorts.length];
        for (int s = 0; s < control.length; s++) {
            control[s] = votePorts[s] + 1;
        }
        checkHosts(hosts);
        return new Topology(Kind.SHARDED, hosts, votePorts.clone(), control);
    }

    /**
     * @param hosts    the address of every server process, by slice.
     * @param basePort vote port of slice 0; slice s uses {@code basePort + 2s} and {@code basePort + 2s + 1}.
     * @return S dedicated servers.
     */
    public static Topology servers(final List<String> hosts, final int basePort) {
        return spread(Kind.SERVERS, hosts, basePort);
    }

    private static Topology spread(final Kind kind, final List<String> hosts, final int basePort) {
        checkHosts(hosts);
        final int[] vote = new int[hosts.size()];
        final int[] control = new int[hosts.size()];
        for (int s = 0; s < hosts.size(); s++) {
            vote[s] = basePort + 2 * s;
            control[s] = basePort + 2 * s + 1;
        }
        return new Topology(kind, hosts, vote, control);
    }

    private static void checkHosts(final List<String> hosts) {
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("hosts must name at least one host");
        }
        for (int s = 0; s < hosts.size(); s++) {
            if (hosts.get(s) == null || hosts.get(s).isBlank()) {
                throw new IllegalArgumentException("hosts: the host of slice " + s + " is empty");
            }
        }
    }

    /**
     * @param what the setting, named in the exception.
     * @param kind the kind of a job's topology.
     * @return the kind, {@link Kind#STAR} or {@link Kind#SHARDED}: a job's workers run the one or the other.
     * @throws IllegalArgumentException naming the setting for {@link Kind#SERVERS}.
     * @throws NullPointerException     naming the setting for null.
     */
    public static Kind checkJobKind(final String what, final Kind kind) {
        Objects.requireNonNull(kind, what);
        if (kind == Kind.SERVERS) {
            throw new IllegalArgumentException(what + " must be " + Kind.STAR + " or " + Kind.SHARDED + ", got " + kind);
        }
        return kind;
    }

    private static void checkPort(final String what, final int port) {
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException(what + " must be in [1, 65535], got " + port);
        }
    }

    /**
     * Slice bounds in parameters, each a whole number of chunks but the last: slice {@code s} is
     * {@code [bounds[s], bounds[s + 1])}.
     *
     * @param paramCount parameters of the job.
     * @param slices     slices, at least 1.
     * @param chunkWords 64-parameter words per chunk.
     * @return {@code slices + 1} bounds, from 0 to {@code paramCount}.
     */
    public static long[] sliceBounds(final long paramCount, final int slices, final int chunkWords) {
        if (slices < 1) {
            throw new IllegalArgumentException("slices must be >= 1, got " + slices);
        }
        final long totalWords = (paramCount + 63) >>> 6;
        final long chunks = (totalWords + chunkWords - 1) / chunkWords;
        if (slices > chunks) {
            throw new IllegalArgumentException(slices + " slices need at least as many chunks; " + paramCount + " parameters make " + chunks
                + " chunks of " + chunkWords + " words");
        }
        final long[] bounds = new long[slices + 1];
        for (int s = 1; s < slices; s++) {
            bounds[s] = chunks * s / slices * chunkWords * Long.SIZE;
        }
        bounds[slices] = paramCount;
        return bounds;
    }

    /**
     * The chunk size every process of the job uses: the requested one when the parameters make at least one chunk per
     * slice, else the largest multiple of {@value io.dlion.aeron.wire.ChunkLayout#WORD_ALIGNMENT} words that does (a small
     * model in a sharded job: the MLP's 203,530 parameters are 4 chunks of 1,000 words, 32 of 100). Every server and
     * worker computes it from the same three numbers, so they agree.
     *
     * @param paramCount parameters of the job.
     * @param requested  words per chunk asked for (the default, or {@code --chunk-words}).
     * @return words per chunk.
     * @throws IllegalArgumentException when even the smallest chunk gives fewer chunks than slices.
     */
    public int chunkWords(final long paramCount, final int requested) {
        return chunkWords(paramCount, slices(), requested);
    }

    /**
     * The chunk size of a job of {@code slices} slices, as {@link #chunkWords(long, int)}.
     *
     * @param paramCount parameters of the job.
     * @param slices     slices of the job, at least 1.
     * @param requested  words per chunk asked for.
     * @return words per chunk.
     * @throws IllegalArgumentException when even the smallest chunk gives fewer chunks than slices.
     */
    public static int chunkWords(final long paramCount, final int slices, final int requested) {
        final long words = (paramCount + 63) >>> 6;
        if ((words + requested - 1) / requested >= slices) {
            return requested;
        }
        final int align = io.dlion.aeron.wire.ChunkLayout.WORD_ALIGNMENT;
        final long fit = words / slices / align * align;
        if (fit < align) {
            throw new IllegalArgumentException(slices + " slices need at least as many chunks; " + paramCount + " parameters make "
                + (words + align - 1) / align + " chunks of the smallest size, " + align + " words");
        }
        return (int)Math.min(requested, fit);
    }

    /** @return the kind: star, sharded or dedicated servers. */
    public Kind kind() {
        return kind;
    }

    /** @return the number of slices S. */
    public int slices() {
        return hosts.size();
    }

    /** @return the host that serves slice {@code s}. */
    public String host(final int s) {
        return hosts.get(s);
    }

    /** @return the vote port of slice {@code s}'s server. */
    public int votePort(final int s) {
        return votePorts[s];
    }

    /** @return the result control port of slice {@code s}'s server. */
    public int controlPort(final int s) {
        return controlPorts[s];
    }

    /**
     * @param s a slice of a sharded job.
     * @return the IPC stream slice {@code s}'s server reads the votes of a worker in its own process from: unique on the
     *     host, as the slice's vote port is, and above every configured stream id ({@link #LOCAL_STREAM_BASE}).
     */
    public int localVoteStreamId(final int s) {
        return LOCAL_STREAM_BASE + 2 * votePorts[s];
    }

    /**
     * @param s a slice of a sharded job.
     * @return the IPC stream slice {@code s}'s server publishes its frames on for a worker in its own process.
     */
    public int localResultStreamId(final int s) {
        return LOCAL_STREAM_BASE + 2 * votePorts[s] + 1;
    }

    /**
     * @param workers the workers of the job.
     * @return the IPC channel of a slice's local streams, with the terms of the job's UDP streams.
     */
    public String localChannel(final int workers) {
        return Channels.ipc(linkStreams(workers));
    }

    /**
     * The endpoints of a worker whose own process serves slice {@code rank} (a sharded job's rank, not joining): that
     * slice's votes and results go by IPC through the process's media driver, not through the kernel's UDP (at N = 2
     * half of a process's datagrams); the others are unchanged.
     *
     * @param endpoints the worker's endpoints, one per slice of this topology.
     * @param rank      the slice this process serves, or -1 for none (the endpoints are returned as they are).
     * @return the endpoints, a new list.
     */
    public List<SliceEndpoint> servedHere(final List<SliceEndpoint> endpoints, final int rank) {
        final List<SliceEndpoint> out = new ArrayList<>(endpoints);
        if (kind == Kind.SHARDED && rank >= 0) {
            if (endpoints.size() != slices() || endpoints.get(rank).slice() != rank) {
                throw new IllegalArgumentException("endpoints must be this topology's, one per slice in order: " + endpoints);
            }
            out.set(rank, endpoints.get(rank).withLocal(localChannel(slices()), localVoteStreamId(rank), localResultStreamId(rank)));
        }
        return out;
    }

    /**
     * The streams of the job that share the busiest link, the divisor of every receiver window ({@link Channels}): in
     * the star and with dedicated servers, a server's link (N vote streams in, N copies of each result out); in the
     * sharded topology, a worker's link, which takes the votes of N workers for its slice and the results of N slices
     * (and sends as many), so 2N.
     *
     * @param workers the workers of the job.
     * @return the streams that share one link.
     */
    public int linkStreams(final int workers) {
        return linkStreams(kind, workers);
    }

    /**
     * @param kind    of a topology.
     * @param workers the workers of the job.
     * @return the streams that share one link, as {@link #linkStreams(int)}.
     */
    public static int linkStreams(final Kind kind, final int workers) {
        return kind == Kind.SHARDED ? 2 * workers : workers;
    }

    /**
     * @param s       a slice.
     * @param workers the workers of the job.
     * @return the vote channel slice {@code s}'s server subscribes to, on every address of its host.
     */
    public String serverVoteChannel(final int s, final int workers) {
        return Channels.udpVotes("0.0.0.0", votePorts[s], linkStreams(workers), false);
    }

    /**
     * @param s       a slice.
     * @param workers the workers of the job.
     * @return the result publication of slice {@code s}'s server, controlled from every address of its host; with the
     *     MTU of a channel that stays on this host ({@link Channels#localMtu(int)}) when the topology is sharded and every
     *     worker's host is this one.
     */
    public String serverResultChannel(final int s, final int workers) {
        boolean local = kind == Kind.SHARDED;
        for (int r = 0; local && r < hosts.size(); r++) {
            local = isLocalHost(r);
        }
        return Channels.udpResultsPublication("0.0.0.0", controlPorts[s], linkStreams(workers), local);
    }

    /**
     * Where a worker sends each slice of its vote and reads each slice's result, in slice order.
     *
     * @param paramCount parameters of the job.
     * @param chunkWords 64-parameter words per chunk, as the servers'.
     * @param workers    the workers of the job.
     * @param localHost  this worker's address the results arrive on.
     * @return one endpoint per slice.
     */
    public List<SliceEndpoint> endpoints(final long paramCount, final int chunkWords, final int workers, final String localHost) {
        return endpoints(paramCount, chunkWords, workers, localHost, -1);
    }

    /**
     * The same endpoints, with slice 0's result subscription tagged so that a second subscription of this process (a
     * network hand-over, relayed by slice 0's server) shares its endpoint ({@link Channels#udpResultsSubscription(String,
     * int, long)}).
     *
     * @param paramCount parameters of the job.
     * @param chunkWords 64-parameter words per chunk, as the servers'.
     * @param workers    the workers of the job.
     * @param localHost  this worker's address the results arrive on.
     * @param tag        the tag of slice 0's result channel, unique in the media driver; -1 for none.
     * @return one endpoint per slice.
     */
    public List<SliceEndpoint> endpoints(final long paramCount, final int chunkWords, final int workers, final String localHost,
        final long tag) {
        final long[] bounds = sliceBounds(paramCount, slices(), chunkWords);
        final int streams = linkStreams(workers);
        final List<SliceEndpoint> endpoints = new ArrayList<>(slices());
        for (int s = 0; s < slices(); s++) {
            endpoints.add(new SliceEndpoint(s, bounds[s], s == slices() - 1 ? -1 : bounds[s + 1],
                voteChannel(s, s, workers), Configuration.VOTE_STREAM_ID_DEFAULT,
                s == 0 && tag >= 0 ? Channels.udpResultsSubscription(localHost, streams, tag) : Channels.udpResultsSubscription(localHost, streams),
                Configuration.RESULT_STREAM_ID_DEFAULT));
        }
        return endpoints;
    }

    /**
     * @param s       a slice.
     * @param rank    the rank (host index) serving it now.
     * @param workers the workers of the job.
     * @return the channel workers send slice {@code s}'s votes on to its server on rank {@code rank}'s host: the slice's
     *     vote port there, with the MTU of a channel that stays on this host when that host is this one.
     */
    public String voteChannel(final int s, final int rank, final int workers) {
        return Channels.udpVotes(hosts.get(rank), votePorts[s], linkStreams(workers), isLocalHost(rank));
    }

    /**
     * @param rank a host index (a rank, or a slice of the star and dedicated servers).
     * @return whether that host is this one ({@link Channels#isLocal(String)}); each distinct host is looked up once, on the
     *     first call, so that a failover at a thousand ranks does not resolve a thousand addresses.
     */
    public boolean isLocalHost(final int rank) {
        boolean[] local = localHosts;
        if (local == null) {
            local = new boolean[hosts.size()];
            final Map<String, Boolean> seen = new HashMap<>();
            for (int r = 0; r < local.length; r++) {
                local[r] = seen.computeIfAbsent(hosts.get(r), Channels::isLocal);
            }
            localHosts = local;
        }
        return local[rank];
    }

    @Override
    public String toString() {
        final StringBuilder sb = new StringBuilder(kind.toString()).append('[');
        for (int s = 0; s < slices(); s++) {
            sb.append(s == 0 ? "" : ", ").append(hosts.get(s)).append(':').append(votePorts[s]).append(':').append(controlPorts[s]);
        }
        return sb.append(']').toString();
    }
}
