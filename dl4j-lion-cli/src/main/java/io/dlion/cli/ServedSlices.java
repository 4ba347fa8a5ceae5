package io.dlion.cli;

import java.io.PrintStream;

import io.dlion.aeron.DriverTraffic;
import io.dlion.aeron.Topology;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.server.SliceServers;
import io.dlion.cli.train.Monitor;
import io.dlion.monitor.ServerProbe;

/**
 * What a worker of a sharded job ({@code ./dlion worker --topology sharded}) shows of the slice servers the library runs
 * for it ({@link SliceServers}): a line when it starts serving a slice, its own or a dead rank's, the server's metrics on
 * the worker's endpoint, and the server's counters when it closes.
 */
final class ServedSlices implements SliceServers.Listener {
    private final Topology topology;
    private final Monitor monitor;
    private final PrintStream out;

    /**
     * @param topology the job's layout.
     * @param monitor  the worker's metrics endpoint (its probes close before the servers do).
     * @param out      where the lines go.
     */
    ServedSlices(final Topology topology, final Monitor monitor, final PrintStream out) {
        this.topology = topology;
        this.monitor = monitor;
        this.out = out;
    }

    @Override
    public void onServing(final AggregationServer server, final boolean takenOver) {
        out.println(InProcessServer.describe(server, topology, takenOver));
        monitor.server(server.context().slice(), ServerProbe.Readings.of(server));
    }

    @Override
    public void onClosing(final AggregationServer server) {
        ServerCommand.printLine(server.counters(), server.handOverCounts(), DriverTraffic.read(server.context().aeron().countersReader()), out);
    }
}
