package io.dlion.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ./dlion sweep}: a bad option prints one line naming it and exits with 2, before any run starts. */
class SweepCommandTest {

    private static String fail(final Path out, final String... args) {
        final StringWriter err = new StringWriter();
        final CommandLine cli = DLionCli.commandLine();
        cli.setErr(new PrintWriter(err, true));
        final String[] all = new String[args.length + 3];
        all[0] = "sweep";
        System.arraycopy(args, 0, all, 1, args.length);
        all[args.length + 1] = "--out";
        all[args.length + 2] = out.toString();
        assertEquals(2, cli.execute(all), "exit code; stderr: " + err);
        return err.toString();
    }

    @Test
    void shouldNameTheBadOptionAndStartNoRun(@TempDir final Path out) {
        assertTrue(fail(out, "--workers", "2,0").startsWith("dlion: --workers must be in [1, 1024], got 0"));
        assertTrue(fail(out, "--worker-batch", "0").startsWith("dlion: --worker-batch must be >= 1, got 0"));
        assertTrue(fail(out, "--methods", "mavo,sgd").startsWith("dlion: --methods must be among mavo,avg,lion,adamw, got 'sgd'"));
        assertTrue(fail(out, "--lr-lion", "0").startsWith("dlion: --lr-lion must be > 0, got 0.0"));
        assertTrue(fail(out, "--epochs", "0").startsWith("dlion: --epochs must be >= 1, got 0"));
        assertTrue(fail(out, "--workers", "x").contains("--workers"));
        assertFalse(Files.exists(out.resolve("sweep.md")));
    }
}
