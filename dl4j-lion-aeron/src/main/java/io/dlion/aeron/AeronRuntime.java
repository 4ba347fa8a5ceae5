package io.dlion.aeron;

import io.aeron.Aeron;
import io.aeron.CommonContext;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import org.agrona.CloseHelper;

/**
 * An Aeron client with, by default, an embedded media driver in the same JVM (one command, no setup). With
 * {@link Context#embeddedDriver(boolean) embeddedDriver(false)} it connects to a standalone driver (see
 * {@code io.dlion.aeron.cli.DriverMain}) through its Aeron directory, as production deployments do.
 */
public final class AeronRuntime implements AutoCloseable {
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
                final MediaDriver.Context driverCtx = new MediaDriver.Context()
                    .threadingMode(ctx.threadingMode)
                    .dirDeleteOnStart(true)
                    .dirDeleteOnShutdown(true)
                    .termBufferSparseFile(true);
                if (dir != null) {
                    driverCtx.aeronDirectoryName(dir);
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

    /** @return the client, owned by this runtime. */
    public Aeron aeron() {
        return aeron;
    }

    /** @return the Aeron directory of the driver in use. */
    public String aeronDirectoryName() {
        return aeron.context().aeronDirectoryName();
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
    }
}
