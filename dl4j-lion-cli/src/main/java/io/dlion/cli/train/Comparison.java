package io.dlion.cli.train;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.concurrent.TimeUnit;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The table and plots of {@code ./dlion compare}. */
public final class Comparison {
    private Comparison() {
    }

    /** @return the Markdown preamble naming the command. */
    public static String header(final String command) {
        return "Produced by `" + command + "`.\n\n"
            + "Bytes are counted where they are produced (D-Lion: the exchange's encoded votes and results; DL4J: the encoded messages "
            + "of its threshold/bitmap encoder, each sent to the other N-1 workers). \"Dense fp32\" is a parameter-server round that "
            + "sends 4 bytes per parameter up and 4 down per worker. The global runs train one model and exchange nothing; the table and "
            + "the plots give them the bytes dense fp32 data-parallel training on the same N workers would send (computed, not measured).\n\n";
    }

    /**
     * Bytes that dense fp32 data-parallel training of the same run on {@code workers} workers would put on the wire:
     * every worker sends its 4-byte-per-parameter gradient up and receives the 4-byte-per-parameter result down, every
     * step. Computed, not measured.
     *
     * @return 8 · params · workers · steps.
     */
    public static long denseEquivalentBytes(final long params, final int workers, final long steps) {
        return Math.multiplyExact(Math.multiplyExact(8L * params, (long) workers), steps);
    }

    /**
     * @param epochs epochs the run was asked for.
     * @param done   epochs it completed.
     * @return "hung in epoch k" when the run stopped early (the harness reports a run that makes no progress for the
     *         epoch timeout and kills it), or null when it completed.
     */
    public static String hungNote(final int epochs, final int done) {
        return done < epochs ? "hung in epoch " + (done + 1) : null;
    }

    /**
     * @param runs    metrics per run label.
     * @param epochs  epochs every run was asked for: a run with fewer rows hung (or failed) and says so.
     * @param workers N of the distributed runs: the global runs (one model, no exchange) are given the bytes dense
     *                data-parallel training on N workers would send, marked as such.
     * @return one Markdown row per run: accuracy per epoch, bytes per worker per step, ratio to dense, time.
     */
    public static String table(final Map<String, List<EpochMetrics>> runs, final int epochs, final int workers) {
        final StringBuilder sb = new StringBuilder();
        sb.append("| run | test accuracy per epoch | bytes/worker/step up | down | up+down vs dense fp32 | wall s |\n");
        sb.append("|---|---|---|---|---|---|\n");
        for (final Map.Entry<String, List<EpochMetrics>> run : runs.entrySet()) {
            final List<EpochMetrics> m = run.getValue();
            if (m.isEmpty()) {
                sb.append("| ").append(run.getKey()).append(" | **").append(hungNote(epochs, 0)).append("** (no progress; killed) | | | | |\n");
                continue;
            }
            final EpochMetrics last = m.get(m.size() - 1);
            final StringBuilder acc = new StringBuilder();
            for (final EpochMetrics e : m) {
                acc.append(acc.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.4f", e.testAccuracy()));
            }
            final String hung = hungNote(epochs, m.size());
            if (hung != null) {
                acc.append(" (**").append(hung).append("**: no progress within the epoch timeout; killed)");
            }
            final double dense = 4.0 * last.params();
            if (last.bytesUp() + last.bytesDown() == 0) {
                sb.append(String.format(Locale.ROOT, "| %s | %s | %,.0f* | %,.0f* | 1/1.0* (dense data-parallel equivalent x%d, not measured) | %.1f |%n",
                    run.getKey(), acc, dense, dense, workers, last.wallSeconds()));
                continue;
            }
            final double steps = Math.max(1, last.rounds()) * (double) last.workers();
            final double up = last.bytesUp() / steps;
            final double down = last.bytesDown() / steps;
            sb.append(String.format(Locale.ROOT, "| %s | %s | %,.0f | %,.0f | 1/%.1f | %.1f |%n", run.getKey(), acc, up, down, 2 * dense / (up + down),
                last.wallSeconds()));
        }
        sb.append(String.format(Locale.ROOT, "%n\\* a global run trains one model and sends nothing; shown is what dense fp32 data-parallel training of "
            + "the same global batch on %d workers would send (4 bytes per parameter up and 4 down, per worker per step), computed, not measured.%n",
            workers));
        return sb.toString();
    }

    /**
     * Run one {@code ./dlion train} in a child JVM (same JVM flags and class path), so that a run that hangs
     * (DL4J's threshold sharing can deadlock) is killed with its threads and cannot slow the next runs.
     *
     * @param trainArgs the arguments after {@code train}, including {@code --out DIR}.
     * @param out       the run's output directory.
     * @param timeoutSeconds how long the whole run may take.
     * @return the run's metrics (empty when it produced none).
     */
    public static List<EpochMetrics> runChild(final List<String> trainArgs, final Path out, final long timeoutSeconds)
        throws IOException, InterruptedException {
        final List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add("io.dlion.cli.DLionCli");
        command.add("train");
        command.addAll(trainArgs);
        final Process process = new ProcessBuilder(command).inheritIO().start();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            System.out.println("run did not finish within " + timeoutSeconds + " s: killed");
            process.destroyForcibly().waitFor();
        }
        final Path csv = out.resolve("metrics.csv");
        return Files.exists(csv) ? Reports.readCsv(csv) : new ArrayList<>();
    }

    /**
     * The comparison plots: accuracy per epoch, accuracy against bytes (linear and log scale). Global runs are drawn
     * at their dense data-parallel equivalent bytes on {@code workers} workers and labelled so; a run that hung gets a
     * cross at its last point (or at zero when it finished no epoch) and "hung in epoch k" in the legend.
     */
    public static void plot(final Path dir, final Map<String, List<EpochMetrics>> runs, final int epochs, final int workers) throws IOException {
        Reports.plotComparison(dir, runs, epochs, workers);
    }

    /** accuracy_vs_seconds.png: test accuracy against training seconds, one line per run, the target as a dashed line. */
    public static void plotSeconds(final Path dir, final Map<String, List<EpochMetrics>> runs, final double target) throws IOException {
        Reports.plotAccuracyVsSeconds(dir, runs, target);
    }
}
