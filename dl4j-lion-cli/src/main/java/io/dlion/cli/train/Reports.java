package io.dlion.cli.train;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;
import org.knowm.xchart.style.Styler;

/** metrics.csv and the PNG plots (XChart): accuracy vs epoch, accuracy vs bytes communicated. */
final class Reports {
    private Reports() {
    }

    static void writeCsv(final Path file, final List<EpochMetrics> metrics) throws IOException {
        final List<String> lines = new ArrayList<>();
        lines.add(EpochMetrics.CSV_HEADER);
        for (final EpochMetrics m : metrics) {
            lines.add(m.csv());
        }
        Files.write(file, lines);
    }

    /** @return the rows of a {@code metrics.csv} written by {@link #writeCsv} (columns found by name; older files lack some). */
    static List<EpochMetrics> readCsv(final Path file) throws IOException {
        final List<EpochMetrics> metrics = new ArrayList<>();
        final List<String> lines = Files.readAllLines(file);
        final List<String> names = List.of(lines.get(0).split(","));
        final int wall = names.indexOf("wall_s");
        final int train = names.indexOf("train_s");
        final int compute = names.indexOf("compute_ms");
        for (final String line : lines.subList(1, lines.size())) {
            final String[] f = line.split(",", -1);
            double[] times = null;
            if (compute >= 0 && !f[compute].isEmpty()) {
                times = new double[EpochMetrics.TIME_COLUMNS];
                for (int i = 0; i < times.length; i++) {
                    times[i] = Double.parseDouble(f[compute + i]);
                }
            }
            final double wallSeconds = Double.parseDouble(f[wall]);
            metrics.add(new EpochMetrics(Integer.parseInt(f[0]), Long.parseLong(f[1]), Double.parseDouble(f[2]), Double.parseDouble(f[3]),
                Long.parseLong(f[4]), Long.parseLong(f[5]), Long.parseLong(f[6]), Integer.parseInt(f[7]), wallSeconds,
                train >= 0 ? Double.parseDouble(f[train]) : wallSeconds, times));
        }
        return metrics;
    }

    static void plotRun(final Path dir, final String label, final List<EpochMetrics> metrics) throws IOException {
        plotAll(dir, Map.of(label, metrics));
    }

