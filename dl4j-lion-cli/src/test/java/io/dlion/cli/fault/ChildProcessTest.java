package io.dlion.cli.fault;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import io.dlion.testkit.ChildProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A child JVM's output, including what its shutdown hook prints after SIGTERM, reaches the run and the log file. */
class ChildProcessTest {

    @Test
    void shouldKeepWhatTheChildPrintsAfterSigterm(@TempDir final Path dir) throws Exception {
        final Path log = dir.resolve("garbage.log");
        final ChildProcess child = ChildProcess.start("garbage", "io.dlion.cli.DLionCli", List.of("garbage", "--job", "1", "--workers", "2",
            "--params", "1000", "--udp", "127.0.0.1:9:9", "--server-has-secret", "--connect-timeout-ms", "60000"), "256m", log);
        // no server: the sender waits to connect until SIGTERM makes it print its total
        final long deadline = System.nanoTime() + 60_000_000_000L;
        while (child.lastLine(l -> l.startsWith("garbage: waiting")) == null && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        child.stop();
        final String total = child.lastLine(l -> l.startsWith("garbage total sent="));
        assertNotNull(total, "lines: " + child.lines());
        assertEquals("garbage total sent=0", total);
        assertTrue(Files.readString(log).contains("garbage total sent=0"));
    }
}
