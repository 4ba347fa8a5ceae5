package io.dlion.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.dlion.aeron.AeronRuntime;
import io.dlion.testkit.GarbageFrames;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.status.CountersReader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/**
 * {@code dlion garbage}: fault injection for a real run. Sends {@link GarbageFrames} (seeded mutations of frames that look
 * like the job's votes and HELLOs) to a server's vote stream at a fixed rate, until {@code --duration-s} has passed or
 * SIGTERM/SIGINT.
 * <p>
 * A frame is counted once its publication accepted it; a back-pressured frame is offered again, never skipped. Every
 * {@code --status-interval} seconds, and when it stops sending, it prints {@code garbage sent=<n>}; at the end, after the
 * media driver has delivered (or given up on) every frame accepted, it prints {@code garbage total sent=<n>} exactly once,
 * also after SIGTERM/SIGINT (the shutdown hook holds the JVM until then) and after a failure to connect ({@code 0}). A server with a secret
 * rejects every one of those frames under {@link GarbageFrames#GARBAGE_REASONS}, so a fault run checks that the sum of
 * the server's {@code rejected} counters over those reasons equals that total (and that the other reasons did not move).
 * <p>
 * It refuses to run without {@code --server-has-secret}: a server without a secret accepts any well-formed HELLO, so a
 * mutated HELLO would take over a real worker's id instead of being rejected (see {@link GarbageFrames}). For the same
 * reason it never holds the job's secret: {@code --secret-file} is refused.
 */
@Command(name = "garbage", mixinStandardHelpOptions = true,
    description = "Fault injection: seeded garbage frames to a server's vote stream, each rejected by a server with a secret.")
public final class GarbageCommand implements Callable<Integer> {
    /** Line printed every status interval, followed by the frames sent so far. */
    public static final String STATUS_PREFIX = "garbage sent=";
    /** Line printed once at the end, followed by the frames sent. */
    public static final String TOTAL_PREFIX = "garbage total sent=";
    /** How long the end waits for the media driver to deliver the frames sent (its publication linger is 5 s by default). */
    static final long DRAIN_TIMEOUT_MS = 15_000;
    private static final long MAX_PARK_NS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long BACK_PRESSURE_PARK_NS = TimeUnit.MICROSECONDS.toNanos(100);

    @Spec
    CommandSpec spec;

    @Option(names = "--job", required = true, description = "Job id of the server (garbage of the right job goes furthest).")
    int job;

    @Option(names = "--workers", required = true, description = "Number of workers of the job (1..1024).")
    int workers;

    @Option(names = "--params", required = true, description = "Parameter count of the whole vector, as the server's.")
    long params;

    @Option(names = "--rate", defaultValue = "200", description = "Frames per second (default: ${DEFAULT-VALUE}).")
    double rate;

    @Option(names = "--duration-s", defaultValue = "0", description = "Seconds to send for, 0 for until SIGTERM/SIGINT (default: ${DEFAULT-VALUE}).")
    long durationS;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the frames (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--server-has-secret", description = "Required: confirms the server runs with --secret-file. Without a secret the"
        + " server accepts any well-formed HELLO and a mutated one would take over a real worker's id.")
    boolean serverHasSecret;

    @Option(names = "--connect-timeout-ms", defaultValue = "20000", description = "How long to wait for the server's vote subscription"
        + " (default: ${DEFAULT-VALUE}).")
    long connectTimeoutMs;

    @Option(names = "--status-interval", defaultValue = "10", description = "Seconds between '" + STATUS_PREFIX + "N' lines, 0 for none"
        + " (default: ${DEFAULT-VALUE}).")
    int statusInterval;

    @Mixin
    TransportOptions transport;

    private volatile boolean running = true;
    private long sent;

