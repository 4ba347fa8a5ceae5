package io.dlion.cli;

import java.util.concurrent.Callable;

import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import org.agrona.concurrent.ShutdownSignalBarrier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code dlion driver}: a standalone Aeron media driver for production hosts; servers and workers then run
 * with {@code --aeron-dir DIR}. Any Aeron driver property ({@code -Daeron.*}) applies as usual.
 */
@Command(name = "driver", mixinStandardHelpOptions = true, description = "Standalone Aeron media driver for dlion servers and workers.")
public final class DriverCommand implements Callable<Integer> {
    @Option(names = "--aeron-dir", description = "Aeron directory (default: Aeron's default for this user).")
    String aeronDir;

    @Option(names = "--threading", defaultValue = "DEDICATED", description = "Threading mode: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    ThreadingMode threading;

    @Override
    public Integer call() {
        final MediaDriver.Context ctx = new MediaDriver.Context().threadingMode(threading).dirDeleteOnStart(true).dirDeleteOnShutdown(true);
        if (aeronDir != null) {
            ctx.aeronDirectoryName(aeronDir);
        }
        final ShutdownSignalBarrier barrier = new ShutdownSignalBarrier();
        try (MediaDriver driver = MediaDriver.launch(ctx)) {
            System.out.println("media driver running in " + driver.aeronDirectoryName() + " (" + threading + ")");
            System.out.flush();
            barrier.await();
        }
        return 0;
    }

    /**
     * @param args command line, see {@code --help}.
     */
}
