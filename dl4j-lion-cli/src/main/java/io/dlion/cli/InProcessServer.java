package io.dlion.cli;

import java.util.concurrent.TimeUnit;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Channels;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.cli.train.RemoteTransport;
import org.agrona.CloseHelper;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;

/**
 * The aggregation server that the worker of rank 0 runs in its own process ({@code ./dlion worker --with-server}): on the
 * worker's media driver, on its own thread, listening on the job's vote and control ports on every address of the host
 * ({@code 0.0.0.0}), so that the other workers reach it exactly as they reach {@code ./dlion server} there.
 * <p>
 * Call order: create before the worker connects → the worker trains → {@link #awaitOthersDone(long)} (the server stays
 * up until the other workers have read the last result and left) → {@link #close()}.
 */
final class InProcessServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(InProcessServer.class.getName());
    private final AeronRuntime runtime;
    private final AggregationServer server;
    private final AgentRunner runner;

    /**
     * @param s              the worker's settings: job, workers, parameters, rule, ports, secret, driver.
     * @param roundTimeoutMs the round deadline.
     * @param minVoters      the quorum, 0 for a majority.
     */
    InProcessServer(final RemoteTransport.Settings s, final long roundTimeoutMs, final int minVoters) {
        this.runtime = RemoteTransport.runtime(s);
        AggregationServer created = null;
        try {
            created = new AggregationServer(new AggregationServer.Context()
                .aeron(runtime.aeron()).jobId(s.job()).workers(s.workers()).paramCount(s.params()).rule(s.rule())
                .voteChannel(Channels.udpVotes("0.0.0.0", s.votePort(), s.workers()))
                .resultChannel(Channels.udpResultsPublication("0.0.0.0", s.controlPort(), s.workers()))
                .roundTimeoutNs(TimeUnit.MILLISECONDS.toNanos(roundTimeoutMs)).minVoters(minVoters).secret(s.secret()).frameMac(s.frameMac()));
            this.server = created;
            this.runner = new AgentRunner(new BackoffIdleStrategy(), ex -> LOG.log(System.Logger.Level.ERROR, "aggregation server error", ex),
                null, created);
            AgentRunner.startOnThread(runner);
        } catch (final RuntimeException ex) {
            CloseHelper.quietCloseAll(created, runtime);
            throw ex;
        }
        System.out.println("worker 0 hosts the aggregation server: job=" + s.job() + " workers=" + s.workers() + " votes="
            + server.context().voteChannel() + " results=" + server.context().resultChannel());
    }

    /** @return the runtime the server runs on, for the worker's own transport. */
    AeronRuntime runtime() {
        return runtime;
    }

    /**
     * After this worker's training: keep the server up while another worker is still connected to its results (it may
     * still be reading the last round's result or its retransmissions).
     *
     * @param timeoutMs longest wait.
     */
    void awaitOthersDone(final long timeoutMs) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (server.isConnected() && System.nanoTime() - deadline < 0) {
            Thread.sleep(50);
        }
    }

    @Override
    public void close() {
        CloseHelper.close(runner);
        ServerCommand.printLine(server.counters(), server.handOverCounts(), runtime.traffic(), System.out);
        CloseHelper.close(runtime);
    }
}
