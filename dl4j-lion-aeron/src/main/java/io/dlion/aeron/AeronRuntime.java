package io.dlion.aeron;

import java.io.File;
import java.net.InetSocketAddress;
import java.nio.MappedByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

import io.aeron.Aeron;
import io.aeron.CncFileDescriptor;
import io.aeron.CommonContext;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.driver.ext.DebugReceiveChannelEndpoint;
import io.aeron.driver.ext.LossGenerator;
import io.aeron.driver.ext.RandomLossGenerator;
import org.agrona.BufferUtil;
import org.agrona.CloseHelper;
import org.agrona.IoUtil;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import static io.aeron.driver.Configuration.IDLE_MAX_PARK_NS;
import static io.aeron.driver.Configuration.IDLE_MAX_SPINS;
import static io.aeron.driver.Configuration.IDLE_MAX_YIELDS;
import static io.aeron.driver.Configuration.IDLE_MIN_PARK_NS;
import static io.aeron.driver.Configuration.SHARED_IDLE_STRATEGY_PROP_NAME;

/**
 * An Aeron client with, by default, an embedded media driver in the same JVM (one command, no setup). With
 * {@link Context#embeddedDriver(boolean) embeddedDriver(false)} it connects to a standalone driver (see
 * {@code io.dlion.cli.DriverCommand}) through its Aeron directory, as production deployments do.
 * <p>
 * Fault injection: with {@link Context#receiveLossRate(double)} &gt; 0 (or Aeron's own system property
 * {@value #LOSS_RATE_PROP}) the embedded driver drops that fraction of the UDP data frames it receives, through
 * aeron-driver's {@link DebugReceiveChannelEndpoint}; {@link #framesReceived()} and {@link #framesDropped()} count them.
 */
public final class AeronRuntime implements AutoCloseable {
    /** How old a driver directory without a live driver must be before it is deleted, in milliseconds. */
    public static final long STALE_DIRECTORY_AGE_MS = 60_000;
    private static final System.Logger LOG = System.getLogger(AeronRuntime.class.getName());
    /**
     * Counter values of the embedded driver, 4 MiB: room for 32,768 counters (Aeron's default, 1 MiB, holds 8,192). The
     * driver keeps a position counter for every publication and image, and a worker has ten of its own, so a job of 65
     * sharded workers in one JVM needs about 13,000.
     */
    public static final int COUNTER_VALUES_BUFFER_LENGTH = 4 * 1024 * 1024;
    /** Aeron's system property for the receive data loss rate of its debug channel endpoints. */
    public static final String LOSS_RATE_PROP = "aeron.debug.receive.data.loss.rate";
    /** Aeron's system property for the seed of that loss. */
    public static final String LOSS_SEED_PROP = "aeron.debug.receive.data.loss.seed";

    /**
     * System property naming a file that switches the receive loss on and off while the process runs (fault tests: a
     * burst of loss): with it, the embedded driver drops received data frames at the loss rate only while the file
     * exists (looked at every {@value #LOSS_SWITCH_POLL_MS} ms); without it, always.
     */
    public static final String LOSS_SWITCH_PROP = "dlion.debug.receive.loss.switch";
    static final long LOSS_SWITCH_POLL_MS = 10;

    private static final AtomicLong FRAMES = new AtomicLong();
    private static final AtomicLong DROPPED = new AtomicLong();

    private final MediaDriver driver;
    private final Aeron aeron;

    private AeronRuntime(final MediaDriver driver, final Aeron aeron) {
        this.driver = driver;
        this.aeron = aeron;
    }

