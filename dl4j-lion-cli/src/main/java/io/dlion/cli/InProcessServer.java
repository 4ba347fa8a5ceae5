package io.dlion.cli;

import java.util.concurrent.TimeUnit;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Topology;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.server.ServerCounters;
import io.dlion.aeron.server.Payload;
import io.dlion.cli.train.RemoteTransport;
import org.agrona.CloseHelper;

/**
 * The aggregation server of one slice that a worker runs in its own process: the star's one server in the worker of rank 0
 * ({@code ./dlion worker --with-server}), or slice {@code r} in the worker of rank {@code r} of a sharded job
 * ({@code --topology sharded}), of sign votes or, for the dense baseline, of fp32 gradients ({@link Payload}). It runs on
 * the worker's media driver, on its own thread, listening on the slice's vote and
 * control ports ({@link Topology}) on every address of the host ({@code 0.0.0.0}), so that the other workers reach it
 * exactly as they reach {@code ./dlion server} there.
 * <p>
 * Call order: create before the worker connects → the worker runs its rounds → {@link #awaitOthersDone(long)} (the
 * server stays up until the other workers have read the last result and left) → {@link #close()}.
 */
final class InProcessServer implements AutoCloseable {
    private final AeronRuntime runtime;
    private final boolean ownsRuntime;
    private final AggregationServer server;

    /**
     * The server of a training worker's slice (the star's in rank 0; slice r in rank r of a sharded job), on a runtime of
     * its own that the worker's transport shares.
     *
     * @param s              the worker's settings: job, workers, parameters, rule, topology, secret, driver.
     * @param slice          the slice this worker serves.
     * @param roundTimeoutMs the round deadline.
     * @param minVoters      the quorum, 0 for a majority.
     * @param dense          true: fp32 gradients (the dense baseline), false: sign votes.
     */
    InProcessServer(final RemoteTransport.Settings s, final int slice, final long roundTimeoutMs, final int minVoters, final boolean dense) {
        this(RemoteTransport.runtime(s), true, s.topology(), slice, dense, job(s, roundTimeoutMs, minVoters), false);
    }

    private static AggregationServer.Context job(final RemoteTransport.Settings s, final long roundTimeoutMs, final int minVoters) {
        return new AggregationServer.Context().jobId(s.job()).workers(s.workers()).paramCount(s.params()).rule(s.rule())
            .roundTimeoutNs(TimeUnit.MILLISECONDS.toNanos(roundTimeoutMs)).minVoters(minVoters).secret(s.secret()).frameMac(s.frameMac());
    }

    /**
     * @param runtime     the worker's runtime.
     * @param ownsRuntime true: close the runtime with the server.
     * @param topology    who serves which slice.
     * @param slice       the slice this process serves.
     * @param dense       true: fp32 gradients, cut on the dense chunk grid; false: sign votes.
     * @param job         the job's settings (job id, workers, parameters, rule, chunk words, deadline, quorum, secret);
     *                    the runtime's client, the slice and its channels are set here.
     * @param takenOver   true for a dead rank's slice this worker serves now (said so in its log line).
     */
    InProcessServer(final AeronRuntime runtime, final boolean ownsRuntime, final Topology topology, final int slice, final boolean dense,
        final AggregationServer.Context job, final boolean takenOver) {
        this.runtime = runtime;
        this.ownsRuntime = ownsRuntime;
        try {
            this.server = AggregationServer.launch(job.aeron(runtime.aeron()).payload(dense ? Payload.FP32 : Payload.SIGNS).slice(topology, slice));
        } catch (final RuntimeException ex) {
            if (ownsRuntime) {
                CloseHelper.quietClose(runtime);
            }
            throw ex;
        }
        System.out.println(describe(server, topology, takenOver));
    }

    /**
     * @param server    a server this worker runs.
     * @param topology  who serves which slice.
     * @param takenOver true for a dead rank's slice.
     * @return the line a worker prints when it starts serving: the slice, its parameters and its channels.
     */
    static String describe(final AggregationServer server, final Topology topology, final boolean takenOver) {
        final AggregationServer.Context job = server.context();
        final int slice = job.slice();
        return (topology.slices() == 1 ? "worker 0 hosts the aggregation server"
            : (takenOver ? "this worker takes over slice " : "worker " + slice + " serves slice ") + slice + " of " + topology.slices()
                + " (" + topology.kind() + "), parameters [" + job.fromParam() + ", " + job.toParam() + ")")
            + ": job=" + job.jobId() + " workers=" + job.workers() + " votes=" + job.voteChannel() + " results=" + job.resultChannel();
    }

    /** @return the server, for its counters and membership. */
    AggregationServer server() {
        return server;
    }

    /** @return the server's counters. */
    ServerCounters counters() {
        return server.counters();
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
        CloseHelper.close(server);
        ServerCommand.printLine(server.counters(), server.handOverCounts(), runtime.traffic(), System.out);
        if (ownsRuntime) {
            CloseHelper.close(runtime);
        }
    }
}
