package io.dlion.testkit;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.dlion.aeron.Channels;
import io.dlion.aeron.RejectReason;

/**
 * A D-Lion job of real processes over UDP loopback (one server, N workers, each with its own embedded media driver
 * dropping a fraction of the UDP data frames it receives) that is disturbed while it trains: worker {@code k} is
 * killed (SIGKILL) and later started again with {@code --rejoin}, the server is killed and started again, and a
 * garbage sender sprays mutated frames at the restarted server. At the end every worker's {@code params-sha256},
 * test accuracy and the server's reject counters are collected into a {@link Report}.
 */
public final class FaultRun {
    /** The command-line root every child process runs: {@code ./dlion <command>} without the launcher. */
    private static final String DLION_CLI = "io.dlion.cli.DLionCli";
    private static final Pattern PROGRESS = Pattern.compile("epoch (\\d+)\\s+step (\\d+)/(\\d+)");
    private static final Pattern HASH = Pattern.compile("params-sha256 worker=(\\d+) ([0-9a-f]{64})");
    private static final Pattern ACCURACY = Pattern.compile("^epoch (\\d+)\\s+test accuracy ([0-9.]+)");
    private static final Pattern REJOINS = Pattern.compile("rejoins at round (\\d+)");
    private static final Pattern COUNTER = Pattern.compile("([a-zA-Z-]+)=(\\d+)");
    private static final Pattern GARBAGE = Pattern.compile("garbage total sent=(\\d+)");

    private final FaultPlan plan;
    private final PrintStream out;
    private final List<ChildProcess> children = new ArrayList<>();

    public FaultRun(final FaultPlan plan, final PrintStream out) {
        this.plan = plan.validate();
        this.out = out;
    }

