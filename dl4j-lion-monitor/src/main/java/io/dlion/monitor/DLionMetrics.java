package io.dlion.monitor;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The metrics of one process of a D-Lion job, in a Prometheus registry, served on {@code /metrics} when a port is given.
 * A process registers what it runs: its workers ({@link #worker(int)}), the aggregation servers of the slices it serves
 * ({@link #server}) and its Aeron media driver ({@link #driver}); the JVM's own metrics are always there.
 * <p>
 * Nothing is counted twice: counters and gauges read the counters the job keeps anyway (a worker's
 * {@link io.dlion.exchange.ExchangeCounters} and {@link io.dlion.dist.DLionStats}, the server's and the worker's Aeron
 * counters, the driver's system counters) when Prometheus scrapes, so a round pays nothing for them; the only work on
 * the training thread is one histogram observation per phase of a round. Metric names follow Prometheus's conventions:
 * {@code dlion_} prefix, base units (seconds, bytes), {@code _total} for counters; see {@code docs/monitoring.md}.
 * <p>
 * Call order: create → register sources (any time) → {@link Source#close()} each source <b>before</b> what it reads
 * closes (an Aeron counter read after its driver closed reads unmapped memory; close waits for a scrape that is
 * reading) → {@link #close()}.
 */
public final class DLionMetrics implements AutoCloseable {
    /** Upper bounds of the round-phase histograms, seconds: 100 us to about 105 s, each twice the one before. */
    static final double[] PHASE_BUCKETS = exponential(1e-4, 2, 21);

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final ReentrantLock reading = new ReentrantLock();
    private final List<WorkerProbe> workers = new CopyOnWriteArrayList<>();
    private final List<ServerProbe> servers = new CopyOnWriteArrayList<>();
    private final List<DriverProbe> drivers = new CopyOnWriteArrayList<>();
    private final Histogram phases;
    private final HTTPServer http;

    /** Settings of {@link DLionMetrics}; {@link #conclude()} validates them once, naming the field. */
    public static final class Context {
        private int port = -1;
        private String bindAddress = "0.0.0.0";
        private boolean jvm = true;

        /**
         * @param port the TCP port of the {@code /metrics} endpoint; 0: any free port ({@link DLionMetrics#port()});
         *             -1 (default): no endpoint, the registry only.
         * @return this for a fluent API.
         */
        public Context port(final int port) {
            this.port = port;
            return this;
        }

        /** @return the endpoint's port, -1 for none. */
        public int port() {
            return port;
        }

        /**
         * @param address the address the endpoint listens on (default {@code 0.0.0.0}: every interface).
         * @return this for a fluent API.
         */
        public Context bindAddress(final String address) {
            this.bindAddress = address;
            return this;
        }

        /**
         * @param jvm register the JVM's metrics (memory, GC, threads, classes, CPU); default true.
         * @return this for a fluent API.
         */
        public Context jvm(final boolean jvm) {
            this.jvm = jvm;
            return this;
        }

        /**
         * @return this, validated.
         * @throws IllegalArgumentException naming the field that is wrong.
         */
        public Context conclude() {
            if (port < -1 || port > 65535) {
                throw new IllegalArgumentException("metrics port must be in [0, 65535] (or -1 for no endpoint), got " + port);
            }
            if (bindAddress == null || bindAddress.isBlank()) {
                throw new IllegalArgumentException("metrics bindAddress must be an address, got '" + bindAddress + "'");
            }
            return this;
        }
    }

    /**
     * @param ctx the settings.
     * @throws IOException when the port cannot be bound.
     */
    public DLionMetrics(final Context ctx) throws IOException {
        ctx.conclude();
        phases = Histogram.builder().name("dlion_worker_round_phase_seconds")
            .help("Time of one round's phase on a worker: compute (batch, forward, backward, Lion step), pack (signs to bits),"
                + " wait (send, server, receive), apply (the result to the parameters)")
            .labelNames("worker", "phase").classicOnly().classicUpperBounds(PHASE_BUCKETS).register(registry);
        WorkerProbe.register(this);
        ServerProbe.register(this);
        DriverProbe.register(this);
        if (ctx.jvm) {
            JvmMetrics.builder().register(registry);
        }
        http = ctx.port < 0 ? null
            : HTTPServer.builder().hostname(ctx.bindAddress).port(ctx.port).registry(registry).buildAndStart();
    }

    /**
     * @param port the endpoint's port (0: any free one), or -1 for none.
     * @return the metrics of this process.
     * @throws IOException when the port cannot be bound.
     */
    public static DLionMetrics start(final int port) throws IOException {
        return new DLionMetrics(new Context().port(port));
    }

    /** @return the registry, e.g. to add an application's own metrics or to serve it another way. */
    public PrometheusRegistry registry() {
        return registry;
    }

    /** @return the port the endpoint listens on, -1 without one. */
    public int port() {
        return http == null ? -1 : http.getPort();
    }

    /**
     * A worker trained in this process. Bind it to its job ({@link WorkerProbe#bind}) once built, and report rounds and
     * epochs through it (it is a {@link io.dlion.job.DLionJob.Listener}).
     *
     * @param workerId the worker's id, its {@code worker} label.
     * @return its probe, registered.
     */
    public WorkerProbe worker(final int workerId) {
        final WorkerProbe probe = new WorkerProbe(this, workerId);
        workers.add(probe);
        return probe;
    }

    /**
     * The aggregation server of one slice that this process runs.
     *
     * @param slice   the slice's index, its {@code slice} label.
     * @param source  what it reads.
     * @return its probe, registered.
     */
    public ServerProbe server(final int slice, final ServerProbe.Readings source) {
        final ServerProbe probe = new ServerProbe(this, slice, source);
        servers.add(probe);
        return probe;
    }

    /**
     * The Aeron media driver of this process (embedded, or the standalone one it connects to): bytes it sent and
     * received, retransmissions and NAKs, and bytes per publication and image (per link).
     *
     * @param aeron a client of the driver; the probe must be closed before it.
     * @return its probe, registered.
     */
    public DriverProbe driver(final io.aeron.Aeron aeron) {
        final DriverProbe probe = new DriverProbe(this, aeron.countersReader());
        drivers.add(probe);
        return probe;
    }

    Histogram phases() {
        return phases;
    }

    List<WorkerProbe> workers() {
        return workers;
    }

    List<ServerProbe> servers() {
        return servers;
    }

    List<DriverProbe> drivers() {
        return drivers;
    }

    /** Runs a scrape's read of the sources; a source that closes waits for it. */
    <T> void read(final List<T> sources, final Consumer<T> reader) {
        reading.lock();
        try {
            for (final T source : sources) {
                reader.accept(source);
            }
        } finally {
            reading.unlock();
        }
    }

    void remove(final Object source) {
        reading.lock();
        try {
            workers.remove(source);
            servers.remove(source);
            drivers.remove(source);
        } finally {
            reading.unlock();
        }
    }

    /** A counter whose values the scrape reads. */
    CounterWithCallback counter(final String name, final String help, final Consumer<CounterWithCallback.Callback> callback,
        final String... labels) {
        return CounterWithCallback.builder().name(name).help(help).labelNames(labels).callback(callback).register(registry);
    }

    /** A gauge whose values the scrape reads. */
    GaugeWithCallback gauge(final String name, final String help, final Consumer<GaugeWithCallback.Callback> callback,
        final String... labels) {
        return GaugeWithCallback.builder().name(name).help(help).labelNames(labels).callback(callback).register(registry);
    }

    /** A registered source; closing it unregisters it, after any scrape reading it has finished. */
    public abstract static class Source implements AutoCloseable {
        private final DLionMetrics owner;

        Source(final DLionMetrics owner) {
            this.owner = owner;
        }

        @Override
        public void close() {
            owner.remove(this);
        }
    }

    /** Stop the endpoint. */
    @Override
    public void close() {
        if (http != null) {
            http.close();
        }
    }

    private static double[] exponential(final double first, final double factor, final int count) {
        final double[] bounds = new double[count];
        double b = first;
        for (int i = 0; i < count; i++) {
            bounds[i] = b;
            b *= factor;
        }
        return bounds;
    }
}
