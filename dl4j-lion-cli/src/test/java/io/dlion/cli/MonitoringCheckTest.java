package io.dlion.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code scripts/monitoring-check.sh}: a real Prometheus (Debian's, installed by the script when missing) scrapes a
 * server and 3 worker processes over UDP; the script's PromQL checks (rising rounds on every worker, rejected frames
 * after {@code ./dlion garbage}, a SIGKILLed worker seen within the round deadline) pass, and it leaves no process
 * behind.
 */
@Tag("slow")
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class MonitoringCheckTest {
    private static final Path SCRIPT = Path.of("..", "scripts", "monitoring-check.sh").toAbsolutePath().normalize();

    @Test
    void shouldSeeTheJobInARealPrometheus(@TempDir final Path dir) throws Exception {
        final Path log = dir.resolve("check.log");
        final Path kept = dir.resolve("run");
        final Process check = new ProcessBuilder("bash", SCRIPT.toString(), "--keep", kept.toString()).redirectErrorStream(true)
            .redirectOutput(log.toFile()).start();
        assertTrue(check.waitFor(14, TimeUnit.MINUTES), "the check finished");
        final String out = Files.readString(log, StandardCharsets.UTF_8);
        assertEquals(0, check.exitValue(), out);
        assertTrue(out.contains("all 4 endpoints pass"), out);
        assertTrue(out.contains("monitoring check passed"), out);
        assertEquals("", processesOf(kept), "every process the script started is gone");
    }

    /** @return the command lines of running processes that name the check's directory. */
    private static String processesOf(final Path dir) throws IOException, InterruptedException {
        final Process ps = new ProcessBuilder("ps", "-eo", "args").start();
        final String all = new String(ps.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        ps.waitFor();
        final StringBuilder found = new StringBuilder();
        for (final String line : all.split("\n")) {
            if (line.contains(dir.toString()) && !line.startsWith("ps ")) {
                found.append(line).append('\n');
            }
        }
        return found.toString();
    }
}
