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

import io.dlion.cli.data.Cifar10;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code ./dlion train} with local steps, a skewed partition, a validation split, and the CIFAR-10 ViT data path. */
class LocalStepsCommandTest {

    private static String run(final int expectedExit, final String... args) {
        final PrintStream stdout = System.out;
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        final StringWriter err = new StringWriter();
        try {
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            final CommandLine cli = DLionCli.commandLine();
            cli.setErr(new PrintWriter(err, true));
            final int exit = cli.execute(args);
            assertEquals(expectedExit, exit, "exit code; stderr: " + err + "; stdout: " + captured.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(stdout);
        }
        return captured.toString(StandardCharsets.UTF_8) + err;
    }

    private static int sameHashes(final String printed) {
        final Matcher m = Pattern.compile("params-sha256 worker=(\\d+) ([0-9a-f]{64})").matcher(printed);
        String hash = null;
        int workers = 0;
        while (m.find()) {
            hash = hash == null ? m.group(2) : hash;
            assertEquals(hash, m.group(2), "worker " + m.group(1) + " differs");
            workers++;
        }
        return workers;
    }

    /**
     * H = 4, 3 workers, classes:2 on 960 examples (of which 160 held out for validation): 800 / 3 / 16 = 16 steps per
     * epoch, 2 epochs = 32 steps = 8 votes of 1 bit per parameter per worker up and down (odd N); the workers end
     * bit-identical, and the partition is logged per worker and class.
     */
    @Test
    void shouldVoteEveryHStepsOnASkewedPartition(@TempDir final Path out) throws Exception {
        final String printed = run(0, "train", "--model", "mlp", "--sharing", "dlion-mavo", "--workers", "3", "--epochs", "2", "--batch", "48",
            "--lr", "1e-3", "--train-limit", "960", "--validation", "160", "--local-steps", "4", "--outer-lr-scale", "0.5",
            "--partition", "classes:2", "--weight-decay", "0.01", "--out", out.toString());
        assertEquals(3, sameHashes(printed), printed);
        assertTrue(printed.contains("partition classes:2 (seed 42), examples per class per worker:"), printed);
        assertTrue(printed.contains("the last 160 training examples"), printed);
        assertTrue(printed.contains("D-Lion MaVo x3, H=4, classes:2"), printed);
        final String[] last = Files.readAllLines(out.resolve("metrics.csv")).get(2).split(",");
        assertEquals("32", last[1], "steps");
        final long params = Long.parseLong(last[6]);
        assertEquals(8L * 3 * ((params + 7) / 8), Long.parseLong(last[4]), "one vote every 4 steps, up");
        assertEquals(8L * 3 * ((params + 7) / 8), Long.parseLong(last[5]), "and down");
    }

    /**
     * {@code --eval-every K}: worker 0's test accuracy every K steps (at outer boundaries, not at an epoch's end, whose own
     * evaluation follows) in evals.csv beside the epochs', and the same parameters as without it, with local steps and with
     * dense G-Lion.
     */
    @Test
    void shouldEvaluateEveryKStepsWithoutTouchingTheParameters(@TempDir final Path dir) throws Exception {
        final String[][] runs = {{"dlion-mavo", "--local-steps", "2", "--transport", "inproc"}, {"dense-lion", "--local-steps", "1",
            "--transport", "aeron-ipc"}};
        for (final String[] r : runs) {
            final String[] hashes = new String[2];
            for (int withEvals = 0; withEvals < 2; withEvals++) {
                final Path out = dir.resolve(r[0] + "-" + withEvals);
                final List<String> args = new java.util.ArrayList<>(List.of("train", "--model", "mlp", "--sharing", r[0], "--workers", "2",
                    "--epochs", "2", "--batch", "32", "--lr", "1e-3", "--train-limit", "320", "--test-limit", "100", r[1], r[2], r[3], r[4],
                    "--out", out.toString()));
                if (withEvals == 1) {
                    args.addAll(List.of("--eval-every", "4"));
                }
                final String printed = run(0, args.toArray(new String[0]));
                assertEquals(2, sameHashes(printed), printed);
                final Matcher m = Pattern.compile("params-sha256 worker=0 ([0-9a-f]{64})").matcher(printed);
                assertTrue(m.find(), printed);
                hashes[withEvals] = m.group(1);
                if (withEvals == 1) {
                    // 10 steps per epoch: evaluations at steps 4, 8, 12, 16 and the epochs' at 10 and 20
                    final List<String> rows = Files.readAllLines(out.resolve("evals.csv"));
                    assertEquals("step,test_accuracy,train_s,wall_s,bytes_up,bytes_down", rows.get(0));
                    assertEquals(List.of("4", "8", "10", "12", "16", "20"), rows.subList(1, rows.size()).stream().map(x -> x.split(",")[0]).toList(),
                        r[0]);
                    assertTrue(printed.contains("step 12  test accuracy "), printed);
                } else {
                    assertTrue(Files.notExists(out.resolve("evals.csv")), "no evals.csv without --eval-every");
                }
            }
            assertEquals(hashes[0], hashes[1], r[0] + ": the evaluations changed the parameters");
        }
    }

    @Test
    void shouldRejectBadLocalStepAndPartitionOptionsNamingThem(@TempDir final Path out) {
        final String o = out.toString();
        assertTrue(run(2, "train", "--sharing", "dlion-mavo", "--workers", "2", "--local-steps", "0", "--out", o).contains("--local-steps"));
        assertTrue(run(2, "train", "--sharing", "none", "--local-steps", "4", "--out", o).contains("--local-steps 4 needs --sharing dlion"));
        assertTrue(run(2, "train", "--sharing", "dlion-avg", "--workers", "2", "--local-steps", "2", "--outer-lr-scale", "0", "--out", o)
            .contains("--outer-lr-scale"));
        assertTrue(run(2, "train", "--sharing", "dlion-avg", "--workers", "2", "--outer-beta1", "1", "--out", o).contains("--outer-beta1"));
        assertTrue(run(2, "train", "--sharing", "dlion-avg", "--workers", "2", "--outer-beta2", "-0.5", "--out", o).contains("--outer-beta2"));
        assertTrue(run(2, "train", "--sharing", "dlion-mavo", "--workers", "2", "--partition", "dirichlet:0", "--out", o).contains("--partition"));
        assertTrue(run(2, "train", "--sharing", "dlion-mavo", "--workers", "2", "--partition", "shards", "--out", o).contains("--partition"));
        assertTrue(run(2, "train", "--partition", "classes:2", "--out", o).contains("--partition classes:2"));
        assertTrue(run(2, "train", "--validation", "-1", "--out", o).contains("--validation"));
        assertTrue(run(2, "train", "--model", "mlp", "--vit-shape", "8,1,2,2", "--out", o).contains("--vit-shape"));
        assertTrue(run(2, "train", "--sharing", "dlion-mavo", "--workers", "2", "--local-steps", "4", "--eval-every", "6", "--out", o)
            .contains("--eval-every must be a multiple of --local-steps (4"));
        assertTrue(run(2, "train", "--eval-every", "4", "--out", o).contains("--eval-every needs D-Lion or dense sharing"));
        assertTrue(run(2, "train", "--sharing", "dlion-mavo", "--workers", "2", "--eval-every", "-1", "--out", o).contains("--eval-every"));
    }

    /** The paper's data path: {@code train --dataset cifar10 --data-dir DIR --model vit}, a shrunken ViT, on files written here. */
    @Test
    void shouldTrainAShrunkenVitOnCifar10FilesFromTheCommandLine(@TempDir final Path dir) throws Exception {
        final Path data = dir.resolve("cifar-10-batches-bin");
        Files.createDirectories(data);
        final java.util.Random random = new java.util.Random(3);
        for (final String file : List.of("data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin",
            "test_batch.bin")) {
            final byte[] bytes = new byte[8 * Cifar10.RECORD_BYTES];
            random.nextBytes(bytes);
            for (int r = 0; r < 8; r++) {
                bytes[r * Cifar10.RECORD_BYTES] = (byte) random.nextInt(10);
            }
            Files.write(data.resolve(file), bytes);
        }
        for (final String[] sharing : new String[][] {{"none", "1"}, {"dlion-mavo", "2"}}) {
            final Path out = dir.resolve("out-" + sharing[0]);
            final String printed = run(0, "train", "--dataset", "cifar10", "--data-dir", dir.toString(), "--model", "vit", "--vit-shape", "16,1,2,2",
                "--sharing", sharing[0], "--workers", sharing[1], "--epochs", "1", "--batch", "8", "--lr", "1e-3", "--out", out.toString());
            final String[] last = Files.readAllLines(out.resolve("metrics.csv")).get(1).split(",");
            assertEquals("5", last[1], "40 training images in batches of 8 (" + sharing[0] + ")");
            final long params = Long.parseLong(last[6]);
            // (3*16+1)*16 patch + 64*16 position + one block (4*256 + 2*16*32 + 9*16 + 32) + 2*16 + 17*10
            assertEquals(49 * 16 + 64 * 16 + (4 * 256 + 2 * 16 * 32 + 9 * 16 + 32) + 2 * 16 + 17 * 10, params, printed);
            final double accuracy = Double.parseDouble(last[2]);
            assertTrue(accuracy >= 0 && accuracy <= 1, "evaluated on the 8 test images: " + accuracy);
            assertEquals(Integer.parseInt(sharing[1]), sameHashes(printed));
        }
    }
}
