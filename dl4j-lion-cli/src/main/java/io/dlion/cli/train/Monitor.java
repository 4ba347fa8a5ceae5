package io.dlion.cli.train;

import java.util.ArrayList;
import java.util.List;

import io.aeron.Aeron;
import io.dlion.monitor.DLionMetrics;
import io.dlion.monitor.DLionUi;
import io.dlion.monitor.ServerProbe;
import io.dlion.monitor.WorkerProbe;
import org.agrona.CloseHelper;
import org.deeplearning4j.nn.api.Model;

/**
 * What a process of the CLI shows to the outside while it runs: its Prometheus endpoint ({@code --metrics-port}) and its
 * workers' reports to DL4J's training UI ({@code --ui}); either may be absent, {@link #NONE} has neither. The probes it
 * hands out are closed by {@link #closeProbes()}, which the owner of what they read calls before closing it (an Aeron
 * counter read after its driver closed reads unmapped memory).
 */
public final class Monitor implements AutoCloseable {
    /** No endpoint, no UI. */
    public static final Monitor NONE = new Monitor(null, null);

    private final DLionMetrics metrics;
    private final DLionUi ui;
    private final List<AutoCloseable> probes = new ArrayList<>();

    /**
     * @param metrics the process's metrics, or null.
     * @param ui      where the workers report to DL4J's UI, or null.
     */
    public Monitor(final DLionMetrics metrics, final DLionUi ui) {
        this.metrics = metrics;
        this.ui = ui;
    }

    /** @return the process's metrics, or null. */
    public DLionMetrics metrics() {
        return metrics;
    }

    /**
     * @param workerId a worker trained in this process.
     * @return its probe, or null without an endpoint.
     */
    synchronized WorkerProbe worker(final int workerId) {
        return metrics == null ? null : keep(metrics.worker(workerId));
    }

    /**
     * @param aeron a client of this process's media driver, or null (an in-process hub has none).
     */
    public synchronized void driver(final Aeron aeron) {
        if (metrics != null && aeron != null) {
            keep(metrics.driver(aeron));
        }
    }

    /**
     * @param slice    the slice this process serves.
     * @param readings what its server counts.
     */
    public synchronized void server(final int slice, final ServerProbe.Readings readings) {
        if (metrics != null) {
            keep(metrics.server(slice, readings));
        }
    }

    /**
     * @param model    a worker's model, as it trains (after a resume or rejoin: the restored one).
     * @param workerId the worker.
     */
    void attachUi(final Model model, final int workerId) {
        if (ui != null) {
            ui.attach(model, workerId);
        }
    }

    private <T extends AutoCloseable> T keep(final T probe) {
        probes.add(probe);
        return probe;
    }

    /** Closes probes; for a try-with-resources that holds what they read. */
    public interface Probes extends AutoCloseable {
        @Override
        void close();
    }

    /** @return when closed, closes the probes handed out from now on (not those handed out before). */
    public synchronized Probes probes() {
        final int from = probes.size();
        return () -> closeProbes(from);
    }

    /** Stop reading every probe handed out so far (waits for a scrape that is reading). */
    public void closeProbes() {
        closeProbes(0);
    }

    private synchronized void closeProbes(final int from) {
        if (from < probes.size()) {
            final List<AutoCloseable> closing = probes.subList(from, probes.size());
            CloseHelper.closeAll(closing);
            closing.clear();
        }
    }

    /** Close the probes, send the UI what is queued, stop the endpoint. */
    @Override
    public void close() {
        closeProbes();
        CloseHelper.closeAll(ui, metrics);
    }
}
