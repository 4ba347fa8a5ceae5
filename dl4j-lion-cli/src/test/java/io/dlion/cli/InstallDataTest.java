package io.dlion.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code scripts/install-data.sh} on a fresh host: processes that start at once install the data once and all find it,
 * and a user without root is told the Debian package and {@code --data-dir}. The data directory is a temporary one
 * ({@code DLION_FASHION_MNIST_DIR}) and {@code apt-get} a stand-in first on the PATH that counts its installs and writes
 * the four files, so nothing on the host changes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InstallDataTest {
    private static final Path SCRIPT = Path.of("..", "scripts", "install-data.sh").toAbsolutePath().normalize();
    private static final List<String> FILES = List.of("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
        "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz");

    @TempDir
    Path dir;

    @Test
    void shouldInstallOnceWhenSeveralProcessesStartAtOnce() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "the install path runs as root (or with sudo)");
        final Path data = Files.createDirectories(dir.resolve("data"));
        final Path bin = Files.createDirectories(dir.resolve("bin"));
        final Path installs = dir.resolve("installs");
        // a slow apt-get: an install that is not serialized would be counted twice
        final Path apt = bin.resolve("apt-get");
        Files.writeString(apt, "#!/usr/bin/env bash\n"
            + "case \" $* \" in *\" install \"*) echo x >> '" + installs + "'; sleep 1; for f in " + String.join(" ", FILES)
            + "; do : > '" + data + "'/$f; done;; esac\n", StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(apt, PosixFilePermissions.fromString("rwxr-xr-x"));
        final List<Process> processes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            processes.add(start(List.of("bash", SCRIPT.toString()), Map.of("PATH", bin + ":" + System.getenv("PATH"),
                "DLION_FASHION_MNIST_DIR", data.toString(), "DLION_DATA_LOCK", dir.resolve("lock").toString())));
        }
        for (final Process p : processes) {
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "install-data.sh ended");
            assertEquals(0, p.exitValue(), output(p));
        }
        assertEquals(1, Files.readAllLines(installs).size(), "one install for three processes");
        for (final String f : FILES) {
            assertTrue(Files.exists(data.resolve(f)), f);
        }
    }

    @Test
    void shouldNameThePackageAndDataDirWithoutRoot() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "setpriv drops to nobody from root");
        final Path copy = dir.resolve("install-data.sh");
        Files.copy(SCRIPT, copy);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwxr-xr-x"));
        final Process p = start(List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bash", copy.toString()),
            Map.of("DLION_FASHION_MNIST_DIR", dir.resolve("missing").toString(), "DLION_DATA_LOCK", "/tmp/dlion-install-data-test.lock"));
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "install-data.sh ended");
        final String out = output(p);
        assertEquals(1, p.exitValue(), out);
        assertTrue(out.contains("dataset-fashion-mnist") && out.contains("--data-dir"), out);
    }

    private static Process start(final List<String> command, final Map<String, String> env) throws IOException {
        final ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().putAll(env);
        return pb.start();
    }

    private static String output(final Process p) throws IOException {
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
}
