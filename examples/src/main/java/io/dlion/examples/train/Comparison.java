package io.dlion.examples.train;

import java.io.IOException;
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

    /** @return one Markdown row per run: final accuracy, bytes per worker per step, ratio to dense, time. */
    public static String table(final Map<String, List<EpochMetrics>> runs) {
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
            final double steps = Math.max(1, last.rounds()) * (double) last.workers();
            final double up = last.bytesUp() / steps;
            final double down = last.bytesDown() / steps;
            final double dense = 8.0 * last.params();
            final String ratio = up + down == 0 ? "no exchange" : String.format(Locale.ROOT, "1/%.1f", dense / (up + down));
            sb.append(String.format(Locale.ROOT, "| %s | %s | %,.0f | %,.0f | %s | %.1f |%n", run.getKey(), acc, up, down, ratio, last.wallSeconds()));
        }
        return sb.toString();
    }

    /** Both plots with one series per run. */
    public static void plot(final Path dir, final Map<String, List<EpochMetrics>> runs) throws IOException {
        Reports.plotAll(dir, runs);
    }
}