    /**
     * Start the driver (when embedded) and connect the client.
     *
     * @param ctx configuration, concluded here.
     * @return the running runtime; close it to stop both.
     */
    public static AeronRuntime launch(final Context ctx) {
        ctx.conclude();
        MediaDriver driver = null;
        try {
            String dir = ctx.aeronDirectoryName;
            if (ctx.embeddedDriver) {
                if (dir == null) {
                    removeStaleDriverDirectories(new File(CommonContext.AERON_DIR_PROP_DEFAULT).getAbsoluteFile(), System.currentTimeMillis());
                }
                final MediaDriver.Context driverCtx = new MediaDriver.Context()
                    .threadingMode(ctx.threadingMode)
                    .dirDeleteOnStart(true)
                    .dirDeleteOnShutdown(true)
                    .termBufferSparseFile(true)
                    .counterValuesBufferLength(COUNTER_VALUES_BUFFER_LENGTH);
                if (System.getProperty(SHARED_IDLE_STRATEGY_PROP_NAME) == null) {
                    // yields while a round is in flight, Aeron's backoff between rounds (RoundActivity); the property overrides
                    driverCtx.sharedIdleStrategy(RoundActivity.idleStrategy(new BackoffIdleStrategy(IDLE_MAX_SPINS,
                        IDLE_MAX_YIELDS, IDLE_MIN_PARK_NS, IDLE_MAX_PARK_NS),
                        (int) IDLE_MAX_SPINS));
                }
                if (ctx.receiveLossRate > 0) {
                    final LossGenerator loss = counting(switched(new RandomLossGenerator(ctx.receiveLossRate, ctx.lossSeed),
                        System.getProperty(LOSS_SWITCH_PROP)));
                    driverCtx.receiveChannelEndpointSupplier((channel, dispatcher, status, context) ->
                        new DebugReceiveChannelEndpoint(channel, dispatcher, status, context, loss, new RandomLossGenerator(0, 1)));
                }
                if (dir != null) {
                    driverCtx.aeronDirectoryName(dir);
                }
                if (ctx.publicationConnectionTimeoutNs > 0) {
                    driverCtx.publicationConnectionTimeoutNs(ctx.publicationConnectionTimeoutNs);
                }
                driver = MediaDriver.launchEmbedded(driverCtx);
                dir = driver.aeronDirectoryName();
            }
            final Aeron.Context clientCtx = new Aeron.Context();
            if (dir != null) {
                clientCtx.aeronDirectoryName(dir);
            }
            return new AeronRuntime(driver, Aeron.connect(clientCtx));
        } catch (final RuntimeException ex) {
            CloseHelper.quietClose(driver);
            throw ex;
        }
    }

    /**
     * Delete the directories that embedded drivers of this user left behind when their process was killed (SIGKILL, a
     * preempted container): {@code <aeron dir>-<uuid>} beside the default Aeron directory, whose driver has not
     * heartbeat for {@link CommonContext#DEFAULT_DRIVER_TIMEOUT_MS} (Aeron's own test of a live driver) and that is older
     * than {@value #STALE_DIRECTORY_AGE_MS} ms (a driver that is just starting has no heartbeat yet). Their log buffers
     * would otherwise fill {@code /dev/shm} on a host whose workers are restarted again and again.
     *
     * @param defaultDirectory the default Aeron directory, e.g. {@code /dev/shm/aeron-alice}; its siblings named
     *                         {@code aeron-alice-*} are the embedded drivers'.
     * @param nowMs            the wall clock, in milliseconds.
     * @return the directories deleted.
     */
    public static int removeStaleDriverDirectories(final File defaultDirectory, final long nowMs) {
        final File parent = defaultDirectory.getParentFile();
        final String prefix = defaultDirectory.getName() + "-";
        final File[] candidates = parent == null ? null : parent.listFiles(f -> f.isDirectory() && f.getName().startsWith(prefix));
        int removed = 0;
        for (final File candidate : candidates == null ? new File[0] : candidates) {
            if (nowMs - candidate.lastModified() > STALE_DIRECTORY_AGE_MS && !mayBeAlive(candidate)) {
                IoUtil.delete(candidate, true);
                if (!candidate.exists()) {
                    removed++;
                    LOG.log(System.Logger.Level.INFO, "removed the directory of a dead media driver: " + candidate);
                }
            }
        }
        return removed;
    }

