package io.dlion.examples.train;

import java.util.List;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.AeronVoteExchange;
import io.dlion.aeron.Channels;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.ShardEndpoint;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.VoteRule;

/**
 * A worker process's link to an aggregation server on another host: its own embedded media driver, votes to
 * {@code server:votePort} by UDP unicast, results from the server's multi-destination-cast publication
 * (control {@code server:controlPort}) received on {@code localHost}.
 */
public final class RemoteTransport implements VoteTransport {
    private final AeronRuntime runtime;
    private final AeronVoteExchange.Context template;
    private AeronVoteExchange exchange;

    /**
     * @param job        job id the server was started with.
     * @param workers    workers of the job.
     * @param params     parameters of the model (the server's --params).
     * @param rule       the server's rule.
     * @param server     server host.
     * @param votePort   server's vote port.
     * @param controlPort server's result control port.
     * @param localHost  this host's address the results arrive on.
     * @param aeronDir   a standalone driver's directory, or null for an embedded driver.
     */
    public RemoteTransport(final int job, final int workers, final long params, final VoteRule rule, final String server, final int votePort,
        final int controlPort, final String localHost, final String aeronDir) {
        this.runtime = AeronRuntime.launch(new AeronRuntime.Context().embeddedDriver(aeronDir == null).aeronDirectoryName(aeronDir));
        this.template = new AeronVoteExchange.Context()
            .aeron(runtime.aeron()).jobId(job).workers(workers).paramCount(params).rule(rule)
            .connectTimeoutNs(TimeUnit.MINUTES.toNanos(5))
            .shards(List.of(new ShardEndpoint(0, 0, -1, Channels.udpVotes(server, votePort), Configuration.VOTE_STREAM_ID_DEFAULT,
                Channels.udpResultsSubscription(server, controlPort, localHost), Configuration.RESULT_STREAM_ID_DEFAULT)));
    }

    @Override
    public synchronized VoteExchange exchange(final int id) {
        if (exchange != null) {
            throw new IllegalStateException("one worker per process");
        }
        exchange = new AeronVoteExchange(template.workerId(id));
        return exchange;
    }

    @Override
    public void close() {
        if (exchange != null) {
            exchange.close();
        }
        runtime.close();
    }
}
