package io.dlion.cli.train;

import java.util.concurrent.TimeUnit;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.Topology;
import io.dlion.aeron.client.AeronHandOver;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.SliceServers;
import io.dlion.dist.JobRun;
import io.dlion.exchange.JoinNotice;
import io.dlion.exchange.VoteExchange;
import io.dlion.job.HandOver;
import io.dlion.vote.VoteRule;

/**
 * A worker process's link to the job's aggregation servers: its own embedded media driver, each slice's votes by UDP
 * unicast to the slice's server, results from that server's multi-destination-cast publication received on
 * {@code localHost}. Who serves which slice is the settings' {@link Topology}: one server on another host (the star), or
 * every worker serving one slice (sharded).
 */
public final class RemoteTransport implements VoteTransport {
    private final AeronRuntime runtime;
    private final boolean ownsRuntime;
    private final Settings settings;
    private final AeronVoteExchange.Context template;
    private AeronVoteExchange exchange;
    private AeronHandOver handOver;

    /**
     * Where the server is and how this worker talks to it.
     *
     * @param job         job id the server was started with.
     * @param workers     workers of the job.
     * @param params      parameters of the model (the server's --params).
     * @param rule        the server's rule.
     * @param topology    who serves which slice, and where.
     * @param localHost   this host's address the results arrive on.
     * @param aeronDir    a standalone driver's directory, or null for an embedded driver.
     * @param secret      the job's shared secret, or null when the server has none.
     * @param frameMac    true when every vote and result frame carries a tag of the secret (as the server's --frame-mac).
     * @param lossRate    fault injection: fraction of received UDP data frames the embedded driver drops (0 = none).
     * @param firstRound  the round this worker votes in first (a worker resuming from its checkpoint), else 0.
     * @param join        true for a worker that rejoins the running job and waits for a donor's parameters.
     * @param run         the job and run id its checkpoints and hand-overs carry.
     * @param network     true: hand-overs go over Aeron, relayed by the server ({@link AeronHandOver}); false: none here
     *                    (a shared directory instead).
     * @param silenceNs   sharded: how long a slice server may be silent before this worker finds it dead, which the embedded
     *                    driver's publication connection timeout follows; 0 for the defaults (5 s, Aeron's 5 s).
     */
    public record Settings(int job, int workers, long params, VoteRule rule, Topology topology, String localHost,
        String aeronDir, byte[] secret, boolean frameMac, double lossRate, long firstRound, boolean join, JobRun run, boolean network,
        long silenceNs) {
    }

    /** @param s where the server is and how to reach it. */
    public RemoteTransport(final Settings s) {
        this(s, null);
    }

    /**
     * @param s      where the server is and how to reach it.
     * @param shared a runtime this process already runs (e.g. the one its in-process server uses), not closed here; null:
     *               launch one ({@link #runtime(Settings)}) and close it with the transport.
     */
    public RemoteTransport(final Settings s, final AeronRuntime shared) {
        this(s, shared, null);
    }

    /**
     * @param s       where the servers are and how to reach them.
     * @param shared  a runtime to share (the process's server runs on it), or null for one of its own.
     * @param serving for a sharded job: what is asked of the slice servers the exchange runs in this process (its own
     *                slice, and a dead rank's it takes over: {@link AeronVoteExchange.Context#topology}); null for servers
     *                this process does not run.
     */
    public RemoteTransport(final Settings s, final AeronRuntime shared, final SliceServers.Context serving) {
        this.settings = s;
        this.ownsRuntime = shared == null;
        this.runtime = shared != null ? shared : runtime(s);
        final int chunkWords = s.topology().chunkWords(s.params(), Configuration.chunkWords());
        this.template = new AeronVoteExchange.Context()
            .aeron(runtime.aeron()).jobId(s.job()).workers(s.workers()).paramCount(s.params()).rule(s.rule()).chunkWords(chunkWords)
            .connectTimeoutNs(TimeUnit.MINUTES.toNanos(5)).secret(s.secret()).frameMac(s.frameMac()).firstRound(s.firstRound()).join(s.join())
            .slices(s.topology().endpoints(s.params(), chunkWords, s.workers(), s.localHost(),
                runtime.aeron().nextCorrelationId()));
        if (serving != null) {
            template.topology(s.topology()).sliceServers(serving);
        }
    }

    /**
     * @param s the settings.
     * @return the runtime of a worker process: its own embedded driver (or the standalone one in {@code aeronDir}), with the
     *     loss injection the settings ask for.
     */
    public static AeronRuntime runtime(final Settings s) {
        final AeronRuntime.Context runtimeCtx = new AeronRuntime.Context().embeddedDriver(s.aeronDir() == null).aeronDirectoryName(s.aeronDir());
        if (s.lossRate() > 0) {
            runtimeCtx.receiveLossRate(s.lossRate());
        }
        if (s.silenceNs() > 0) {
            runtimeCtx.publicationConnectionTimeoutNs(s.silenceNs()); // a vote publication disconnects as a slice server falls silent
        }
        return AeronRuntime.launch(runtimeCtx);
    }

    @Override
    public synchronized VoteExchange exchange(final int id) {
        if (exchange != null) {
            throw new IllegalStateException("one worker per process");
        }
        if (settings.network()) {
            handOver = new AeronHandOver(new AeronHandOver.Context().aeron(runtime.aeron()).jobId(settings.job()).workers(settings.workers())
                .workerId(id).run(settings.run()).secret(settings.secret()).slice(template.slices().get(0)).join(settings.join()));
            template.sideAgent(handOver);
        }
        exchange = new AeronVoteExchange(template.workerId(id));
        return exchange;
    }

    @Override
    public HandOver handOver() {
        return handOver;
    }

    @Override
    public JoinNotice awaitJoin(final long timeoutMillis) throws Exception {
        return exchange.awaitJoin(timeoutMillis);
    }

    @Override
    public void pollIdle() {
        exchange.pollIdle();
    }

    @Override
    public io.aeron.Aeron aeron() {
        return runtime.aeron();
    }

    @Override
    public void close() {
        // what the media driver put on the network beyond the exchange's count: retransmissions and NAKs
        System.out.println("worker " + (exchange == null ? "-" : String.valueOf(exchange.workerId())) + " driver " + runtime.traffic());
        if (exchange != null) {
            exchange.close();
        }
        if (handOver != null) {
            handOver.close();
        }
        if (ownsRuntime) {
            runtime.close();
        }
    }
}
