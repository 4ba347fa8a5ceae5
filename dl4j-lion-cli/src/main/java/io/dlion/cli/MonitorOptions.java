package io.dlion.cli;

import java.io.IOException;

import io.dlion.cli.train.Monitor;
import io.dlion.monitor.DLionMetrics;
import io.dlion.monitor.DLionUi;
import picocli.CommandLine.Option;

/** {@code --metrics-port} and {@code --ui}: how a training process shows itself while it runs (docs/monitoring.md). */
final class MonitorOptions {
    static final String METRICS_PORT_HELP = "serve Prometheus metrics on http://0.0.0.0:PORT/metrics (0: any free port, printed)";

    @Option(names = "--metrics-port", description = METRICS_PORT_HELP)
    Integer metricsPort;

    @Option(names = "--ui", paramLabel = "URL", description = "report every worker's training stats to DL4J's training UI at URL"
        + " (e.g. http://uihost:9000, a UIServer with its remote listener on: './dlion ui')")
    String ui;

    @Option(names = "--ui-every", description = "with --ui: a report every this many iterations (default: ${DEFAULT-VALUE})")
    int uiEvery = DLionUi.DEFAULT_REPORT_EVERY;

    /**
     * @param session the UI session every worker of the job reports under.
     * @return the monitor of this process ({@link Monitor#NONE} when neither option is given).
     */
    Monitor open(final String session) throws IOException {
        if (metricsPort == null && ui == null) {
            return Monitor.NONE;
        }
        if (uiEvery < 1) {
            throw new IllegalArgumentException("--ui-every must be >= 1, got " + uiEvery);
        }
        final DLionMetrics metrics = metrics(metricsPort);
        return new Monitor(metrics, ui == null ? null : DLionUi.remote(ui, session).reportEvery(uiEvery));
    }

    /**
     * @param port --metrics-port, or null.
     * @return the metrics of this process, serving on the port, or null without one.
     */
    static DLionMetrics metrics(final Integer port) throws IOException {
        if (port == null) {
            return null;
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--metrics-port must be in [0, 65535] (0: any free port), got " + port);
        }
        final DLionMetrics metrics;
        try {
            metrics = new DLionMetrics(new DLionMetrics.Context().port(port));
        } catch (final java.net.BindException ex) {
            throw new IllegalArgumentException("--metrics-port " + port + " cannot be bound: " + ex.getMessage(), ex);
        }
        System.out.println("metrics: http://0.0.0.0:" + metrics.port() + "/metrics");
        return metrics;
    }
}
