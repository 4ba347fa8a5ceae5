package io.dlion.aeron;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.aeron.CommonContext;
import org.agrona.IoUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A process killed with SIGKILL leaves its embedded driver's directory (its log buffers) in {@code /dev/shm}; the next
 * start on the host removes it, and never the directory of a live driver or of one that is just starting.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class StaleDriverDirectoryTest {
    private static final File DEFAULT = new File(CommonContext.AERON_DIR_PROP_DEFAULT).getAbsoluteFile();

    /** A worker process: an embedded driver, its directory printed, then it waits to be killed. */
    public static final class Worker {
        public static void main(final String[] args) throws Exception {
            try (AeronRuntime runtime = AeronRuntime.launch(new AeronRuntime.Context())) {
                System.out.println(runtime.aeronDirectoryName());
                System.out.flush();
                Thread.sleep(TimeUnit.MINUTES.toMillis(5));
            }
        }
    }

    @Test
    void shouldRemoveTheDirectoryOfAKilledProcessOnTheNextStart() throws Exception {
        final Process worker = new ProcessBuilder(new File(System.getProperty("java.home"), "bin/java").getPath(),
            "@" + System.getProperty("dlion.jvmArgfile"), "-cp", System.getProperty("java.class.path"), Worker.class.getName())
            .redirectErrorStream(true).start();
        final String dir;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(worker.getInputStream(), StandardCharsets.UTF_8))) {
            String line = out.readLine();
            while (line != null && !line.startsWith(DEFAULT.getPath() + "-")) {
                line = out.readLine();
            }
            dir = line;
        } finally {
            worker.destroyForcibly();   // SIGKILL: the driver cannot delete its directory
            worker.waitFor(10, TimeUnit.SECONDS);
        }
        assertNotNull(dir, "the worker printed its driver's directory");
        final File killed = new File(dir);
        assertTrue(killed.isDirectory(), "SIGKILL left the directory behind: " + dir);
        final long after = System.currentTimeMillis() + AeronRuntime.STALE_DIRECTORY_AGE_MS + 1;
        // its heartbeat stays fresh for Aeron's driver timeout after the kill: not yet dead
        AeronRuntime.removeStaleDriverDirectories(DEFAULT, after);
        assertTrue(killed.isDirectory(), "a driver whose heartbeat is recent is not touched");
        Thread.sleep(CommonContext.DEFAULT_DRIVER_TIMEOUT_MS + 1_000);
        try (AeronRuntime live = AeronRuntime.launch(new AeronRuntime.Context())) {
            AeronRuntime.removeStaleDriverDirectories(DEFAULT, after);
            assertFalse(killed.exists(), "the dead driver's directory is gone: " + dir);
            assertTrue(new File(live.aeronDirectoryName()).isDirectory(), "a live driver's directory is kept");
        }
    }

    /** A driver killed while it was starting leaves a CnC file it never initialised: old enough, it is removed, at once. */
    @Test
    void shouldRemoveAnOldDirectoryWhoseDriverNeverInitialisedItsCncFile() throws Exception {
        final File dir = new File(DEFAULT.getPath() + "-" + UUID.randomUUID());
        try {
            Files.createDirectories(dir.toPath());
            Files.write(dir.toPath().resolve(io.aeron.CncFileDescriptor.CNC_FILE), new byte[64 * 1024]);   // all zero: version 0
            final long start = System.nanoTime();
            AeronRuntime.removeStaleDriverDirectories(DEFAULT, System.currentTimeMillis() + AeronRuntime.STALE_DIRECTORY_AGE_MS + 1);
            assertFalse(dir.exists(), "removed");
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "without waiting for Aeron's driver timeout");
        } finally {
            IoUtil.delete(dir, true);
        }
    }

    @Test
    void shouldKeepADirectoryYoungerThanAStartingDriversAndOthersNames() throws Exception {
        final File starting = new File(DEFAULT.getPath() + "-" + UUID.randomUUID());
        final File foreign = new File(DEFAULT.getParentFile(), "not-aeron-" + UUID.randomUUID());
        try {
            Files.createDirectories(starting.toPath());
            Files.createDirectories(foreign.toPath());
            AeronRuntime.removeStaleDriverDirectories(DEFAULT, System.currentTimeMillis());
            assertTrue(starting.isDirectory(), "no cnc file yet, but too young to be a dead driver's");
            AeronRuntime.removeStaleDriverDirectories(DEFAULT, System.currentTimeMillis() + AeronRuntime.STALE_DIRECTORY_AGE_MS + 1);
            assertFalse(starting.exists(), "old and without a live driver: removed");
            assertTrue(foreign.isDirectory(), "other names are never touched");
        } finally {
            IoUtil.delete(starting, true);
            IoUtil.delete(foreign, true);
        }
    }
}
