package io.dlion.cli.train;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Channels;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.Topology;
import io.dlion.aeron.client.AeronMeanExchange;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.server.AggregationServers;
import io.dlion.aeron.server.Payload;
import io.dlion.aeron.wire.GradientChunkFlyweight;
import io.dlion.exchange.MeanExchange;
import org.agrona.CloseHelper;

/**
 * Where the workers of dense data-parallel training send their gradients: {@link AggregationServer}s of
 * {@link Payload#FP32} in this JVM (IPC or UDP on 127.0.0.1, {@link #local}: one for the star, one per worker for the
 * sharded topology) or the servers of a job on other hosts ({@link #remote}, the same settings as a D-Lion worker's
 * {@link RemoteTransport}).
 */
public final class DenseTransport implements AutoCloseable {
    private static final String LOOPBACK = "127.0.0.1";
    private static final int JOB = 1;

    private final AeronRuntime runtime;
    private final boolean ownsRuntime;
    private final AggregationServers servers;
    private final AtomicReference<Throwable> serverError;
    private final AeronMeanExchange.Context template;

    private DenseTransport(final AeronRuntime runtime, final boolean ownsRuntime, final AggregationServers servers,
        final AtomicReference<Throwable> serverError, final AeronMeanExchange.Context template) {
        this.runtime = runtime;
        this.ownsRuntime = ownsRuntime;
        this.servers = servers;
        this.serverError = serverError;
        this.template = template;
    }

    /**
     * A whole dense job in this JVM: embedded driver, the servers on one thread of their own, one exchange per worker.
     * The star has one server; the sharded topology one slice server per worker ({@link Topology#sliceBounds} on the
     * dense chunk grid, a reduce-scatter of the gradients, then an all-gather of the means), launched here on one thread
     * as {@link io.dlion.aeron.LocalAeronJob} launches a sharded D-Lion job's over IPC; these slices never move.
     *
     * @param udp      UDP on 127.0.0.1 (results by multi-destination-cast), else IPC.
     * @param topology {@link Topology.Kind#STAR} or {@link Topology.Kind#SHARDED}.
     * @param workers  workers of the job.
     * @param params   parameters of the model.
     * @return the transport.
     */
    static DenseTransport local(final boolean udp, final Topology.Kind topology, final int workers, final long params) {
        final boolean sharded = Topology.checkJobKind("topology", topology) == Topology.Kind.SHARDED;
        final int slices = sharded ? workers : 1;
        final long[] bounds = Topology.sliceBounds(params, slices, GradientChunkFlyweight.CHUNK_WORDS);
        final int streams = Topology.linkStreams(topology, workers);
        final AeronRuntime runtime = AeronRuntime.launch(new AeronRuntime.Context());
        try {
            final List<AggregationServer.Context> contexts = new ArrayList<>();
            final List<SliceEndpoint> endpoints = new ArrayList<>();
            final AtomicReference<Throwable> error = new AtomicReference<>();
            for (int s = 0; s < slices; s++) {
                final String serverVotes;
                final String serverResults;
                final String workerResults;
                if (udp) {
                    final int votePort = Channels.freeUdpPort();
                    final int controlPort = Channels.freeUdpPort();
                    serverVotes = Channels.udpVotes(LOOPBACK, votePort, streams);
                    serverResults = Channels.udpResultsPublication(LOOPBACK, controlPort, streams, true);
                    workerResults = Channels.udpResultsSubscription(LOOPBACK, streams);
                } else {
                    // the star keeps Aeron's default IPC term; N slice servers cut theirs as a sharded D-Lion job does
                    serverVotes = sharded ? Channels.ipc(streams) : Channels.ipc();
                    serverResults = serverVotes;
                    workerResults = serverVotes;
                }
                final int voteStream = Configuration.VOTE_STREAM_ID_DEFAULT + 2 * s;
                final int resultStream = voteStream + 1;
                contexts.add(new AggregationServer.Context().payload(Payload.FP32)
                    .aeron(runtime.aeron()).jobId(JOB).workers(workers).paramCount(params).slice(s).paramRange(bounds[s], bounds[s + 1])
                    .voteChannel(serverVotes).voteStreamId(voteStream).resultChannel(serverResults).resultStreamId(resultStream)
                    .roundTimeoutNs(TimeUnit.MINUTES.toNanos(10)).errorHandler(ex -> error.compareAndSet(null, ex)));
                endpoints.add(new SliceEndpoint(s, bounds[s], s == slices - 1 ? -1 : bounds[s + 1], serverVotes, voteStream, workerResults,
                    resultStream));
            }
            return new DenseTransport(runtime, true, AggregationServers.launch(contexts), error, new AeronMeanExchange.Context()
                .aeron(runtime.aeron()).jobId(JOB).workers(workers).paramCount(params).slices(endpoints));
        } catch (final RuntimeException ex) {
            CloseHelper.quietClose(runtime);
            throw ex;
        }
    }

    /**
     * A worker process's link to the dense servers of its job's {@link io.dlion.aeron.Topology}: the star's one server
     * ({@code ./dlion server --sharing dense} on another host), or every rank's slice server of a sharded job (a
     * reduce-scatter of the gradients, then an all-gather of the means). Gradients go to each server by UDP unicast,
     * means come from each server's multi-destination-cast publication.
     *
     * @param s      where the servers are (rule, loss rate, first round and join do not apply).
     * @param shared the runtime of this process's slice server, or null for an embedded driver of the transport's own.
     * @return the transport.
     */
    public static DenseTransport remote(final RemoteTransport.Settings s, final AeronRuntime shared) {
        final AeronRuntime runtime = shared != null ? shared : AeronRuntime.launch(new AeronRuntime.Context().embeddedDriver(s.aeronDir() == null)
            .aeronDirectoryName(s.aeronDir()));
        final int chunkWords = s.topology().chunkWords(s.params(), GradientChunkFlyweight.CHUNK_WORDS);
        return new DenseTransport(runtime, shared == null, null, null, new AeronMeanExchange.Context()
            .aeron(runtime.aeron()).jobId(s.job()).workers(s.workers()).paramCount(s.params())
            .connectTimeoutNs(TimeUnit.MINUTES.toNanos(5)).secret(s.secret())
            .slices(s.topology().endpoints(s.params(), chunkWords, s.workers(), s.localHost())));
    }

    /**
     * @param id a worker id.
     * @return a new exchange for that worker, connected to the server.
     */
    MeanExchange exchange(final int id) {
        final Throwable error = serverError == null ? null : serverError.get();
        if (error != null) {
            throw new IllegalStateException("dense server failed: " + error.getMessage(), error);
        }
        return new AeronMeanExchange(copyOf(template).workerId(id));
    }

    /** @return the servers the workers' gradients go to: one for the star, one per worker for the sharded topology. */
    int slices() {
        return template.slices().size();
    }

    private static AeronMeanExchange.Context copyOf(final AeronMeanExchange.Context t) {
        // a context is concluded by the exchange it configures: every worker gets its own
        return new AeronMeanExchange.Context().aeron(t.aeron()).jobId(t.jobId()).workers(t.workers()).paramCount(t.paramCount())
            .secret(t.secret()).connectTimeoutNs(t.connectTimeoutNs()).slices(t.slices());
    }

    @Override
    public void close() {
        CloseHelper.close(servers);
        if (ownsRuntime) {
            CloseHelper.close(runtime);
        }
    }
}
