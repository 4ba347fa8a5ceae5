package io.dlion.cli;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.DriverTraffic;
import io.dlion.aeron.RejectReason;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.server.Payload;
import io.dlion.aeron.server.ServerCounters;
import io.dlion.job.Placement;
import io.dlion.monitor.DLionMetrics;
import io.dlion.monitor.ServerProbe;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code dlion server}: run the aggregation server of one slice of a job until SIGINT/SIGTERM, printing a
 * summary line of its counters every {@code --status-interval} seconds.
 */
@Command(name = "server", mixinStandardHelpOptions = true, description = "Distributed Lion aggregation server (one slice of a job).")
public final class ServerCommand implements Callable<Integer> {

    @Option(names = "--job", required = true, description = "Job id; votes of other jobs are rejected.")
    int job;

    @Option(names = "--workers", description = "Number of workers that vote (1..1024) (default: the scheduler's: SLURM_NTASKS, WORLD_SIZE,"
        + " OMPI_COMM_WORLD_SIZE).")
    Integer workersFlag;

    /** The environment the scheduler set; a test gives its own. */
    Map<String, String> env = System.getenv();

    private int workers;

    @Option(names = "--params", required = true, description = "Parameter count of the whole vector.")
    long params;

    @Option(names = "--rule", defaultValue = "majority", converter = OptionTypes.Rule.class,
        description = "majority (mavo) or average (avg) (default: ${DEFAULT-VALUE}).")
    VoteRule rule;

    @Option(names = "--sharing", defaultValue = "dlion", converter = OptionTypes.PayloadName.class, description = "dlion (sign votes,"
        + " --rule) or dense (the dense data-parallel baseline: fp32 gradients averaged, for workers with --sharing dense-lion or dense-adamw)"
        + " (default: dlion).")
    Payload sharing;

    @Option(names = "--slice", paramLabel = "FROM:TO", description = "Parameter slice this server owns (default: all).")
    String slice;

    @Option(names = "--slice-index", defaultValue = "0", description = "Index of this server's slice (default: ${DEFAULT-VALUE}).")
    int sliceIndex;

    @Option(names = "--window-chunks", defaultValue = "64", description = "Chunks held per worker at once (default: ${DEFAULT-VALUE}).")
    int windowChunks;

    @Option(names = "--round-timeout-ms", defaultValue = "" + Configuration.ROUND_TIMEOUT_MS_DEFAULT,
        description = "Round deadline: after this long without progress, drop the"
        + " missing workers (or abort below the quorum) (default: ${DEFAULT-VALUE}).")
    long roundTimeoutMs;

    @Option(names = "--min-voters", defaultValue = "0", description = "Quorum: a round whose deadline passes with fewer votes is aborted"
        + " (default: a majority of --workers).")
    int minVoters;

    @Option(names = "--metrics-port", description = MonitorOptions.METRICS_PORT_HELP)
    Integer metricsPort;

    @Option(names = "--status-interval", defaultValue = "10", description = "Seconds between summary lines, 0 for none (default: ${DEFAULT-VALUE}).")
    int statusInterval;

    @Mixin
    TransportOptions transport;