    /** @return what happened; the logs of every process are in the plan's output directory. */
    public Report run() throws Exception {
        Files.createDirectories(plan.out());
        // a random run id per fault run: the workers' checkpoints and hand-overs carry it (no shared directory: the
        // rejoining worker gets its donor's state through the server)
        final String runId = "faults-" + Long.toHexString(new SecureRandom().nextLong());
        final Path secret = plan.out().resolve("job.secret");
        final byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        Files.write(secret, key);
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
        final int votePort = Channels.freeUdpPort();
        final int controlPort = Channels.freeUdpPort();
        final Report report = new Report(plan);
        try {
            ChildProcess server = startServer(1, votePort, controlPort, secret);
            final ChildProcess[] workers = new ChildProcess[plan.workers()];
            for (int i = 0; i < plan.workers(); i++) {
                workers[i] = startWorker(i, false, votePort, controlPort, secret, runId);
            }
            final int watched = plan.killWorker() == 0 ? 1 : 0;
            ChildProcess garbage = null;
            boolean garbagePending = false;
            long killedNs = 0;
            long serverRestartNs = 0;
            ChildProcess detectServer = null;
            long detectAfter = 0;
            boolean workerKilled = plan.killWorkerAt() <= 0;
            boolean workerRestarted = plan.rejoinAt() <= 0;
            boolean serverKilled = plan.killServerAt() <= 0;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(plan.timeoutSeconds());
            while (workers[watched].isAlive()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the disturbed run did not finish within " + plan.timeoutSeconds() + " s");
                }
                final double progress = progress(workers[watched]);
                if (!workerKilled && progress >= plan.killWorkerAt()) {
                    final long dropsBefore = parseCounters(server.lastLine(l -> l.startsWith("rounds="))).getOrDefault("dropped", 0L);
                    killedNs = System.nanoTime();
                    detectServer = server;
                    detectAfter = dropsBefore;
                    workers[plan.killWorker()].kill();
                    report.event(String.format("worker %d killed (SIGKILL) at %.0f%% of the run", plan.killWorker(), 100 * progress));
                    workerKilled = true;
                }
                if (workerKilled && !workerRestarted && progress >= plan.rejoinAt()) {
                    workers[plan.killWorker()] = startWorker(plan.killWorker(), true, votePort, controlPort, secret, runId);
                    report.event(String.format("worker %d restarted with --rejoin at %.0f%%", plan.killWorker(), 100 * progress));
                    workerRestarted = true;
                }
                if (!serverKilled && progress >= plan.killServerAt()) {
                    server.kill();
                    report.firstServer(server.lastLine(l -> l.startsWith("rounds=")));
                    report.event(String.format("server killed (SIGKILL) at %.0f%%; restarted %d ms later", 100 * progress, plan.serverDownMs()));
                    Thread.sleep(plan.serverDownMs());
                    server = startServer(2, votePort, controlPort, secret);
                    serverKilled = true;
                    serverRestartNs = System.nanoTime();
                    garbagePending = plan.garbageRate() > 0;
                }
                final Map<String, Long> now = parseCounters(server.lastLine(l -> l.startsWith("rounds=")));
                if (garbagePending && serverKilled && now.getOrDefault("rounds", 0L) >= 2) {
                    // every worker has said HELLO to the new server: from here on only the stranger's frames are refused
                    // under the garbage reasons, so its count can be checked against the server's exactly
                    report.beforeGarbage(now);
                    garbage = startGarbage(votePort, controlPort);
                    garbagePending = false;
                }
                Thread.sleep(200);
            }
            if (garbage != null) {
                garbage.stop();
                final String sent = lastMatch(garbage, GARBAGE, 1);
                report.garbageSent(sent == null ? -1 : Long.parseLong(sent));
            }
            if (detectServer != null) {
                final long threshold = detectAfter;
                final long seen = detectServer.timeOfFirstLine(killedNs,
                    l -> l.startsWith("rounds=") && parseCounters(l).getOrDefault("dropped", 0L) > threshold);
                report.detectedMs(seen < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(seen - killedNs));
            }
            if (serverRestartNs != 0) {
                final long progressed = server.timeOfFirstLine(serverRestartNs,
                    l -> l.startsWith("rounds=") && parseCounters(l).getOrDefault("rounds", 0L) > 0);
                report.serverResumedMs(progressed < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(progressed - serverRestartNs));
            }
            for (int i = 0; i < workers.length; i++) {
                final int code = workers[i].await(plan.timeoutSeconds());
                report.worker(i, code, lastMatch(workers[i], HASH, 2), lastAccuracy(workers[i]), rejoinRound(workers[i]));
            }
            Thread.sleep(1_000);
            server.stop();
            report.finalServer(parseCounters(server.lastLine(l -> l.startsWith("rounds="))));
        } finally {
            for (final ChildProcess child : children) {
                if (child.isAlive()) {
                    child.kill();
                }
            }
        }
        return report;
    }

    private ChildProcess startServer(final int instance, final int votePort, final int controlPort, final Path secret) throws IOException {
        final List<String> args = new ArrayList<>(List.of("server", "--job", Integer.toString(plan.job()), "--workers", Integer.toString(plan.workers()),
            "--params", Long.toString(plan.params()), "--udp", "127.0.0.1:" + votePort + ":" + controlPort,
            "--secret-file", secret.toString(), "--round-timeout-ms", Long.toString(plan.roundTimeoutMs()), "--status-interval", "1"));
        if (plan.lossRate() > 0) {
            args.add("--loss-rate");
            args.add(Double.toString(plan.lossRate()));
        }
        return track(ChildProcess.start("server-" + instance, DLION_CLI, args, "1g",
            plan.out().resolve("server-" + instance + ".log")));
    }

    private ChildProcess startWorker(final int id, final boolean rejoin, final int votePort, final int controlPort, final Path secret,
        final String runId) throws IOException {
        final List<String> args = new ArrayList<>(List.of("worker", "--server", "127.0.0.1", "--vote-port", Integer.toString(votePort),
            "--control-port", Integer.toString(controlPort), "--local-host", "127.0.0.1", "--job", Integer.toString(plan.job()),
            "--worker-id", Integer.toString(id), "--workers", Integer.toString(plan.workers()), "--secret-file", secret.toString(),
            "--run-id", runId, "--await-timeout-s", "120", "--out", plan.out().resolve("worker-" + id).toString()));
        args.addAll(plan.trainArgs());
        if (plan.lossRate() > 0) {
            args.add("--loss-rate");
            args.add(Double.toString(plan.lossRate()));
        }
        if (rejoin) {
            args.add("--rejoin");
        }
        final String name = "worker-" + id + (rejoin ? "-rejoined" : "");
        return track(ChildProcess.start(name, DLION_CLI, args, "2g", plan.out().resolve(name + ".log")));
    }

    private ChildProcess startGarbage(final int votePort, final int controlPort) throws IOException {
        final List<String> args = List.of("garbage", "--job", Integer.toString(plan.job()), "--workers", Integer.toString(plan.workers()),
            "--params", Long.toString(plan.params()), "--udp", "127.0.0.1:" + votePort + ":" + controlPort,
            "--rate", Integer.toString(plan.garbageRate()), "--seed", "7", "--server-has-secret");
        return track(ChildProcess.start("garbage", DLION_CLI, args, "512m", plan.out().resolve("garbage.log")));
    }

    private ChildProcess track(final ChildProcess child) {
        children.add(child);
        out.println("started " + child.name());
        return child;
    }

    private double progress(final ChildProcess worker) {
        final String line = worker.lastLine(l -> PROGRESS.matcher(l).find());
        if (line == null) {
            return 0;
        }
        final Matcher m = PROGRESS.matcher(line);
        m.find();
        final int epoch = Integer.parseInt(m.group(1));
        final int step = Integer.parseInt(m.group(2));
        final int steps = Integer.parseInt(m.group(3));
        return ((epoch - 1) * (double) steps + step) / (plan.epochs() * (double) steps);
    }

    private static String lastMatch(final ChildProcess child, final Pattern pattern, final int group) {
        final String line = child.lastLine(l -> pattern.matcher(l).find());
        if (line == null) {
            return null;
        }
        final Matcher m = pattern.matcher(line);
        m.find();
        return m.group(group);
    }

    private static double lastAccuracy(final ChildProcess child) {
        final String value = lastMatch(child, ACCURACY, 2);
        return value == null ? Double.NaN : Double.parseDouble(value);
    }

    private static long rejoinRound(final ChildProcess child) {
        final String value = lastMatch(child, REJOINS, 1);
        return value == null ? -1 : Long.parseLong(value);
    }

    /** @return the name=value counters of a server status line. */
    static Map<String, Long> parseCounters(final String line) {
        final Map<String, Long> counters = new LinkedHashMap<>();
        if (line != null) {
            final Matcher m = COUNTER.matcher(line);
            while (m.find()) {
                counters.put(m.group(1), Long.parseLong(m.group(2)));
            }
        }
        return counters;
    }

    /** What a fault run observed, with the checks the run is judged by. */
    public static final class Report {
        private final FaultPlan plan;
        private final List<String> events = new ArrayList<>();
        private final Map<Integer, String> hashes = new TreeMap<>();
        private final Map<Integer, Double> accuracies = new TreeMap<>();
        private final Map<Integer, Integer> exitCodes = new TreeMap<>();
        private long rejoinRound = -1;
        private long detectedMs = -1;
        private long serverResumedMs = -1;
        private long garbageSent = -1;
        private String firstServer;
        private Map<String, Long> finalServer = Map.of();
        private Map<String, Long> beforeGarbage = Map.of();

        Report(final FaultPlan plan) {
            this.plan = plan;
        }

        void event(final String event) {
            events.add(event);
        }

        void firstServer(final String line) {
            this.firstServer = line;
        }

        void garbageSent(final long sent) {
            this.garbageSent = sent;
        }

        void worker(final int id, final int exitCode, final String hash, final double accuracy, final long rejoinRound) {
            exitCodes.put(id, exitCode);
            if (hash != null) {
                hashes.put(id, hash);
            }
            accuracies.put(id, accuracy);
            if (rejoinRound >= 0) {
                this.rejoinRound = rejoinRound;
            }
        }

        void detectedMs(final long ms) {
            this.detectedMs = ms;
        }

        void serverResumedMs(final long ms) {
            this.serverResumedMs = ms;
        }

        /** @return ms from the worker's kill to the first server status line counting it dropped (1 s status lines), or -1. */
        public long detectedMs() {
            return detectedMs;
        }

        void beforeGarbage(final Map<String, Long> counters) {
            this.beforeGarbage = counters;
        }

        void finalServer(final Map<String, Long> counters) {
            this.finalServer = counters;
        }

        public List<String> events() {
            return events;
        }

        /** @return the final parameter hash of every worker that finished. */
        public Map<Integer, String> hashes() {
            return hashes;
        }

        /** @return every worker's final test accuracy. */
        public Map<Integer, Double> accuracies() {
            return accuracies;
        }

        public Map<Integer, Integer> exitCodes() {
            return exitCodes;
        }

        /** @return the round the restarted worker voted in first, or -1. */
        public long rejoinRound() {
            return rejoinRound;
        }

        /** @return frames the garbage sender had accepted by its publication, or -1 without garbage. */
        public long garbageSent() {
            return garbageSent;
        }

        /** @return the restarted server's counters at its shutdown. */
        public Map<String, Long> finalServer() {
            return finalServer;
        }

        /** @return the restarted server's rejections under the reasons a stranger's frames fall in, while the garbage was sent. */
        public long garbageRejected() {
            long total = 0;
            for (final RejectReason reason : GarbageFrames.GARBAGE_REASONS) {
                total += finalServer.getOrDefault(reason.label(), 0L) - beforeGarbage.getOrDefault(reason.label(), 0L);
            }
            return total;
        }

        /** @return true when every worker exited 0 and all printed the same parameter hash. */
        public boolean identical() {
            return hashes.size() == plan.workers() && hashes.values().stream().distinct().count() == 1
                && exitCodes.values().stream().allMatch(c -> c == 0);
        }

        /**
         * @param baseline accuracy of the undisturbed run.
         * @return the report as Markdown.
         */
        public String markdown(final double baseline) {
            final StringBuilder sb = new StringBuilder();
            sb.append("| check | result |\n|---|---|\n");
            for (final String e : events) {
                sb.append("| fault | ").append(e).append(" |\n");
            }
            sb.append("| UDP receive loss injected | ").append(plan.lossRate() * 100).append("% on every process; restarted server: ")
                .append(finalServer.getOrDefault("udpFramesDropped", 0L)).append(" data frames dropped |\n");
            sb.append("| killed worker detected (dropped) by the server after | ").append(detectedMs)
                .append(" ms (round deadline ").append(plan.roundTimeoutMs()).append(" ms; status lines every 1 s) |\n");
            sb.append("| rejoined worker's first round | ").append(rejoinRound).append(" |\n");
            sb.append("| restarted server completed its first round after | ").append(serverResumedMs)
                .append(" ms (status lines every 1 s) |\n");
            sb.append("| first server at its death | `").append(firstServer).append("` |\n");
            sb.append("| restarted server at the end | rounds ").append(finalServer.get("rounds")).append(", dropped ")
                .append(finalServer.get("dropped")).append(", joins ").append(finalServer.get("joins")).append(", aborted ")
                .append(finalServer.get("aborted")).append(" |\n");
            if (plan.garbageRate() > 0) {
                sb.append("| garbage frames sent / rejected as a stranger's | ").append(garbageSent).append(" / ").append(garbageRejected())
                    .append(garbageSent == garbageRejected() ? " (all counted)" : " (MISMATCH)").append(" |\n");
            }
            sb.append("| restarted server's rejections by reason | ");
            for (final RejectReason reason : RejectReason.values()) {
                final long v = finalServer.getOrDefault(reason.label(), 0L);
                if (v != 0) {
                    sb.append(reason.label()).append('=').append(v).append(' ');
                }
            }
            sb.append("|\n");
            sb.append("| workers' final parameters identical | ").append(identical() ? "yes" : "NO").append(" (").append(hashes).append(") |\n");
            sb.append(String.format("| test accuracy, disturbed vs undisturbed | %.4f vs %.4f (%+.2f points) |%n",
                accuracies.getOrDefault(0, Double.NaN), baseline, 100 * (accuracies.getOrDefault(0, Double.NaN) - baseline)));
            return sb.toString();
        }
    }
}
