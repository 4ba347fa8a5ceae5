package io.dlion.cli.train;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.Topology;
import io.dlion.exchange.RoundTimes;

/**
 * {@code ./dlion compare --netlab RATE}: D-Lion MaVo, D-Lion Avg, dense G-Lion and dense G-AdamW, each as a real
 * cluster built by {@code scripts/netlab.sh} (a network namespace per host, every link shaped to RATE by {@code tbf}),
 * with {@code ./dlion server} and one {@code ./dlion worker} process per worker; then one table (seconds per epoch,
 * time to a test accuracy, final accuracy, bytes on the wire, where a round's time goes) and the plot of accuracy
 * against wall-clock seconds. The lab script tears its namespaces down on every exit; if this JVM is stopped, its
 * shutdown hook stops the running lab, which tears down too.
 */
public final class NetlabComparison {
    /** One method of the comparison. */
    public record Method(String key, Sharing sharing, double lr, double weightDecay) {
        /** @return the label of the method in the table and plot. */
        String label(final int workers) {
            switch (sharing) {
                case DLION_MAVO:
                    return "D-Lion MaVo x" + workers;
                case DLION_AVG:
                    return "D-Lion Avg x" + workers;
                case DENSE_LION:
                    return "dense G-Lion x" + workers;
                default:
                    return "dense G-AdamW x" + workers;
            }
        }

        /** @return the options of {@code ./dlion server} beyond what the lab sets. */
        String serverArgs() {
            if (sharing.isDense()) {
                return "--sharing dense";
            }
            return sharing == Sharing.DLION_AVG ? "--rule average" : "--rule majority";
        }
    }

    /**
     * What every run shares.
     *
     * @param script         {@code scripts/netlab.sh}.
     * @param rate           tbf rate of every link, e.g. {@code 100mbit}.
     * @param workers        workers of every run.
     * @param topology       {@code sharded} (every worker serves a slice: a reduce-scatter and an all-gather, for D-Lion
     *                       and for the dense baselines alike) or {@code star} (one server).
     * @param params         the model's parameter count (the server's {@code --params}).
     * @param workerArgs     data, model and schedule options of every {@code ./dlion worker}.
     * @param targetAccuracy the test accuracy the time-to-accuracy column waits for.
     * @param timeoutSeconds how long one run may take before it is stopped.
     * @param out            the comparison's directory; run {@code key} goes to {@code out/key}.
     */
    public record Settings(Path script, String rate, int workers, Topology.Kind topology, long params, List<String> workerArgs,
        double targetAccuracy, long timeoutSeconds, Path out) {
    }

    /**
     * What one run produced: every worker's metrics (empty when it failed), how it ended, and what the lab's links carried
     * (the bytes every host's interface sent, and the shapers' drops, from the lab's {@code links.tsv}; -1 when missing).
     */
    public record Result(String label, List<List<EpochMetrics>> workers, int exitCode, long linkBytes, long linkDrops) {
        /** @return the job's metrics per epoch: worker 0's accuracy and times, bytes summed over every worker. */
        List<EpochMetrics> job() {
            final List<EpochMetrics> job = new ArrayList<>();
            if (workers.isEmpty()) {
                return job;
            }
            final List<EpochMetrics> first = workers.get(0);
            for (int e = 0; e < first.size(); e++) {
                long up = 0;
                long down = 0;
                for (final List<EpochMetrics> w : workers) {
                    if (w.size() > e) {
                        up += w.get(e).bytesUp;
                        down += w.get(e).bytesDown;
                    }
                }
                final EpochMetrics m = first.get(e);
                job.add(new EpochMetrics(m.epoch, m.rounds, m.testAccuracy, m.trainLoss, up, down, m.params, workers.size(), m.wallSeconds,
                    m.trainSeconds, m.timesMs));
            }
            return job;
        }
    }

    private NetlabComparison() {
    }

