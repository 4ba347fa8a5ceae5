package io.dlion.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The {@code ./dlion train} contract: options, outputs, exit codes. Small runs on real Fashion-MNIST. */
class TrainCommandTest {

    private static String run(final int expectedExit, final String... args) {
        final PrintStream stdout = System.out;
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        final StringWriter err = new StringWriter();
        try {
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            final CommandLine cli = DLionCli.commandLine();
            cli.setErr(new PrintWriter(err, true));
            final int exit = cli.execute(args);
            assertEquals(expectedExit, exit, "exit code; stderr: " + err);
        } finally {
            System.setOut(stdout);
        }
        return captured.toString(StandardCharsets.UTF_8) + err;
    }

    @Test
    void shouldWriteMetricsPlotsAndIdenticalHashesForDLion(@TempDir final Path out) throws Exception {
        final String printed = run(0, "train", "--dataset", "fashion-mnist", "--model", "mlp", "--optimizer", "lion", "--sharing", "dlion-mavo",
            "--workers", "3", "--transport", "inproc", "--epochs", "2", "--batch", "48", "--lr", "1e-3", "--train-limit", "960",
            "--test-limit", "200", "--out", out.toString());
        final List<String> csv = Files.readAllLines(out.resolve("metrics.csv"));
        assertEquals("epoch,rounds,test_accuracy,train_loss,bytes_up,bytes_down,params,workers,wall_s,train_s,compute_ms,compute_p99_ms,pack_ms,"
            + "pack_p99_ms,wait_ms,wait_p99_ms,apply_ms,apply_p99_ms", csv.get(0));
        assertEquals(3, csv.size());
        final String[] last = csv.get(2).split(",");
        assertEquals("2", last[0]);
        assertEquals("40", last[1], "960 examples / 3 workers / 16 per worker = 20 rounds per epoch");
        final long params = Long.parseLong(last[6]);
        assertEquals(784 * 256 + 256 + 256 * 10 + 10, params);
        assertEquals(40L * 3 * ((params + 7) / 8), Long.parseLong(last[4]), "1 bit per parameter per round per worker up");
        assertEquals(40L * 3 * ((params + 7) / 8), Long.parseLong(last[5]), "odd N: 1 bit per parameter down");
        assertTrue(Files.size(out.resolve("accuracy_vs_epoch.png")) > 1000);
        assertTrue(Files.size(out.resolve("accuracy_vs_bytes.png")) > 1000);
        assertTrue(Double.parseDouble(last[14]) > 0, "the mean wait of a round is recorded: " + csv.get(2));
        assertTrue(printed.contains("ms (mean/p99)"), "the epoch line shows the round times");
        assertSameHashes(printed, 3);
    }

    /**
     * The judged job: 65 workers (a voter set of two words), every one serving a slice over Aeron IPC in this JVM, end
     * with the parameters of the in-process hub bit for bit, MaVo and Avg. A few minutes: 4,225 vote streams in one driver.
     */
    @Test
    @Tag("slow")
    void shouldTrainSixtyFiveWorkersShardedOverAeronToTheInProcessHashes(@TempDir final Path out) throws Exception {
        for (final String sharing : new String[] {"dlion-mavo", "dlion-avg"}) {
            final String inproc = sixtyFiveWorkers(out.resolve(sharing + "-inproc"), sharing, "--transport", "inproc");
            final String sharded = sixtyFiveWorkers(out.resolve(sharing + "-sharded"), sharing, "--transport", "aeron-ipc", "--topology", "sharded");
            assertEquals(inproc, sharded, sharing + ": sharded over Aeron IPC ends with the in-process hub's parameters");
        }
        final String refused = run(2, "train", "--model", "mlp", "--optimizer", "lion", "--sharing", "dlion-mavo", "--workers", "2",
            "--transport", "inproc", "--topology", "sharded", "--epochs", "1", "--batch", "2", "--out", out.resolve("refused").toString());
        assertTrue(refused.contains("--topology sharded needs D-Lion or dense sharing (dlion-mavo, dlion-avg, dense-lion or dense-adamw)"
            + " over --transport aeron-ipc"), refused);
    }

