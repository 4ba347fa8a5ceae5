package io.dlion.spark;

import java.io.IOException;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.job.DLionJob;
import io.dlion.monitor.DLionMetrics;
import io.dlion.monitor.DLionUi;
import io.dlion.monitor.ServerProbe;
import io.dlion.monitor.WorkerProbe;
import org.agrona.CloseHelper;
import org.deeplearning4j.nn.api.Model;

/**
 * A task's metrics endpoint and UI reports, when the options ask for them ({@link DLionSparkOptions#metricsPort},
 * {@link DLionSparkOptions#ui}). Only this class refers to {@code dl4j-lion-monitor}, an optional dependency of this
 * module: a job that asks for neither never loads it.
 * <p>
 * Call order: {@link #open} → {@link #server} (a task that serves a slice) → {@link #attach} (the job's model) → the
 * job's rounds, through {@link #listener()} → {@link #close()} before the exchange and the driver close.
 */
final class TaskMonitor implements AutoCloseable {
    private final DLionMetrics metrics;
    private final DLionUi ui;
    private final WorkerProbe worker;
    private final int workerId;
    private ServerProbe server;
    private final AutoCloseable driver;

    private TaskMonitor(final DLionMetrics metrics, final DLionUi ui, final WorkerProbe worker, final AutoCloseable driver, final int workerId) {
        this.metrics = metrics;
        this.ui = ui;
        this.worker = worker;
        this.driver = driver;
        this.workerId = workerId;
    }

    /**
     * @param options the job's options (metrics port and UI).
     * @param worker  the task's worker id.
     * @param run     the run, the UI's session.
     * @param aeron   the task's media driver.
     * @return the task's monitor.
     */
    static TaskMonitor open(final DLionSparkOptions options, final int worker, final String run, final AeronRuntime aeron) throws IOException {
        DLionMetrics metrics = null;
        try {
            if (options.metricsPort() >= 0) {
                metrics = DLionMetrics.start(options.metricsPort() == 0 ? 0 : options.metricsPort() + worker);
                System.getLogger(TaskMonitor.class.getName()).log(System.Logger.Level.INFO,
                    "D-Lion worker " + worker + ": metrics on port " + metrics.port());
            }
            final DLionUi ui = options.ui() == null ? null : DLionUi.remote(options.ui(), "dlion-spark-" + run);
            return new TaskMonitor(metrics, ui, metrics == null ? null : metrics.worker(worker),
                metrics == null ? null : metrics.driver(aeron.aeron()), worker);
        } catch (final IOException | RuntimeException ex) {
            CloseHelper.quietClose(metrics);
            throw ex;
        }
    }

    /** @param s the server of the slice this task serves. */
    void server(final AggregationServer s) {
        if (metrics != null) {
            server = metrics.server(s.context().slice(), ServerProbe.Readings.of(s));
        }
    }

    /** @param model the model the task's job trains (after a resume: the restored one). */
    void attach(final Model model) {
        if (ui != null) {
            ui.attach(model, workerId);
        }
    }

    /** @return what the job reports to, or null without metrics. */
    DLionJob.Listener listener() {
        return worker;
    }

    @Override
    public void close() {
        CloseHelper.quietCloseAll(worker, server, driver, ui, metrics);
    }
}
