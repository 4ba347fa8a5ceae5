package io.dlion.cli.train;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Channels;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.ShardEndpoint;
import io.dlion.aeron.client.AeronMeanExchange;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.server.Payload;
import io.dlion.aeron.wire.GradientChunkFlyweight;
import io.dlion.exchange.MeanExchange;
import org.agrona.CloseHelper;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;

/**
 * Where the workers of dense data-parallel training send their gradients: an {@link AggregationServer} of
 * {@link Payload#FP32} in this JVM
 * (IPC or UDP on 127.0.0.1, {@link #local}) or a {@code ./dlion server --sharing dense} on another host
 * ({@link #remote}, the same settings as a D-Lion worker's {@link RemoteTransport}).
 */
public final class DenseTransport implements AutoCloseable {
    private static final String LOOPBACK = "127.0.0.1";
    private static final int JOB = 1;

    private final AeronRuntime runtime;
    private final boolean ownsRuntime;
    private final AgentRunner serverRunner;
    private final AtomicReference<Throwable> serverError;
    private final AeronMeanExchange.Context template;

    private DenseTransport(final AeronRuntime runtime, final boolean ownsRuntime, final AgentRunner serverRunner,
        final AtomicReference<Throwable> serverError, final AeronMeanExchange.Context template) {
        this.runtime = runtime;
        this.ownsRuntime = ownsRuntime;
        this.serverRunner = serverRunner;
        this.serverError = serverError;
        this.template = template;
    }

    /**
     * A whole dense job in this JVM: embedded driver, the server on its own thread, one exchange per worker.
     *
     * @param udp     UDP on 127.0.0.1 (results by multi-destination-cast), else IPC.
     * @param workers workers of the job.
     * @param params  parameters of the model.
     * @return the transport.
     */
    static DenseTransport local(final boolean udp, final int workers, final long params) {
        final AeronRuntime runtime = AeronRuntime.launch(new AeronRuntime.Context());
        AgentRunner runner = null;
        try {
            final String serverVotes;
            final String serverResults;
            final String workerResults;
            if (udp) {
                final int votePort = freeUdpPort();
                final int controlPort = freeUdpPort();
                serverVotes = Channels.udpVotes(LOOPBACK, votePort, workers);
                serverResults = Channels.udpResultsPublication(LOOPBACK, controlPort, workers);
                workerResults = Channels.udpResultsSubscription(LOOPBACK, workers);
            } else {
                serverVotes = Channels.ipc();
                serverResults = Channels.ipc();
                workerResults = Channels.ipc();
            }
            final int voteStream = Configuration.VOTE_STREAM_ID_DEFAULT;
            final int resultStream = Configuration.RESULT_STREAM_ID_DEFAULT;
            final AggregationServer server = new AggregationServer(new AggregationServer.Context().payload(Payload.FP32)
                .aeron(runtime.aeron()).jobId(JOB).workers(workers).paramCount(params)
                .voteChannel(serverVotes).voteStreamId(voteStream).resultChannel(serverResults).resultStreamId(resultStream)
                .roundTimeoutNs(TimeUnit.MINUTES.toNanos(10)));
            final AtomicReference<Throwable> error = new AtomicReference<>();
            runner = new AgentRunner(new BackoffIdleStrategy(), ex -> error.compareAndSet(null, ex), null, server);
            AgentRunner.startOnThread(runner);
            return new DenseTransport(runtime, true, runner, error, new AeronMeanExchange.Context()
                .aeron(runtime.aeron()).jobId(JOB).workers(workers).paramCount(params)
                .shards(List.of(new ShardEndpoint(0, 0, -1, serverVotes, voteStream, workerResults, resultStream))));
        } catch (final RuntimeException ex) {
            CloseHelper.quietCloseAll(runner, runtime);
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
            .shards(s.topology().endpoints(s.params(), chunkWords, s.workers(), s.localHost())));
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

    private static AeronMeanExchange.Context copyOf(final AeronMeanExchange.Context t) {
        // a context is concluded by the exchange it configures: every worker gets its own
        return new AeronMeanExchange.Context().aeron(t.aeron()).jobId(t.jobId()).workers(t.workers()).paramCount(t.paramCount())
            .secret(t.secret()).connectTimeoutNs(t.connectTimeoutNs()).shards(t.shards());
    }

    @Override
    public void close() {
        CloseHelper.close(serverRunner);
        if (ownsRuntime) {
            CloseHelper.close(runtime);
        }
    }

    private static int freeUdpPort() {
        try (DatagramSocket socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            return socket.getLocalPort();
        } catch (final IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