    /**
     * Run every method in its own lab, one after the other.
     *
     * @param settings what every run shares.
     * @param methods  the methods, in table order.
     * @return the results, in the same order.
     */
    public static List<Result> run(final Settings settings, final List<Method> methods) throws IOException, InterruptedException {
        final List<Result> results = new ArrayList<>();
        for (final Method method : methods) {
            final String label = method.label(settings.workers());
            System.out.println("=== " + label + " at " + settings.rate() + " per link, " + settings.topology());
            final Path runOut = settings.out().resolve(method.key());
            final List<String> command = new ArrayList<>(List.of("bash", settings.script().toString(), "--workers",
                String.valueOf(settings.workers()), "--rate", settings.rate(), "--delay", "0", "--out", runOut.toString(), "--params",
                String.valueOf(settings.params()), "--topology", settings.topology().toString()));
            if (settings.topology() == Topology.Kind.STAR) {
                command.addAll(List.of("--server-args", method.serverArgs()));
            }
            command.add("--");
            command.addAll(settings.workerArgs());
            command.addAll(List.of("--sharing", method.sharing().cliName(), "--lr", String.valueOf(method.lr()), "--weight-decay",
                String.valueOf(method.weightDecay())));
            final int exit = runLab(command, settings.timeoutSeconds());
            final List<List<EpochMetrics>> workers = new ArrayList<>();
            for (int w = 0; w < settings.workers(); w++) {
                final Path csv = runOut.resolve("worker-" + w).resolve("metrics.csv");
                workers.add(Files.exists(csv) ? Reports.readCsv(csv) : new ArrayList<>());
            }
            final long[] links = links(runOut.resolve("links.tsv"));
            results.add(new Result(label, workers, exit, links[0], links[1]));
        }
        return results;
    }

    /** @return the bytes every host's link sent and the drops of every shaper, from the lab's links.tsv; -1 each when missing. */
    static long[] links(final Path tsv) throws IOException {
        if (!Files.exists(tsv)) {
            return new long[] {-1, -1};
        }
        long sent = 0;
        long drops = 0;
        final List<String> rows = Files.readAllLines(tsv);
        for (final String row : rows.subList(1, rows.size())) {
            final String[] f = row.split("\t");
            sent += Long.parseLong(f[1]);
            drops += Long.parseLong(f[7]) + Long.parseLong(f[8]);
        }
        return new long[] {sent, drops};
    }