    /**
     * @param directory a driver's directory.
     * @return false only when its driver is certainly dead: no CnC file, one that was never initialised (the driver died
     *     starting; the directory is older than {@value #STALE_DIRECTORY_AGE_MS} ms), or a heartbeat older than Aeron's
     *     driver timeout; true when it lives or cannot be read (another Aeron version, a file being deleted).
     */
    private static boolean mayBeAlive(final File directory) {
        final File cnc = new File(directory, CncFileDescriptor.CNC_FILE);
        if (!cnc.exists() || cnc.length() <= CncFileDescriptor.META_DATA_LENGTH) {
            return false;
        }
        MappedByteBuffer buffer = null;
        try {
            buffer = IoUtil.mapExistingFile(cnc, "CnC file");
            if (CncFileDescriptor.createMetaDataBuffer(buffer).getIntVolatile(CncFileDescriptor.cncVersionOffset(0)) == 0) {
                return false;
            }
            return CommonContext.isDriverActive(CommonContext.DEFAULT_DRIVER_TIMEOUT_MS, message -> { }, buffer);
        } catch (final RuntimeException unreadable) {
            return true;
        } finally {
            BufferUtil.free(buffer);
        }
    }

    /** @return the client, owned by this runtime. */
    public Aeron aeron() {
        return aeron;
    }

    /** @return what the driver in use sent and received on the network, retransmissions and NAKs included. */
    public DriverTraffic traffic() {
        return DriverTraffic.read(aeron.countersReader());
    }

    /** @return the Aeron directory of the driver in use. */
    public String aeronDirectoryName() {
        return aeron.context().aeronDirectoryName();
    }

    /** @return UDP data frames the loss-injecting receive endpoints of this JVM saw. */
    public static long framesReceived() {
        return FRAMES.get();
    }

    /** @return UDP data frames they dropped. */
    public static long framesDropped() {
        return DROPPED.get();
    }

    /** @return the delegate's choice while the switch file exists, else no drop; the delegate itself without a file. */
    private static LossGenerator switched(final LossGenerator delegate, final String switchFile) {
        if (switchFile == null || switchFile.isEmpty()) {
            return delegate;
        }
        final java.nio.file.Path file = java.nio.file.Path.of(switchFile);
        return new LossGenerator() {
            private long nextLookNs = System.nanoTime();
            private boolean on;

            @Override
            public boolean shouldDropFrame(final InetSocketAddress address, final UnsafeBuffer buffer, final int length) {
                final long now = System.nanoTime();
                if (now - nextLookNs >= 0) {
                    on = java.nio.file.Files.exists(file);
                    nextLookNs = now + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(LOSS_SWITCH_POLL_MS);
                }
                return on && delegate.shouldDropFrame(address, buffer, length);
            }

            @Override
            public boolean shouldDropFrame(final InetSocketAddress address, final UnsafeBuffer buffer, final int streamId,
                final int sessionId, final int termId, final int termOffset, final int length) {
                return shouldDropFrame(address, buffer, length);
            }
        };
    }

    private static LossGenerator counting(final LossGenerator delegate) {
        return new LossGenerator() {
            @Override
            public boolean shouldDropFrame(final InetSocketAddress address, final UnsafeBuffer buffer, final int length) {
                FRAMES.incrementAndGet();
                final boolean drop = delegate.shouldDropFrame(address, buffer, length);
                if (drop) {
                    DROPPED.incrementAndGet();
                }
                return drop;
            }

            @Override
            public boolean shouldDropFrame(final InetSocketAddress address, final UnsafeBuffer buffer, final int streamId,
                final int sessionId, final int termId, final int termOffset, final int length) {
                return shouldDropFrame(address, buffer, length);
            }
        };
    }

    /** @return the embedded driver, or null when connected to a standalone one. */
    public MediaDriver driver() {
        return driver;
    }

    @Override
    public void close() {
        CloseHelper.closeAll(aeron, driver);
    }

    /** Where the media driver comes from. */
    public static final class Context {
        private boolean embeddedDriver = true;
        private String aeronDirectoryName;
        private ThreadingMode threadingMode = ThreadingMode.SHARED;
        private double receiveLossRate = Double.parseDouble(System.getProperty(LOSS_RATE_PROP, "0"));
        private long lossSeed = Long.getLong(LOSS_SEED_PROP, System.nanoTime());
        private long publicationConnectionTimeoutNs;