    @Override
    public Integer call() throws InterruptedException, java.io.IOException {
        final Placement placement = Placement.fromEnvironment(env);
        workers = placement.workersOr(workersFlag);
        if (transport.udp == null && transport.voteChannel == null && placement.serverHost() != null) {
            // under a scheduler the server listens where the workers look for it: rank 0's host (and MASTER_PORT)
            final int port = placement.serverPort() > 0 ? placement.serverPort() : WorkerCommand.DEFAULT_VOTE_PORT;
            transport.udp = placement.serverHost() + ":" + port + ":" + (port + 1);
            System.out.println("server for " + workers + " workers on UDP " + transport.udp + " (scheduler variables: " + placement.sources() + ")");
        }
        final long from;
        final long to;
        if (slice == null) {
            from = 0;
            to = params;
        } else {
            final String[] parts = slice.split(":");
            if (parts.length != 2) {
                throw new CommandLine.ParameterException(new CommandLine(this), "--slice must be FROM:TO, got " + slice);
            }
            from = Long.parseLong(parts[0]);
            to = Long.parseLong(parts[1]);
        }
        transport.requireStar("server");
        final byte[] secret = transport.secret("server");
        final boolean frameMac = transport.frameMac(secret);
        // SIGTERM / Ctrl-C: the hook releases the main thread and holds the JVM until the driver is closed, so that
        // nothing reads the driver's memory-mapped files after they are unmapped
        final CountDownLatch stop = new CountDownLatch(1);
        final CountDownLatch closed = new CountDownLatch(1);
        final Thread hook = new Thread(() -> {
            stop.countDown();
            try {
                closed.await(10, TimeUnit.SECONDS);
            } catch (final InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        }, "dlion-server-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        final boolean dense = sharing == Payload.FP32;
        if (dense && frameMac) {
            throw new IllegalArgumentException("--frame-mac is not supported by --sharing dense (the dense baseline)");
        }
        try (DLionMetrics metrics = MonitorOptions.metrics(metricsPort); AeronRuntime runtime = transport.launch()) {
            final AggregationServer.Context ctx = new AggregationServer.Context()
                .aeron(runtime.aeron()).jobId(job).workers(workers).paramCount(params).rule(rule)
                .slice(sliceIndex).paramRange(from, to)
                .voteChannel(transport.voteChannel(workers)).voteStreamId(transport.voteStream)
                .resultChannel(transport.serverResultChannel(workers)).resultStreamId(transport.resultStream)
                .chunkWords(transport.chunkWords).windowChunks(windowChunks)
                .roundTimeoutNs(TimeUnit.MILLISECONDS.toNanos(roundTimeoutMs)).minVoters(minVoters).secret(secret).frameMac(frameMac);
            final AggregationServer server = AggregationServer.launch(ctx.payload(dense ? Payload.FP32 : Payload.SIGNS));
            final ServerCounters serverCounters = server.counters();
            final List<DLionMetrics.Source> probes = metrics == null ? List.of()
                : List.of(metrics.server(sliceIndex, ServerProbe.Readings.of(server)), metrics.driver(runtime.aeron()));
            Thread status = null;
            try {
                System.out.println("server job=" + job + " slice=" + sliceIndex + " " + (dense ? "dense " : "") + server.layout()
                    + " votes=" + ctx.voteChannel() + " results=" + ctx.resultChannel() + " aeronDir=" + runtime.aeronDirectoryName());
                System.out.flush();
                if (statusInterval > 0) {
                    status = new Thread(() -> printStatus(server, runtime, System.out), "dlion-server-status");
                    status.setDaemon(true);
                    status.start();
                }
                stop.await();
            } finally {
                // the status thread reads counters in the driver's memory-mapped file: stop it before anything closes
                if (status != null) {
                    status.interrupt();
                    status.join(TimeUnit.SECONDS.toMillis(5));
                }
                CloseHelper.closeAll(probes);
                CloseHelper.close(server);
                printLine(serverCounters, server.handOverCounts(), runtime.traffic(), System.out);
            }
        } finally {
            closed.countDown();
        }
        return 0;
    }

    private void printStatus(final AggregationServer server, final AeronRuntime runtime, final PrintStream out) {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(statusInterval));
            } catch (final InterruptedException ex) {
                return;
            }
            printLine(server.counters(), server.handOverCounts(), runtime.traffic(), out);
        }
    }

    /**
     * @param handOver hand-over frames relayed, payload bytes, frames rejected.
     * @param traffic  what the server's media driver sent and received, retransmissions included.
     */
    static void printLine(final ServerCounters counters, final long[] handOver, final DriverTraffic traffic, final PrintStream out) {
        final StringBuilder sb = new StringBuilder("rounds=").append(counters.rounds().get())
            .append(" voters=").append(counters.votersLastRound().get())
            .append(" bytesIn=").append(counters.bytesIn().get())
            .append(" bytesOut=").append(counters.bytesOut().get())
            .append(" ties=").append(counters.ties().get())
            .append(" aborted=").append(counters.roundsAbandoned().get())
            .append(" dropped=").append(counters.workersDropped().get())
            .append(" rejoined=").append(counters.workersRejoined().get())
            .append(" joins=").append(counters.joinsAnnounced().get())
            .append(" toldToRejoin=").append(counters.laggardsResynced().get())
            .append(" sentHeldResult=").append(counters.laggardsServed().get())
            .append(" destinations=").append(counters.resultDestinations().get())
            .append(" answers=").append(counters.helloAnswers().get())
            .append(" rejected=").append(counters.rejectedTotal());
        if (AeronRuntime.framesDropped() > 0) {
            sb.append(" udpFramesDropped=").append(AeronRuntime.framesDropped()).append('/').append(AeronRuntime.framesReceived());
        }
        for (final RejectReason reason : RejectReason.values()) {
            final long value = counters.rejected(reason).get();
            if (value != 0) {
                sb.append(' ').append(reason.label()).append('=').append(value);
            }
        }
        if (handOver[0] + handOver[2] > 0) {
            sb.append(" handOverFrames=").append(handOver[0]).append(" handOverBytes=").append(handOver[1])
                .append(" handOverRejected=").append(handOver[2]);
        }
        out.println(sb.append(' ').append(traffic));
        out.flush();
    }

    /**
     * @param args command line, see {@code --help}.
     */
}
