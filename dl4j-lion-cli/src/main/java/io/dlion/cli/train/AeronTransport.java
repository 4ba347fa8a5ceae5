package io.dlion.cli.train;

import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.LocalAeronJob;
import io.dlion.aeron.Topology;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.VoteRule;

/**
 * D-Lion votes over Aeron in this JVM ({@link LocalAeronJob}): embedded media driver, the aggregation servers, one client
 * per worker. In the sharded topology over UDP the workers' exchanges serve the slices, as worker processes do.
 */
final class AeronTransport implements VoteTransport {
    private final LocalAeronJob job;

    private AeronTransport(final LocalAeronJob job) {
        this.job = job;
    }

    static AeronTransport open(final boolean udp, final Topology.Kind topology, final int workers, final VoteRule rule, final long params) {
        return new AeronTransport(LocalAeronJob.launch(new LocalAeronJob.Context()
            .jobId(1)
            .topology(topology)
            .workers(workers)
            .paramCount(params)
            .rule(rule)
            .transport(udp ? LocalAeronJob.Transport.UDP : LocalAeronJob.Transport.IPC)
            .roundTimeoutNs(TimeUnit.MINUTES.toNanos(10))
            .secret(udp ? randomSecret() : null)));
    }

    /** A UDP job in one JVM is still reachable from the network: it runs with a secret of its own, never written anywhere. */
    private static byte[] randomSecret() {
        final byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        return secret;
    }

    @Override
    public VoteExchange exchange(final int id) {
        return job.exchange(id);
    }

    @Override
    public io.aeron.Aeron aeron() {
        return job.aeron();
    }

    @Override
    public void monitor(final Monitor monitor) {
        monitor.driver(job.aeron());
        for (int s = 0; s < job.slices().size(); s++) {
            final io.dlion.aeron.server.AggregationServer server = job.server(s);
            if (server != null) { // every slice is served once the workers are connected
                monitor.server(s, io.dlion.monitor.ServerProbe.Readings.of(server));
            }
        }
    }

    @Override
    public void close() {
        job.close();
    }
}