    /** @return the one params-sha256 that every one of 65 workers printed. */
    private static String sixtyFiveWorkers(final Path out, final String sharing, final String... transport) throws Exception {
        final List<String> args = new java.util.ArrayList<>(List.of("train", "--model", "mlp", "--optimizer", "lion", "--sharing", sharing,
            "--workers", "65", "--epochs", "1", "--batch", "65", "--train-limit", "130", "--test-limit", "100", "--out", out.toString()));
        args.addAll(List.of(transport));
        final String printed = run(0, args.toArray(new String[0]));
        final Matcher m = Pattern.compile("params-sha256 worker=(\\d+) ([0-9a-f]{64})").matcher(printed);
        final java.util.Set<String> hashes = new java.util.HashSet<>();
        int workers = 0;
        while (m.find()) {
            hashes.add(m.group(2));
            workers++;
        }
        assertEquals(65, workers, printed);
        assertEquals(1, hashes.size(), "every worker ends with the same parameters");
        return hashes.iterator().next();
    }

    @Test
    void shouldTrainTheDenseBaselineOverAeronWithIdenticalHashesAndFp32OnTheWire(@TempDir final Path out) throws Exception {
        final String printed = run(0, "train", "--model", "mlp", "--sharing", "dense-adamw", "--workers", "3", "--epochs", "1", "--batch", "48",
            "--train-limit", "480", "--test-limit", "200", "--out", out.toString());
        assertTrue(printed.contains("dense G-AdamW x3: model mlp, 203530 parameters, adamw"), printed);
        final String[] last = Files.readAllLines(out.resolve("metrics.csv")).get(1).split(",");
        assertEquals("10", last[1], "480 examples / 3 workers / 16 per worker");
        // 159 full chunks of 1,280 fp32 (5,184-byte frames with both headers) and a tail of 10 parameters (128 bytes)
        assertEquals(10L * 3 * (159 * 5184 + 128), Long.parseLong(last[4]), "4 bytes per parameter per round per worker up, counted on the wire");
        // down: the mean frames carry a voter set of one word, 5,192 bytes padded to 5,216, the tail still 128
        assertEquals(10L * 3 * (159 * 5216 + 128), Long.parseLong(last[5]), "and the same down, with the voter sets");
        for (int c = 10; c < 18; c++) {
            assertTrue(Double.parseDouble(last[c]) >= 0, "time column " + c);
        }
        final String star = assertSameHashes(printed, 3);
        // a slice server per worker (a reduce-scatter, then an all-gather): the same means, so the same parameters
        final String sharded = run(0, "train", "--model", "mlp", "--sharing", "dense-adamw", "--workers", "3", "--epochs", "1", "--batch", "48",
            "--train-limit", "480", "--test-limit", "200", "--topology", "sharded", "--out", out.resolve("sharded").toString());
        assertEquals(star, assertSameHashes(sharded, 3), "sharded ends with the star's parameters");
    }

    /** @return the one params-sha256 every worker printed. */
    private static String assertSameHashes(final String printed, final int expectedWorkers) {
        final Matcher m = Pattern.compile("params-sha256 worker=(\\d) ([0-9a-f]{64})").matcher(printed);
        String hash = null;
        int workers = 0;
        while (m.find()) {
            hash = hash == null ? m.group(2) : hash;
            assertEquals(hash, m.group(2), "worker " + m.group(1) + " differs");
            workers++;
        }
        assertEquals(expectedWorkers, workers, printed);
        return hash;
    }

    @Test
    void shouldRejectBadOptionsWithOneLineAndExitCodeTwo(@TempDir final Path out) {
        assertTrue(run(2, "train", "--sharing", "gossip", "--out", out.toString()).contains("--sharing"));
        assertTrue(run(2, "train", "--workers", "0", "--sharing", "dlion-mavo", "--out", out.toString()).contains("--workers"));
        assertTrue(run(2, "train", "--workers", "three", "--out", out.toString()).contains("--workers"));
        assertTrue(run(2, "train", "--sharing", "dlion-avg", "--workers", "2", "--optimizer", "adamw", "--out", out.toString()).contains("--sharing"));
        assertTrue(run(2, "train", "--transport", "carrier-pigeon", "--out", out.toString()).contains("--transport"));
        assertTrue(run(2, "train", "--sharing", "dense-adamw", "--workers", "2", "--optimizer", "lion", "--out", out.toString())
            .contains("--optimizer adamw"));
        assertTrue(run(2, "train", "--sharing", "dense-lion", "--workers", "2", "--transport", "inproc", "--out", out.toString())
            .contains("--transport aeron-ipc or aeron-udp"));
        assertTrue(run(2, "train", "--epochs", "1").contains("--out"));
    }
}
