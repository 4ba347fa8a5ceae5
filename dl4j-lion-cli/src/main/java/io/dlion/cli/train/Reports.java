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

    /** @return the rows of a {@code metrics.csv} written by {@link #writeCsv}. */
    static List<EpochMetrics> readCsv(final Path file) throws IOException {
        final List<EpochMetrics> metrics = new ArrayList<>();
        final List<String> lines = Files.readAllLines(file);
        for (final String line : lines.subList(1, lines.size())) {
            final String[] f = line.split(",");
            metrics.add(new EpochMetrics(Integer.parseInt(f[0]), Long.parseLong(f[1]), Double.parseDouble(f[2]), Double.parseDouble(f[3]),
                Long.parseLong(f[4]), Long.parseLong(f[5]), Long.parseLong(f[6]), Integer.parseInt(f[7]), Double.parseDouble(f[8])));
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

    private static XYChart chart(final String title, final String x, final String y) {
        final XYChart chart = new XYChartBuilder().width(900).height(560).title(title).xAxisTitle(x).yAxisTitle(y).build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideSE);
        chart.getStyler().setMarkerSize(7);
        return chart;
    }
}