    /** Two PNGs in {@code dir}: accuracy_vs_epoch.png and accuracy_vs_bytes.png, one series per run. */
    static void plotAll(final Path dir, final Map<String, List<EpochMetrics>> runs) throws IOException {
        final XYChart byEpoch = chart("Test accuracy per epoch", "epoch", "test accuracy");
        final XYChart byBytes = chart("Test accuracy vs bytes communicated (all workers, up + down)", "MB on the wire", "test accuracy");
        byBytes.getStyler().setXAxisLogarithmic(false);
        for (final Map.Entry<String, List<EpochMetrics>> run : runs.entrySet()) {
            final List<EpochMetrics> m = run.getValue();
            if (m.isEmpty()) {
                continue;
            }
            final double[] epochs = new double[m.size()];
            final double[] acc = new double[m.size()];
            final double[] mb = new double[m.size()];
            for (int i = 0; i < m.size(); i++) {
                epochs[i] = m.get(i).epoch;
                acc[i] = m.get(i).testAccuracy;
                mb[i] = (m.get(i).bytesUp + m.get(i).bytesDown) / 1e6;
            }
            byEpoch.addSeries(run.getKey(), epochs, acc);
            byBytes.addSeries(run.getKey(), mb, acc);
        }
        BitmapEncoder.saveBitmap(byEpoch, dir.resolve("accuracy_vs_epoch.png").toString(), BitmapEncoder.BitmapFormat.PNG);
        BitmapEncoder.saveBitmap(byBytes, dir.resolve("accuracy_vs_bytes.png").toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /**
     * The comparison's three PNGs in {@code dir}: accuracy_vs_epoch.png, accuracy_vs_bytes.png and
     * accuracy_vs_bytes_log.png. Runs without an exchange (global) are drawn at the bytes of dense data-parallel
     * training on {@code workers} workers (dashed, labelled "not measured"); a run with fewer than {@code epochs} rows
     * hung: its legend says "hung in epoch k" and a cross marks where it stopped.
     */
    static void plotComparison(final Path dir, final Map<String, List<EpochMetrics>> runs, final int epochs, final int workers)
        throws IOException {
        final XYChart byEpoch = chart("Test accuracy per epoch", "epoch", "test accuracy");
        final String title = "Test accuracy vs bytes communicated (all workers, up + down)";
        final XYChart linear = chart(title, "MB on the wire (global runs: dense data-parallel equivalent on " + workers + " workers)",
            "test accuracy");
        final XYChart log = chart(title + ", log scale", "MB on the wire, log scale (global runs: dense data-parallel equivalent on " + workers
            + " workers)", "test accuracy");
        log.getStyler().setXAxisLogarithmic(true);
        double minMb = Double.MAX_VALUE;
        double minAcc = 1;
        for (final List<EpochMetrics> m : runs.values()) {
            for (final EpochMetrics e : m) {
                minMb = Math.min(minMb, mb(e, workers));
                minAcc = Math.min(minAcc, e.testAccuracy);
            }
        }
        for (final Map.Entry<String, List<EpochMetrics>> run : runs.entrySet()) {
            final List<EpochMetrics> m = run.getValue();
            final String hung = Comparison.hungNote(epochs, m.size());
            if (m.isEmpty()) {
                final double x = minMb == Double.MAX_VALUE ? 1 : minMb;
                final String label = run.getKey() + ": " + hung + ", no result";
                cross(byEpoch.addSeries(label, new double[] {1}, new double[] {minAcc}));
                cross(linear.addSeries(label, new double[] {x}, new double[] {minAcc}));
                cross(log.addSeries(label, new double[] {x}, new double[] {minAcc}));
                continue;
            }
            final boolean dense = m.get(m.size() - 1).bytesUp + m.get(m.size() - 1).bytesDown == 0;
            String label = run.getKey();
            if (dense) {
                label += " (dense data-parallel equivalent x" + workers + ", not measured)";
            }
            if (hung != null) {
                label += ": " + hung;
            }
            final double[] ep = new double[m.size()];
            final double[] acc = new double[m.size()];
            final double[] mb = new double[m.size()];
            for (int i = 0; i < m.size(); i++) {
                ep[i] = m.get(i).epoch;
                acc[i] = m.get(i).testAccuracy;
                mb[i] = mb(m.get(i), workers);
            }
            byEpoch.addSeries(label, ep, acc);
            final XYSeries a = linear.addSeries(label, mb, acc);
            final XYSeries b = log.addSeries(label, mb, acc);
            if (dense) {
                a.setLineStyle(SeriesLines.DASH_DASH);
                b.setLineStyle(SeriesLines.DASH_DASH);
            }
            if (hung != null) {
                final int last = m.size() - 1;
                final String at = run.getKey() + " stopped here (" + hung + ")";
                cross(byEpoch.addSeries(at, new double[] {ep[last]}, new double[] {acc[last]}));
                cross(linear.addSeries(at, new double[] {mb[last]}, new double[] {acc[last]}));
                cross(log.addSeries(at, new double[] {mb[last]}, new double[] {acc[last]}));
            }
        }
        BitmapEncoder.saveBitmap(byEpoch, dir.resolve("accuracy_vs_epoch.png").toString(), BitmapEncoder.BitmapFormat.PNG);
        BitmapEncoder.saveBitmap(linear, dir.resolve("accuracy_vs_bytes.png").toString(), BitmapEncoder.BitmapFormat.PNG);
        BitmapEncoder.saveBitmap(log, dir.resolve("accuracy_vs_bytes_log.png").toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /**
     * accuracy_vs_seconds.png in {@code dir}: test accuracy after each epoch against the training time until then (wall
     * clock, evaluations left out), one line per run; a dashed horizontal line marks {@code target} when it is above 0.
     */
    static void plotAccuracyVsSeconds(final Path dir, final Map<String, List<EpochMetrics>> runs, final double target) throws IOException {
        final XYChart chart = chart("Test accuracy vs wall-clock training time", "seconds of training (wall clock, evaluation excluded)",
            "test accuracy");
        double maxSeconds = 0;
        for (final Map.Entry<String, List<EpochMetrics>> run : runs.entrySet()) {
            final List<EpochMetrics> m = run.getValue();
            if (m.isEmpty()) {
                continue;
            }
            final double[] seconds = new double[m.size()];
            final double[] acc = new double[m.size()];
            for (int i = 0; i < m.size(); i++) {
                seconds[i] = m.get(i).trainSeconds;
                acc[i] = m.get(i).testAccuracy;
                maxSeconds = Math.max(maxSeconds, seconds[i]);
            }
            chart.addSeries(run.getKey(), seconds, acc);
        }
        if (target > 0 && maxSeconds > 0) {
            final XYSeries t = chart.addSeries(String.format(java.util.Locale.ROOT, "target %.1f%%", 100 * target), new double[] {0, maxSeconds},
                new double[] {target, target});
            t.setLineStyle(SeriesLines.DASH_DASH);
            t.setMarker(SeriesMarkers.NONE);
        }
        BitmapEncoder.saveBitmap(chart, dir.resolve("accuracy_vs_seconds.png").toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /** @return MB on the wire after this epoch: measured, or for a run without exchange its dense data-parallel equivalent. */
    static double mb(final EpochMetrics e, final int workers) {
        final long bytes = e.bytesUp + e.bytesDown;
        return (bytes != 0 ? bytes : Comparison.denseEquivalentBytes(e.params, workers, e.rounds)) / 1e6;
    }

    private static void cross(final XYSeries s) {
        s.setMarker(SeriesMarkers.CROSS);
        s.setMarkerColor(java.awt.Color.RED);
        s.setLineStyle(SeriesLines.NONE);
    }

    private static XYChart chart(final String title, final String x, final String y) {
        final XYChart chart = new XYChartBuilder().width(900).height(560).title(title).xAxisTitle(x).yAxisTitle(y).build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideSE);
        chart.getStyler().setMarkerSize(7);
        return chart;
    }
}
