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
            + "sends 4 bytes per parameter up and 4 down per worker.\n\n";
    }

    /**
     * @param runs   metrics per run label.
     * @param epochs epochs every run was asked for: a run with fewer rows stopped early (hung or failed) and says so.
     * @return one Markdown row per run: accuracy per epoch, bytes per worker per step, ratio to dense, time.
     */
    public static String table(final Map<String, List<EpochMetrics>> runs, final int epochs) {
        final StringBuilder sb = new StringBuilder();
        sb.append("| run | test accuracy per epoch | bytes/worker/step up | down | up+down vs dense fp32 | wall s |\n");
        sb.append("|---|---|---|---|---|---|\n");
        for (final Map.Entry<String, List<EpochMetrics>> run : runs.entrySet()) {
            final List<EpochMetrics> m = run.getValue();
            if (m.isEmpty()) {
                sb.append("| ").append(run.getKey()).append(" | hung (see log) | | | | |\n");
                continue;
            }
            final EpochMetrics last = m.get(m.size() - 1);
            final StringBuilder acc = new StringBuilder();
            for (final EpochMetrics e : m) {
                acc.append(acc.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.4f", e.testAccuracy()));
            }
            if (m.size() < epochs) {
                acc.append(" (stopped in epoch ").append(m.size() + 1).append(": no progress, see the log)");
            }
            final double steps = Math.max(1, last.rounds()) * (double) last.workers();
            final double up = last.bytesUp() / steps;
            final double down = last.bytesDown() / steps;
            final double dense = 8.0 * last.params();
            final String ratio = up + down == 0 ? "no exchange" : String.format(Locale.ROOT, "1/%.1f", dense / (up + down));
            sb.append(String.format(Locale.ROOT, "| %s | %s | %,.0f | %,.0f | %s | %.1f |%n", run.getKey(), acc, up, down, ratio, last.wallSeconds()));
        }
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

    /** Both plots with one series per run. */
    public static void plot(final Path dir, final Map<String, List<EpochMetrics>> runs) throws IOException {
        Reports.plotAll(dir, runs);
    }
}