        /**
         * Validate once.
         *
         * @return this for a fluent API.
         */
        public Context conclude() {
            if (!embeddedDriver && aeronDirectoryName == null) {
                aeronDirectoryName = CommonContext.getAeronDirectoryName();
            }
            if (threadingMode == null) {
                throw new IllegalArgumentException("threadingMode must be set");
            }
            if (!(receiveLossRate >= 0 && receiveLossRate < 1)) {
                throw new IllegalArgumentException("receiveLossRate must be in [0, 1), got " + receiveLossRate);
            }
            if (receiveLossRate > 0 && !embeddedDriver) {
                throw new IllegalArgumentException("receiveLossRate needs the embedded driver; a standalone driver takes "
                    + LOSS_RATE_PROP + " with aeron.ReceiveChannelEndpoint.supplier=io.aeron.driver.ext.DebugReceiveChannelEndpointSupplier");
            }
            if (publicationConnectionTimeoutNs < 0) {
                throw new IllegalArgumentException("publicationConnectionTimeoutNs must be >= 0 (0: Aeron's), got " + publicationConnectionTimeoutNs);
            }
            if (publicationConnectionTimeoutNs > 0 && !embeddedDriver) {
                throw new IllegalArgumentException("publicationConnectionTimeoutNs needs the embedded driver; a standalone driver takes"
                    + " aeron.publication.connection.timeout");
            }
            return this;
        }

        /**
         * @param embeddedDriver true (default) to launch a driver inside this JVM, false to use a standalone one.
         * @return this for a fluent API.
         */
        public Context embeddedDriver(final boolean embeddedDriver) {
            this.embeddedDriver = embeddedDriver;
            return this;
        }

        public boolean embeddedDriver() {
            return embeddedDriver;
        }

        /**
         * @param aeronDirectoryName the driver's directory; null for Aeron's default (embedded: a random one).
         * @return this for a fluent API.
         */
        public Context aeronDirectoryName(final String aeronDirectoryName) {
            this.aeronDirectoryName = aeronDirectoryName;
            return this;
        }

        public String aeronDirectoryName() {
            return aeronDirectoryName;
        }

        /**
         * @param threadingMode of the embedded driver: SHARED (one thread, default; fits small machines) or DEDICATED.
         * @return this for a fluent API.
         */
        public Context threadingMode(final ThreadingMode threadingMode) {
            this.threadingMode = threadingMode;
            return this;
        }

        public ThreadingMode threadingMode() {
            return threadingMode;
        }

        /**
         * @param receiveLossRate fraction of received UDP data frames the embedded driver drops, for fault tests
         *                        (default: the system property {@value AeronRuntime#LOSS_RATE_PROP}, else 0).
         * @return this for a fluent API.
         */
        public Context receiveLossRate(final double receiveLossRate) {
            this.receiveLossRate = receiveLossRate;
            return this;
        }

        public double receiveLossRate() {
            return receiveLossRate;
        }

        /**
         * @param lossSeed seed of the dropped-frame choice (default: {@value AeronRuntime#LOSS_SEED_PROP}, else the clock).
         * @return this for a fluent API.
         */
        public Context lossSeed(final long lossSeed) {
            this.lossSeed = lossSeed;
            return this;
        }

        public long lossSeed() {
            return lossSeed;
        }

        /**
         * @param publicationConnectionTimeoutNs how long the embedded driver's publications stay connected without a status
         *                                       message from their subscriber; 0 (default) for Aeron's (5 s, or the property
         *                                       {@code aeron.publication.connection.timeout}). A sharded worker finds a slice
         *                                       server dead only once its vote publication lost its connection, so this is
         *                                       set to the worker's silence ({@code SliceOwners#silenceNs()}).
         * @return this for a fluent API.
         */
        public Context publicationConnectionTimeoutNs(final long publicationConnectionTimeoutNs) {
            this.publicationConnectionTimeoutNs = publicationConnectionTimeoutNs;
            return this;
        }

        public long publicationConnectionTimeoutNs() {
            return publicationConnectionTimeoutNs;
        }
    }
}