    /** Run the lab script; stop it (it tears down on SIGTERM) when it runs too long or this JVM is stopped. */
    private static int runLab(final List<String> command, final long timeoutSeconds) throws IOException, InterruptedException {
        final Process lab = new ProcessBuilder(command).inheritIO().start();
        final Thread stop = new Thread(() -> stopLab(lab), "dlion-netlab-stop");
        Runtime.getRuntime().addShutdownHook(stop);
        try {
            if (!lab.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                System.out.println("netlab run did not finish within " + timeoutSeconds + " s: stopped");
                stopLab(lab);
                return -1;
            }
            return lab.exitValue();
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(stop);
            } catch (final IllegalStateException shuttingDown) {
                // the hook runs now and stops the lab
            }
        }
    }

    private static void stopLab(final Process lab) {
        if (!lab.isAlive()) {
            return;
        }
        lab.destroy();   // SIGTERM: the script's trap kills its processes and deletes its namespaces
        try {
            if (!lab.waitFor(60, TimeUnit.SECONDS)) {
                lab.destroyForcibly();
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * @param results the runs.
     * @param target  the test accuracy of the time-to-accuracy column.
     * @param lab     the links and topology, for the title (e.g. {@code 100mbit per link, sharded}).
     * @return the Markdown table, and the ratios of D-Lion MaVo to dense G-Lion when both ran.
     */
    public static String table(final List<Result> results, final double target, final String lab) {
        final StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "| run (%s) | s/epoch | s to %.1f%% | final accuracy | bytes on the wire | bytes the links carried"
            + " | shaper drops | per round: compute | pack | wait | apply |%n", lab, 100 * target));
        sb.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        Double mavoEpoch = null;
        Double denseEpoch = null;
        Double mavoTarget = null;
        Double denseTarget = null;
        for (final Result r : results) {
            final List<EpochMetrics> job = r.job();
            if (job.isEmpty()) {
                sb.append("| ").append(r.label()).append(" | **failed** (exit ").append(r.exitCode()).append("; see its logs) | | | | | | | | | |\n");
                continue;
            }
            final EpochMetrics last = job.get(job.size() - 1);
            final double perEpoch = secondsPerEpoch(job);
            final Double toTarget = secondsTo(job, target);
            final long counted = last.bytesUp + last.bytesDown;
            sb.append(String.format(Locale.ROOT, "| %s%s | %.1f | %s | %.2f%% | %,d | %s | %s |", r.label(),
                r.exitCode() == 0 ? "" : " (exit " + r.exitCode() + ")",
                perEpoch, toTarget == null ? "not reached" : String.format(Locale.ROOT, "%.1f", toTarget), 100 * last.testAccuracy,
                counted, r.linkBytes() < 0 ? "-" : String.format(Locale.ROOT, "%,d (%.2fx)", r.linkBytes(), (double) r.linkBytes() / counted),
                r.linkDrops() < 0 ? "-" : String.format(Locale.ROOT, "%,d", r.linkDrops())));
            for (int p = 0; p < RoundTimes.Phase.values().length; p++) {
                if (last.timesMs == null) {
                    sb.append(" |");
                } else {
                    sb.append(String.format(Locale.ROOT, " %.1f (%.1f) ms |", last.timesMs[2 * p], last.timesMs[2 * p + 1]));
                }
            }
            sb.append('\n');
            if (r.label().startsWith("D-Lion MaVo")) {
                mavoEpoch = perEpoch;
                mavoTarget = toTarget;
            } else if (r.label().startsWith("dense G-Lion")) {
                denseEpoch = perEpoch;
                denseTarget = toTarget;
            }
        }
        sb.append("\ns/epoch: training time (wall clock, evaluations left out) of epochs 2 to the last, per epoch (epoch 1 also holds the"
            + " start-up: JIT warm-up and waiting for the last worker process to join; with one epoch it is epoch 1); s to X%: training time"
            + " from the start until the first epoch whose test accuracy reached X%; bytes on the wire: every worker's frames up and down,"
            + " headers included, counted once by the exchanges; bytes the links carried: what every host's interface sent (each byte once,"
            + " on its sender's link: Aeron's headers, status messages and retransmissions included), and its ratio to the exchanges' count;"
            + " shaper drops: packets the links' queues dropped; per round:"
            + " mean (p99) of worker 0's rounds in the last epoch.\n");
        if (mavoEpoch != null && denseEpoch != null) {
            sb.append(String.format(Locale.ROOT, "%nD-Lion MaVo against dense G-Lion: %.2fx faster per epoch", denseEpoch / mavoEpoch));
            if (mavoTarget != null && denseTarget != null) {
                sb.append(String.format(Locale.ROOT, ", %.2fx faster to %.1f%%", denseTarget / mavoTarget, 100 * target));
            }
            sb.append(".\n");
        }
        return sb.toString();
    }

    /** @return training seconds per epoch of epochs 2 to the last (epoch 1 when there is only one). */
    static double secondsPerEpoch(final List<EpochMetrics> job) {
        if (job.size() == 1) {
            return job.get(0).trainSeconds;
        }
        return (job.get(job.size() - 1).trainSeconds - job.get(0).trainSeconds) / (job.size() - 1);
    }

    /** @return training seconds at the first epoch with at least {@code target} test accuracy, or null. */
    static Double secondsTo(final List<EpochMetrics> job, final double target) {
        for (final EpochMetrics m : job) {
            if (m.testAccuracy >= target) {
                return m.trainSeconds;
            }
        }
        return null;
    }

    /**
     * Write the table to {@code out/results.md} and the plot of accuracy against seconds to
     * {@code out/accuracy_vs_seconds.png}.
     *
     * @param settings what every run shared.
     * @param results  the runs.
     * @param command  the command line, for the header.
     * @return the table.
     */
    public static String report(final Settings settings, final List<Result> results, final String command) throws IOException {
        Files.createDirectories(settings.out());
        final String table = table(results, settings.targetAccuracy(), settings.rate() + " per link, " + settings.topology());
        Files.writeString(settings.out().resolve("results.md"), "Produced by `" + command + "`.\n\n" + table);
        final Map<String, List<EpochMetrics>> runs = new LinkedHashMap<>();
        for (final Result r : results) {
            runs.put(r.label(), r.job());
        }
        Reports.plotAccuracyVsSeconds(settings.out(), runs, settings.targetAccuracy());
        return table;
    }
}