    @Override
    public Integer call() throws InterruptedException {
        final GarbageFrames.Context frames = validate();
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        // SIGTERM / Ctrl-C: the hook stops the sending loop and holds the JVM until the frames are delivered, the total is
        // printed and the driver is closed, so that nothing reads the driver's memory-mapped files after they are unmapped
        final CountDownLatch closed = new CountDownLatch(1);
        final Thread hook = new Thread(() -> {
            running = false;
            try {
                closed.await(DRAIN_TIMEOUT_MS + TimeUnit.SECONDS.toMillis(5), TimeUnit.MILLISECONDS);
            } catch (final InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        }, "dlion-garbage-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        int exitCode = 0;
        try (AeronRuntime runtime = transport.launch()) {
            final ExclusivePublication publication = runtime.aeron().addExclusivePublication(transport.voteChannel(workers), transport.voteStream);
            try {
                final GarbageFrames garbage = new GarbageFrames(frames.maxFrameLength(publication.maxPayloadLength())
                    .senderSessionId(publication.sessionId()));
                out.println("garbage: waiting for a server on " + publication.channel() + " stream " + publication.streamId());
                out.flush();
                if (!awaitConnected(publication)) {
                    if (running) {
                        err.println("garbage: no server subscribed to " + publication.channel() + " stream " + publication.streamId()
                            + " after --connect-timeout-ms=" + connectTimeoutMs
                            + "; is the server running on this channel, with the same --vote-stream and Aeron driver?");
                        err.flush();
                        exitCode = 1;
                    }
                } else {
                    out.println("garbage job=" + job + " workers=" + workers + " " + frames.layout() + " seed=" + seed + " rate=" + rate
                        + "/s votes=" + publication.channel() + " stream=" + publication.streamId() + " session=" + publication.sessionId()
                        + " maxFrameLength=" + garbage.maxFrameLength() + " aeronDir=" + runtime.aeronDirectoryName());
                    out.flush();
                    send(publication, garbage, out, err);
                    out.println(STATUS_PREFIX + sent);
                    out.flush();
                }
            } finally {
                if (!closeAndDrain(runtime.aeron(), publication, sent)) {
                    err.println("garbage: the media driver had not delivered every frame after " + DRAIN_TIMEOUT_MS
                        + " ms; the server may have received fewer than the total");
                    err.flush();
                }
            }
        } finally {
            out.println(TOTAL_PREFIX + sent);
            out.flush();
            closed.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (final IllegalStateException shuttingDown) {
                // the hook is running: it returns now that closed is counted down
            }
        }
        return exitCode;
    }

    private GarbageFrames.Context validate() {
        final CommandLine commandLine = spec.commandLine();
        if (!serverHasSecret) {
            throw new CommandLine.ParameterException(commandLine, "--server-has-secret is required: confirm that the server runs with"
                + " --secret-file. Without a secret the server accepts any well-formed HELLO, and a mutated HELLO from this process"
                + " would take over a real worker's id instead of being rejected.");
        }
        if (transport.secretFile != null) {
            throw new CommandLine.ParameterException(commandLine, "--secret-file must not be given: the garbage sender never holds the"
                + " job's secret (its HELLOs must fail authentication); pass --server-has-secret instead.");
        }
        if (!(rate > 0) || Double.isInfinite(rate)) {
            throw new CommandLine.ParameterException(commandLine, "--rate must be a positive number of frames per second, got " + rate);
        }
        if (durationS < 0) {
            throw new CommandLine.ParameterException(commandLine, "--duration-s must be >= 0 (0: until SIGTERM/SIGINT), got " + durationS);
        }
        if (connectTimeoutMs <= 0) {
            throw new CommandLine.ParameterException(commandLine, "--connect-timeout-ms must be > 0, got " + connectTimeoutMs);
        }
        if (statusInterval < 0) {
            throw new CommandLine.ParameterException(commandLine, "--status-interval must be >= 0, got " + statusInterval);
        }
        try {
            transport.requireStar("garbage");
            transport.voteChannel(workers);
            return new GarbageFrames.Context().jobId(job).workers(workers).paramCount(params).chunkWords(transport.chunkWords).seed(seed)
                .conclude();
        } catch (final IllegalArgumentException ex) {
            throw new CommandLine.ParameterException(commandLine, ex.getMessage(), ex);
        }
    }

    /** @return true once connected; false after the connect timeout or the stop signal. */
    private boolean awaitConnected(final Publication publication) {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(connectTimeoutMs);
        while (!publication.isConnected()) {
            if (!running || System.nanoTime() - deadlineNs > 0) {
                return false;
            }
            LockSupport.parkNanos(MAX_PARK_NS);
        }
        return true;
    }

    /** Offer frames at the rate until the duration has passed or the stop signal, counting those accepted in {@link #sent}. */
    private void send(final ExclusivePublication publication, final GarbageFrames garbage, final PrintWriter out, final PrintWriter err) {
        final long startNs = System.nanoTime();
        final long durationNs = TimeUnit.SECONDS.toNanos(durationS);
        final long statusNs = TimeUnit.SECONDS.toNanos(statusInterval);
        final double periodNs = TimeUnit.SECONDS.toNanos(1) / rate;
        long nextStatusNs = statusNs;
        double nextFrameNs = 0;
        boolean waitingForServer = false;
        DirectBuffer frame = null;
        while (running) {
            final long elapsedNs = System.nanoTime() - startNs;
            if (durationNs > 0 && elapsedNs >= durationNs) {
                break;
            }
            if (statusNs > 0 && elapsedNs >= nextStatusNs) {
                out.println(STATUS_PREFIX + sent);
                out.flush();
                nextStatusNs += statusNs;
            }
            if (elapsedNs < nextFrameNs) {
                LockSupport.parkNanos(Math.min((long)(nextFrameNs - elapsedNs), MAX_PARK_NS));
                continue;
            }
            if (frame == null) {
                frame = garbage.next();
            }
            final long result = publication.offer(frame);
            if (result > 0) {
                sent++;
                frame = null;
                nextFrameNs += periodNs;
                if (elapsedNs - nextFrameNs > TimeUnit.SECONDS.toNanos(1)) {
                    nextFrameNs = elapsedNs; // after a long stall, go on at the rate rather than in a burst
                }
                waitingForServer = false;
            } else if (result == Publication.BACK_PRESSURED || result == Publication.ADMIN_ACTION) {
                LockSupport.parkNanos(BACK_PRESSURE_PARK_NS);
            } else if (result == Publication.NOT_CONNECTED) {
                if (!waitingForServer) {
                    err.println("garbage: the server's vote subscription went away; waiting for it (sent=" + sent + ")");
                    err.flush();
                    waitingForServer = true;
                }
                LockSupport.parkNanos(MAX_PARK_NS);
            } else if (result == Publication.CLOSED) {
                throw new IllegalStateException("vote publication closed: " + publication.channel());
            } else if (result == Publication.MAX_POSITION_EXCEEDED) {
                throw new IllegalStateException("vote publication reached its maximum position (use a larger term-length): "
                    + publication.channel());
            } else {
                throw new IllegalStateException("unknown offer result " + result);
            }
        }
    }

    /**
     * Close the publication and wait until the driver has released it: it does so once every frame accepted has been
     * consumed (IPC) or sent and its linger for retransmissions has passed (UDP), or once no subscriber is left.
     *
     * @param sent frames accepted by the publication: with none, there is nothing to wait for.
     * @return false when that did not happen within {@link #DRAIN_TIMEOUT_MS}.
     */
    private static boolean closeAndDrain(final Aeron aeron, final ExclusivePublication publication, final long sent) {
        final CountersReader counters = aeron.countersReader();
        final int limitId = publication.positionLimitId();
        final long registrationId = publication.registrationId();
        publication.close();
        if (sent == 0) {
            return true;
        }
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DRAIN_TIMEOUT_MS);
        while (counters.getCounterState(limitId) == CountersReader.RECORD_ALLOCATED && counters.getCounterRegistrationId(limitId) == registrationId) {
            if (System.nanoTime() - deadlineNs > 0) {
                return false;
            }
            LockSupport.parkNanos(MAX_PARK_NS);
        }
        return true;
    }

    /**
     * @param args command line, see {@code --help}.
     */
}
