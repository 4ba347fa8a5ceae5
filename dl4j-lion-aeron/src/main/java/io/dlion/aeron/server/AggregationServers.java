package io.dlion.aeron.server;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.agrona.CloseHelper;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;

/**
 * Several aggregation servers of one process on one agent thread, as a media driver's SHARED threading mode runs its
 * agents: every slice server of a job that runs in one process ({@code LocalAeronJob}'s star and its sharded topology
 * over IPC, the dense baseline's local transport). One server on a thread of its own is {@link AggregationServer#launch(AggregationServer.Context)}.
 * <p>
 * The thread idles with the first context's {@link AggregationServer.Context#idleStrategy()} and hands every error to
 * its {@link AggregationServer.Context#errorHandler()}. {@link #close()} stops the thread, which frees the servers.
 */
public final class AggregationServers implements AutoCloseable {
    private final List<AggregationServer> servers;
    private final AgentRunner runner;

    private AggregationServers(final List<AggregationServer> servers, final AgentRunner runner) {
        this.servers = servers;
        this.runner = runner;
    }

    /**
     * Create the servers and start them on one thread.
     *
     * @param contexts one per server, each concluded here; at least one.
     * @return the running servers.
     * @throws IllegalArgumentException when {@code contexts} is empty.
     */
    public static AggregationServers launch(final List<AggregationServer.Context> contexts) {
        if (contexts.isEmpty()) {
            throw new IllegalArgumentException("contexts must name at least one server, got none");
        }
        final List<AggregationServer> servers = new ArrayList<>(contexts.size());
        try {
            for (final AggregationServer.Context ctx : contexts) {
                servers.add(new AggregationServer(ctx));
            }
        } catch (final RuntimeException ex) {
            CloseHelper.quietCloseAll(servers);
            throw ex;
        }
        final AggregationServer.Context first = contexts.get(0);
        final Agent agent = servers.size() == 1 ? servers.get(0) : new CompositeAgent(new ArrayList<Agent>(servers));
        final AgentRunner runner = new AgentRunner(first.idleStrategy(), first.errorHandler(), null, agent);
        AgentRunner.startOnThread(runner);
        return new AggregationServers(Collections.unmodifiableList(servers), runner);
    }

    /** @return the servers, in the order of their contexts. */
    public List<AggregationServer> servers() {
        return servers;
    }

    /** Stop the thread; the servers are freed as it ends. */
    @Override
    public void close() {
        CloseHelper.close(runner);
    }
}
