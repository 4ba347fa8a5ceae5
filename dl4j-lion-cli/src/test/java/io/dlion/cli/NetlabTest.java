package io.dlion.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code scripts/netlab.sh} on this machine (root only; skipped otherwise): a dense job in network namespaces trains
 * with bit-identical workers, and the lab leaves no namespace, veth or qdisc behind, after a run and when stopped in
 * the middle of one; and the exchange's links do not flood, in the star or sharded: no link carries more than 1.2 times
 * its payload.
 */
@Tag("slow")
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class NetlabTest {
    private static final Path SCRIPT = Path.of("..", "scripts", "netlab.sh").toAbsolutePath().normalize();
    private static final Pattern LAB = Pattern.compile("netlab: lab (dl[0-9]+):");

    @BeforeEach
    void rootOnly() throws Exception {
        assumeTrue("0".equals(run("id", "-u").trim()), "network namespaces need root");
    }

    @Test
    void shouldTrainInTheLabAndLeaveNothingBehind(@TempDir final Path out) throws Exception {
        final List<String> lines = new CopyOnWriteArrayList<>();
        final Process lab = start(out, lines, "1");
        assertTrue(lab.waitFor(12, TimeUnit.MINUTES), "lab finished");
        assertEquals(0, lab.exitValue(), String.join("\n", lines));
        final String name = labName(lines);
        final List<String> hashes = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            for (final String line : Files.readAllLines(out.resolve("worker-" + w + ".log"))) {
                if (line.startsWith("params-sha256 ")) {
                    hashes.add(line.substring(line.lastIndexOf(' ') + 1));
                }
            }
        }
        assertEquals(2, hashes.size(), String.join("\n", lines));
        assertEquals(hashes.get(0), hashes.get(1), "both workers end bit-identical");
        assertTrue(Files.readString(out.resolve("server.log")).contains("dense ChunkLayout"), "a dense server ran");
        assertNothingLeft(name);
    }

    @Test
    void shouldTearDownWhenStoppedInTheMiddle(@TempDir final Path out) throws Exception {
        final List<String> lines = new CopyOnWriteArrayList<>();
        final Process lab = start(out, lines, "50");
        final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(8);
        while (!workerTrains(out) && lab.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(500);
        }
        assertTrue(lab.isAlive(), "the lab still runs: " + String.join("\n", lines));
        final String name = labName(lines);
        lab.destroy();   // SIGTERM, as Ctrl-C or a stopped compare does
        assertTrue(lab.waitFor(2, TimeUnit.MINUTES), "the lab stops");
        assertNotEquals(0, lab.exitValue());
        assertNothingLeft(name);
    }

    /**
     * The exchange alone, 8 vote-workers and a server on 100 Mbit/s links, 20 rounds of the paper's ViT
     * (18,978,314 parameters): every link, in both directions, carries at most 1.2 times the payload the processes
     * counted, and the shapers drop under 0.1% of the packets. 8 workers rather than 4: with Aeron's default windows
     * 4 workers carried 1.01 times their payload and 8 carried 3.2 times (docs/benchmarks.md), so it is at 8 that a
     * change of the channels' settings that brings the flood back fails this test.
     */
    @Test
    void shouldCarryAtMostOnePointTwoTimesThePayloadOnEveryLink(@TempDir final Path out) throws Exception {
        assertLinksWithinPayload(out, "star");
    }

    /** The same for the sharded topology: every worker serves a slice, every link carries votes and results both ways. */
    @Test
    void shouldCarryAtMostOnePointTwoTimesThePayloadOnEveryLinkWhenSharded(@TempDir final Path out) throws Exception {
        assertLinksWithinPayload(out, "sharded");
    }

    private static void assertLinksWithinPayload(final Path out, final String topology) throws Exception {
        final List<String> lines = new CopyOnWriteArrayList<>();
        final Process lab = start(lines, SCRIPT.toString(), "--workers", "8", "--rate", "100mbit", "--out", out.toString(), "--exchange",
            "20", "--params", "18978314", "--topology", topology);
        assertTrue(lab.waitFor(10, TimeUnit.MINUTES), "lab finished: " + String.join("\n", lines));
        assertEquals(0, lab.exitValue(), String.join("\n", lines));
        final List<String> rows = Files.readAllLines(out.resolve("links.tsv"));
        assertEquals(10, rows.size(), "a header, the server's host and 8 workers: " + rows);
        long packets = 0;
        long drops = 0;
        for (final String row : rows.subList(1, rows.size())) {
            final String[] f = row.split("\t");
            packets += Long.parseLong(f[5]) + Long.parseLong(f[6]);
            drops += Long.parseLong(f[7]) + Long.parseLong(f[8]);
            if ("server".equals(f[0]) && "sharded".equals(topology)) {
                continue;   // no server process: its host is idle
            }
            final long linkSent = Long.parseLong(f[1]);
            final long linkReceived = Long.parseLong(f[2]);
            final long payloadSent = Long.parseLong(f[3]);
            final long payloadReceived = Long.parseLong(f[4]);
            assertTrue(payloadSent > 0 && payloadReceived > 0, "payload counted: " + row);
            assertTrue(linkSent <= 1.2 * payloadSent, f[0] + " sent " + linkSent + " for a payload of " + payloadSent);
            assertTrue(linkReceived <= 1.2 * payloadReceived, f[0] + " received " + linkReceived + " for a payload of " + payloadReceived);
        }
        assertTrue(drops * 1000 < packets, drops + " of " + packets + " packets dropped");
        assertNothingLeft(labName(lines));
    }

    private static boolean workerTrains(final Path out) throws IOException {
        final Path log = out.resolve("worker-0.log");
        return Files.exists(log) && Files.readString(log).contains("parameters, adamw");
    }

    private static Process start(final Path out, final List<String> lines, final String epochs) throws IOException {
        return start(lines, SCRIPT.toString(), "--workers", "2", "--rate", "100mbit", "--delay", "0", "--out", out.toString(), "--server-args",
            "--sharing dense", "--", "--model", "mlp", "--epochs", epochs, "--batch", "40", "--train-limit", "400", "--test-limit", "100",
            "--sharing", "dense-adamw");
    }

    private static Process start(final List<String> lines, final String... script) throws IOException {
        final List<String> command = new ArrayList<>(List.of("bash"));
        command.addAll(List.of(script));
        final Process lab = new ProcessBuilder(command).redirectErrorStream(true).start();
        final Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(lab.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    lines.add(line);
                }
            } catch (final IOException ignored) {
                // the process ended
            }
        }, "netlab-output");
        reader.setDaemon(true);
        reader.start();
        return lab;
    }

    private static String labName(final List<String> lines) {
        for (final String line : lines) {
            final Matcher m = LAB.matcher(line);
            if (m.find()) {
                return m.group(1);
            }
        }
        throw new AssertionError("no lab name printed: " + lines);
    }

    private static void assertNothingLeft(final String lab) throws Exception {
        for (final String ns : run("ip", "netns", "list").split("\n")) {
            assertTrue(!ns.startsWith(lab + "-"), "namespace left: " + ns);
        }
        final String links = run("ip", "-o", "link", "show");
        assertTrue(!links.contains(": " + lab), "veth left: " + links);
        final String qdiscs = run("tc", "qdisc", "show");
        assertTrue(!qdiscs.contains("dev " + lab), "qdisc left: " + qdiscs);
    }

    private static String run(final String... command) throws Exception {
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        return output;
    }
}
