package io.dlion.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Safe by default: a UDP job needs the job's secret in an owner-only file, or an explicit --insecure. */
class SecretFileTest {
    @TempDir
    Path dir;

    @Test
    void shouldWriteASecretReadableByItsOwnerOnlyAndNeverOverwriteOne() throws Exception {
        final Path file = dir.resolve("job.secret");
        assertEquals(0, run("secret", file.toString()).exit);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        final byte[] secret = Files.readAllBytes(file);
        assertEquals(32, secret.length);
        assertArrayEquals(secret, JobSecret.read(file));
        final Result again = run("secret", file.toString());
        assertEquals(2, again.exit);
        assertTrue(again.err.contains(file.toString()) && again.err.contains("not overwritten"), again.err);
        assertArrayEquals(secret, Files.readAllBytes(file), "the first secret is kept");
        final Path other = dir.resolve("other.secret");
        run("secret", other.toString());
        assertFalse(Arrays.equals(secret, Files.readAllBytes(other)), "random, not a constant");
    }

    @Test
    void shouldRefuseASecretFileOthersCanReadNamingIt() throws Exception {
        final Path file = dir.resolve("open.secret");
        Files.write(file, new byte[32]);
        for (final String mode : List.of("rw-r-----", "rw----r--", "rw--w----")) {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
            final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> JobSecret.read(file));
            assertTrue(refused.getMessage().contains(file.toString()) && refused.getMessage().contains("chmod 600"), refused.getMessage());
        }
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        assertEquals(32, JobSecret.read(file).length);
        Files.write(file, new byte[15]);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> JobSecret.read(file)).getMessage().contains("15 bytes"));
    }

    @Test
    void shouldRefuseAUdpServerWithoutASecretOrInsecure() throws Exception {
        final Result server = run("server", "--job", "1", "--workers", "2", "--params", "1000", "--udp", "127.0.0.1:9:9");
        assertEquals(2, server.exit);
        assertTrue(server.err.contains("--secret-file") && server.err.contains("--insecure"), server.err);
        final Path open = dir.resolve("open.secret");
        Files.write(open, new byte[32]);
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
        final Result tooOpen = run("server", "--job", "1", "--workers", "2", "--params", "1000", "--udp", "127.0.0.1:9:9", "--secret-file",
            open.toString());
        assertEquals(2, tooOpen.exit);
        assertTrue(tooOpen.err.contains(open.toString()), tooOpen.err);
        final Result both = run("server", "--job", "1", "--workers", "2", "--params", "1000", "--udp", "127.0.0.1:9:9", "--secret-file",
            open.toString(), "--insecure");
        assertEquals(2, both.exit);
        assertTrue(both.err.contains("exclude each other"), both.err);
    }

    @Test
    void shouldRefuseAWorkerWithoutASecretAndWarnWhenInsecure() throws Exception {
        final String[] worker = {"worker", "--server", "127.0.0.1", "--local-host", "127.0.0.1", "--worker-id", "0", "--workers", "1",
            "--out", dir.toString()};
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> config(worker));
        assertTrue(refused.getMessage().contains("--secret-file") && refused.getMessage().contains("./dlion secret"), refused.getMessage());
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final PrintStream stderr = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            final String[] insecure = Arrays.copyOf(worker, worker.length + 1);
            insecure[worker.length] = "--insecure";
            config(insecure);
        } finally {
            System.setErr(stderr);
        }
        assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("WARNING: worker runs with --insecure"), err.toString());
        final Path file = dir.resolve("job.secret");
        JobSecret.write(file);
        final String[] withSecret = Arrays.copyOf(worker, worker.length + 2);
        withSecret[worker.length] = "--secret-file";
        withSecret[worker.length + 1] = file.toString();
        assertDoesNotThrow(() -> config(withSecret));
    }

    @Test
    void shouldRefuseFrameMacWithoutASecretOrOnTheDenseBaseline() throws Exception {
        final Result server = run("server", "--job", "1", "--workers", "2", "--params", "1000", "--udp", "127.0.0.1:9:9", "--insecure",
            "--frame-mac");
        assertEquals(2, server.exit);
        assertTrue(server.err.contains("--frame-mac") && server.err.contains("--secret-file"), server.err);
        final Path file = dir.resolve("frame.secret");
        JobSecret.write(file);
        final Result dense = run("server", "--job", "1", "--workers", "2", "--params", "1000", "--udp", "127.0.0.1:9:9", "--secret-file",
            file.toString(), "--frame-mac", "--sharing", "dense");
        assertEquals(2, dense.exit);
        assertTrue(dense.err.contains("--frame-mac") && dense.err.contains("dense"), dense.err);
        final String[] worker = {"worker", "--server", "127.0.0.1", "--local-host", "127.0.0.1", "--worker-id", "0", "--workers", "1",
            "--out", dir.toString(), "--insecure", "--frame-mac"};
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> config(worker));
        assertTrue(refused.getMessage().contains("--frame-mac") && refused.getMessage().contains("--secret-file"), refused.getMessage());
        final String[] denseWorker = {"worker", "--server", "127.0.0.1", "--local-host", "127.0.0.1", "--worker-id", "0", "--workers", "1",
            "--out", dir.toString(), "--secret-file", file.toString(), "--frame-mac", "--sharing", "dense-lion"};
        final IllegalArgumentException denseRefused = assertThrows(IllegalArgumentException.class, () -> config(denseWorker));
        assertTrue(denseRefused.getMessage().contains("--frame-mac"), denseRefused.getMessage());
    }

    private static void config(final String[] args) {
        final CommandLine.ParseResult parsed = DLionCli.commandLine().parseArgs(args);
        ((WorkerCommand)parsed.subcommand().commandSpec().userObject()).config();
    }

    private static Result run(final String... args) {
        final StringWriter err = new StringWriter();
        final CommandLine cli = DLionCli.commandLine();
        cli.setErr(new PrintWriter(err, true));
        final int exit = cli.execute(args);
        return new Result(exit, err.toString());
    }

    private record Result(int exit, String err) {
    }
}
