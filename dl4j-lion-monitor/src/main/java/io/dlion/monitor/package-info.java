/**
 * Watching a running D-Lion job where people already look. {@link io.dlion.monitor.DLionMetrics}: one process's
 * Prometheus registry and {@code /metrics} endpoint, with probes that read what the job counts anyway
 * ({@link io.dlion.monitor.WorkerProbe} for a worker, {@link io.dlion.monitor.ServerProbe} for the server of a slice,
 * {@link io.dlion.monitor.DriverProbe} for the media driver) and the JVM's metrics. {@link io.dlion.monitor.DLionUi}:
 * every worker's training stats in DL4J's training UI. This module is optional: the library modules (core, aeron) do
 * not depend on it, so a job without an HTTP endpoint carries neither the Prometheus client nor DL4J's UI model.
 */
package io.dlion.monitor;
