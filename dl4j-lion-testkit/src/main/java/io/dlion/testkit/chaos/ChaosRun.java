package io.dlion.testkit.chaos;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.dlion.aeron.AeronRuntime;
import io.dlion.testkit.ChildProcess;
import io.dlion.testkit.TestPorts;

/**
 * A chaos soak of real processes: N {@code ./dlion worker --topology sharded} processes over UDP loopback, with the job's
 * secret, checkpoints and a round history each, train the MLP on Fashion-MNIST while the nemesis carries out a
 * {@link ChaosSchedule}; then the {@link ChaosChecker} proves the properties of the whole history and the run writes
 * {@code history.txt} (every worker's events and the nemesis's, in time order), {@code summary.md} (one page) and the
 * logs of every process into its output directory (an earlier run's histories, logs and checkpoints there are deleted
 * first).
 * <p>
 * How each fault is carried out: kills with SIGKILL, sent to every target before waiting for any to exit and timed from
 * the sending ({@link ChildProcess#sendKill()}: a killed JVM took up to 8 s to exit on a loaded host), the restart a new {@code ./dlion worker
 * --rejoin} process appending to the same history; a stop with {@code kill -STOP} and {@code kill -CONT}; a loss burst by
 * creating, then deleting, the file that switches the embedded driver's receive loss on in the workers it hits
 * ({@link AeronRuntime#LOSS_SWITCH_PROP}, every worker runs with the loss rate and its own switch file); garbage with
 * {@code ./dlion garbage} at a slice's vote port; a stranger with a {@code ./dlion worker --rejoin} process holding
 * another secret. Each process gets an Aeron directory named after the run and the process
 * ({@code /dev/shm/aeron-chaos-TAG-NAME}), so that what a run leaves behind is found by name: the directories of the
 * processes the nemesis killed are removed (as the next start of a worker on that host does with stale ones), every other
 * one must be gone.
 */
public final class ChaosRun {
    private static final String DLION_CLI = "io.dlion.cli.DLionCli";
    private static final Pattern PARAMS = Pattern.compile("model \\S+, (\\d+) parameters");
    private static final long TICK_MS = 20;
    /**
     * How long a garbage sprayer may take past its fault's planned end: its JVM starts and connects first (seconds on a
     * loaded machine, which took whole faults: sprayers stopped at the planned end had sent nothing), then it sends for the
     * fault's whole duration and exits by itself.
     */
    private static final long SPRAYER_START_MS = TimeUnit.SECONDS.toMillis(30);

    /** Longest the job may take to apply its first round on every worker. */
    static final long START_BOUND_MS = 300_000;

    private final Context ctx;
    private final PrintStream out;
    /** Every process the run started; guarded by itself (the shutdown hook reads it from another thread). */
    private final List<ChildProcess> children = new ArrayList<>();
    /** Set by {@link #abandon()} under {@code children}: no process is started after it. */
    private boolean abandoned;
    /** Names of the processes the run killed; the shutdown hook adds to it from another thread. */
    private final Set<String> killedNames = java.util.Collections.synchronizedSet(new HashSet<>());
    /** Faults whose targets the run chose when they came (the relay, wherever slice 0 is served then), by index. */
    private final Map<Integer, Fault> retargeted = new TreeMap<>();
    private final List<String> nemesisLog = new ArrayList<>();
    private final String tag;
    private final Path dir;
    private int basePort;
    private Path secret;
    private Path strangerSecret;
    private ChildProcess[] workers;
    private final int[] incarnation;
    /** Per worker, when the nemesis last killed it ({@link Long#MIN_VALUE}: never): see {@link #remaining}. */
    private final long[] killedAtMs;
    /** Per worker, whether the nemesis has it stopped now. */
    private final boolean[] stopped;
    private long startWallMs;
    private int removed;

    /**
     * @param ctx the run's settings, concluded here.
     * @param out where progress goes.
     */
    public ChaosRun(final Context ctx, final PrintStream out) {
        this.ctx = ctx.conclude();
        this.out = out;
        this.tag = Long.toHexString(new SecureRandom().nextLong() & 0xffffffffL);
        this.dir = ctx.out.toAbsolutePath();
        this.incarnation = new int[ctx.schedule.workers()];
        this.killedAtMs = new long[ctx.schedule.workers()];
        java.util.Arrays.fill(killedAtMs, Long.MIN_VALUE);
        this.stopped = new boolean[ctx.schedule.workers()];
    }

    /** What the run found. */
    public record Result(ChaosChecker.Verdict verdict, List<Injected> injected, List<Fault> planned, String summary, Path out) {
        /** @return true when every property held. */
        public boolean ok() {
            return verdict.ok();
        }
    }

    /**
     * Run the job and the nemesis, then check.
     *
     * @return the verdict and the summary.
     * @throws IOException when a file or process cannot be made.
     * @throws InterruptedException when interrupted.
     */
    public Result run() throws IOException, InterruptedException {
        final int n = ctx.schedule.workers();
        // a run's histories are appended to: an earlier run's in the same directory would mix with this one's
        for (final String earlier : List.of("history", "logs", "checkpoints")) {
            if (Files.exists(dir.resolve(earlier))) {
                deleteTree(dir.resolve(earlier));
            }
        }
        Files.createDirectories(dir.resolve("history"));
        Files.createDirectories(dir.resolve("logs"));
        secret = writeSecret(dir.resolve("job.secret"));
        strangerSecret = writeSecret(dir.resolve("stranger.secret"));
        basePort = TestPorts.freeUdpPorts(2 * n);
        final List<Fault> planned = new ChaosSchedule(ctx.schedule).plan();
        Files.write(dir.resolve("schedule.txt"), planned.stream().map(Fault::describe).toList(), StandardCharsets.UTF_8);
        out.printf("chaos: seed %d, %d workers, %.1f min, %d faults planned; replay: %s%n", ctx.schedule.seed(), n,
            ctx.schedule.durationMs() / 60_000.0, planned.size(), ctx.replay);
        final List<Action> actions = new ArrayList<>();
        for (final Fault f : planned) {
            actions.add(new Action(f.atMs(), f, true));
            actions.add(new Action(f.endMs(), f, false));
        }
        actions.sort(Comparator.comparingLong(Action::atMs).thenComparing(a -> a.fault.index()));
        final Map<Integer, Long> started = new TreeMap<>();
        final List<Injected> injected = new ArrayList<>();
        final Map<Integer, ChildProcess> byFault = new TreeMap<>();
        final List<Fault> spraying = new ArrayList<>();
        boolean timedOut = false;
        workers = new ChildProcess[n];
        final Thread onStop = new Thread(this::abandon, "chaos-stopped");
        Runtime.getRuntime().addShutdownHook(onStop);
        try {
            for (int w = 0; w < n; w++) {
                workers[w] = worker(w, false);
            }
            final long launchedMs = System.currentTimeMillis();
            awaitFirstRound();
            startWallMs = System.currentTimeMillis();
            log(String.format(Locale.ROOT, "every worker applied a round %.1f s after the start: the nemesis's clock starts",
                (startWallMs - launchedMs) / 1000.0));
            final long hardEnd = startWallMs + ctx.schedule.durationMs() + TimeUnit.MINUTES.toMillis(ctx.graceMinutes);
            int next = 0;
            while (!allExited()) {
                final long now = System.currentTimeMillis();
                if (now > hardEnd) {
                    timedOut = true;
                    log("the workers had not finished " + ctx.graceMinutes + " min after the planned end: stopping them");
                    break;
                }
                while (next < actions.size() && startWallMs + actions.get(next).atMs <= now) {
                    final Action a = actions.get(next++);
                    if (a.start) {
                        final long at = start(a.fault, byFault);
                        if (at >= 0) {
                            started.put(a.fault.index(), at);
                        }
                    } else if (started.containsKey(a.fault.index())) {
                        if (a.fault.kind() == FaultKind.GARBAGE && byFault.get(a.fault.index()).isAlive()) {
                            spraying.add(a.fault); // its sprayer sends for the fault's duration from when it connected
                        } else {
                            end(a.fault, byFault);
                            injected.add(new Injected(asInjected(a.fault), started.get(a.fault.index()), System.currentTimeMillis()));
                        }
                    }
                }
                for (final java.util.Iterator<Fault> it = spraying.iterator(); it.hasNext();) {
                    final Fault f = it.next();
                    if (!byFault.get(f.index()).isAlive() || now > startWallMs + f.endMs() + SPRAYER_START_MS) {
                        it.remove();
                        end(f, byFault);
                        injected.add(new Injected(asInjected(f), started.get(f.index()), System.currentTimeMillis()));
                    }
                }
                Thread.sleep(TICK_MS);
            }
            // faults in force when the job ended: loss off, stopped workers continued, sprayers and strangers stopped
            for (final Fault f : spraying) {
                end(f, byFault);
                injected.add(new Injected(asInjected(f), started.get(f.index()), -1));
            }
            for (final Action a : actions.subList(next, actions.size())) {
                if (!a.start && started.containsKey(a.fault.index())) {
                    if (!a.fault.kind().kills()) {
                        end(a.fault, byFault);
                    }
                    injected.add(new Injected(asInjected(a.fault), started.get(a.fault.index()), -1));
                }
            }
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(onStop);
            } catch (final IllegalStateException stopping) {
                // the JVM is stopping: the hook cleans up
            }
            killLiving();
        }
        injected.sort(Comparator.comparingInt(i -> i.fault().index()));
        final Map<Integer, Integer> exits = new TreeMap<>();
        for (int w = 0; w < n; w++) {
            final Integer code = workers[w].exitCode();
            exits.put(w, timedOut || code == null ? -1 : code);
        }
        final List<String> leftovers = leftovers();
        final Map<Integer, List<String>> histories = new TreeMap<>();
        for (int w = 0; w < n; w++) {
            final Path h = historyOf(w);
            histories.put(w, Files.exists(h) ? Files.readAllLines(h, StandardCharsets.US_ASCII) : List.of());
        }
        final ChaosChecker.Verdict verdict = new ChaosChecker(new ChaosChecker.Bounds(ctx.schedule.roundDeadlineMs(), ctx.failoverMarginMs, ctx.rejoinBoundMs))
            .check(histories, injected, exits, leftovers);
        writeHistory(histories);
        final StringBuilder sb = new StringBuilder(verdict.summary(String.format("Chaos run: seed %d, %d workers, %.1f min", ctx.schedule.seed(),
            n, ctx.schedule.durationMs() / 60_000.0), injected, ctx.replay));
        sb.append(String.format("%nFaults planned %d, injected %d, not injected %d (the job had ended, or the target had exited).%n",
            planned.size(), injected.size(), planned.size() - injected.size()));
        sb.append("Slice server directories removed after the processes the nemesis killed: ").append(removed).append(".\n");
        final String summary = sb.toString();
        Files.writeString(dir.resolve("summary.md"), summary);
        out.println(summary);
        if (!verdict.ok()) {
            out.println("chaos: FAILED with seed " + ctx.schedule.seed() + "; replay with: " + ctx.replay);
        }
        return new Result(verdict, injected, planned, summary, dir);
    }

    /**
     * @return when the fault began (for a kill, when the SIGKILLs were sent, not when the processes had exited), or -1
     *     when it cannot be carried out (its target exited: the job ended).
     */
    private long start(final Fault f, final Map<Integer, ChildProcess> byFault)
        throws IOException, InterruptedException {
        int[] t = f.targets();
        switch (f.kind()) {
            case KILL_WORKER:
            case KILL_RELAY:
            case KILL_TWO:
                if (f.kind() == FaultKind.KILL_RELAY) {
                    t = relayOrSkip(f);
                    if (t == null) {
                        return -1;
                    }
                }
                final HistoryEvent last = lastApplied(); // the histories, read once for both checks
                if (!quorumStays(f, t, last) || !rejoinFits(f, last)) {
                    return -1;
                }
                for (final int w : t) {
                    if (!workers[w].isAlive()) {
                        log(f, "skipped: worker " + w + " has exited");
                        return -1;
                    }
                }
                final long sentMs = System.currentTimeMillis();
                for (final int w : t) {
                    killedNames.add(workers[w].name());
                    workers[w].sendKill();
                    killedAtMs[w] = sentMs;
                }
                log(f, sentMs, "SIGKILL workers " + java.util.Arrays.toString(t));
                for (final int w : t) {
                    workers[w].awaitExit();
                }
                log(f, String.format(Locale.ROOT, "workers %s exited %.2f s after the SIGKILL", java.util.Arrays.toString(t),
                    (System.currentTimeMillis() - sentMs) / 1000.0));
                return sentMs;
            case STOP:
                if (!workers[t[0]].isAlive()) {
                    log(f, "skipped: worker " + t[0] + " has exited");
                    return -1;
                }
                if (!quorumStays(f, t, lastApplied())) {
                    return -1;
                }
                workers[t[0]].signal("STOP");
                stopped[t[0]] = true;
                log(f, "SIGSTOP worker " + t[0]);
                return System.currentTimeMillis();
            case LOSS:
                for (final int w : t) {
                    Files.writeString(lossSwitch(w), "on");
                }
                log(f, "receive loss on at workers " + java.util.Arrays.toString(t));
                return System.currentTimeMillis();
            case GARBAGE: {
                final int slice = t[0];
                final ChildProcess g = start("garbage-" + f.index(), List.of(), List.of("garbage", "--job", Integer.toString(ctx.job), "--workers",
                    Integer.toString(ctx.schedule.workers()), "--params", Long.toString(params()), "--udp", "127.0.0.1:" + (basePort + 2 * slice)
                    + ":" + (basePort + 2 * slice + 1), "--rate", Integer.toString(ctx.garbageRate), "--seed", Long.toString(ctx.schedule.seed() + f.index()),
                    "--server-has-secret", "--connect-timeout-ms", "20000", "--duration-s", Long.toString(Math.max(1, f.durationMs() / 1000))), "256m");
                byFault.put(f.index(), g);
                log(f, "garbage at slice " + slice + "'s vote port " + (basePort + 2 * slice));
                return System.currentTimeMillis();
            }
            default: {
                final ChildProcess s = start("stranger-" + f.index(), List.of(), workerArgs(t[0], true, strangerSecret, false,
                    dir.resolve("logs").resolve("stranger-" + f.index())), "1g");
                byFault.put(f.index(), s);
                log(f, "stranger claiming worker id " + t[0] + " with another secret");
                return System.currentTimeMillis();
            }
        }
    }

    /**
     * The nemesis's clock starts when every worker has applied a round: a rank killed before the job's first round
     * leaves its slice without a server (slices move only from a server that had proven itself), and the processes'
     * start-up time varies with the load of the machine.
     *
     * @throws IllegalStateException when a worker exits first, or the job has not started within {@value #START_BOUND_MS} ms.
     */
    private void awaitFirstRound() throws IOException, InterruptedException {
        final long deadline = System.currentTimeMillis() + START_BOUND_MS;
        for (int w = 0; w < workers.length; w++) {
            while (!Files.exists(historyOf(w)) || Files.readAllLines(historyOf(w), StandardCharsets.US_ASCII).stream()
                .noneMatch(l -> l.contains(" applied r="))) {
                if (!workers[w].isAlive() || System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("worker " + w + " did not apply a round within " + START_BOUND_MS + " ms of its start"
                        + (workers[w].isAlive() ? "" : " (it exited)") + "; see " + dir.resolve("logs"));
                }
                Thread.sleep(TICK_MS);
            }
        }
    }

    /** @return the relay as the target (logged when it is not the rank planned), or null when none serves slice 0 now. */
    private int[] relayOrSkip(final Fault f) {
        final int relay = relay();
        if (relay < 0) {
            log(f, "skipped: no live process serves slice 0 now (its move is under way)");
            return null;
        }
        if (relay != f.targets()[0]) {
            log(f, "the relay is rank " + relay + ", not rank " + f.targets()[0] + " as planned (the plan counts a restarted rank out"
                + " for longer than its rejoin took)");
        }
        final int[] t = {relay};
        retargeted.put(f.index(), new Fault(f.index(), f.atMs(), f.kind(), t, f.durationMs()));
        return t;
    }

    /**
     * The plan counts a restarted worker in again {@code rejoinAllowanceMs} after its restart; on a loaded machine a rejoin
     * can take longer (its JVM, the data, the hand-over, the rounds it reads to catch up). So before it kills or stops, the
     * nemesis checks what the job shows: at least the quorum of the workers the last round applied counted must remain, not
     * stopped and not killed since that round ({@link #remaining}), else the fault is skipped (a round that only the others
     * could vote in would be aborted below the quorum, and the job fail).
     *
     * @param last the last round any worker applied ({@link #lastApplied()}), null before the first.
     * @return true when the fault may go ahead.
     */
    private boolean quorumStays(final Fault f, final int[] targets, final HistoryEvent last) {
        if (last == null) {
            return true;
        }
        if (remaining(last, targets, killedAtMs, stopped) < ctx.schedule.minVoters()) {
            log(f, "skipped: round " + last.round() + " counted " + last.voters() + " worker(s); without workers "
                + java.util.Arrays.toString(targets) + " and those killed since or stopped, fewer than the quorum ("
                + ctx.schedule.minVoters() + ") would remain");
            return false;
        }
        return true;
    }

    /**
     * The plan's quiet end is counted on the nemesis's clock, but the job ends at its last round, which a fast job reaches
     * sooner (seed 4903 killed a worker 30 rounds before the end: it restarted after the job had ended, could not join,
     * and exited 1). So a kill needs a job with more than the quiet end left at its pace so far.
     *
     * @param last the last round any worker applied ({@link #lastApplied()}), null before the first.
     * @return true when the job is far enough from its end for a killed worker to rejoin.
     */
    private boolean rejoinFits(final Fault f, final HistoryEvent last) {
        if (last == null || last.timeMs() <= startWallMs) {
            return true;
        }
        final long total = (long) ctx.epochs * (ctx.trainLimit / ctx.batch);
        final double roundsPerMs = last.round() / (double) (last.timeMs() - startWallMs);
        final long leftMs = (long) ((total - 1 - last.round()) / roundsPerMs);
        if (leftMs < ctx.schedule.quietEndMs()) {
            log(f, String.format(Locale.ROOT, "skipped: the job has %d rounds left, about %.0f s at its pace, less than the quiet end (%.0f s)",
                total - 1 - last.round(), leftMs / 1000.0, ctx.schedule.quietEndMs() / 1000.0));
            return false;
        }
        return true;
    }

    /** @return the last round any worker applied, as the histories say; null before the first. */
    private HistoryEvent lastApplied() throws IOException {
        HistoryEvent last = null;
        for (int w = 0; w < workers.length; w++) {
            final Path h = historyOf(w);
            if (!Files.exists(h)) {
                continue;
            }
            final List<String> lines = Files.readAllLines(h, StandardCharsets.US_ASCII);
            for (int i = lines.size() - 1; i >= 0; i--) {
                if (lines.get(i).contains(" applied r=")) {
                    final HistoryEvent e = HistoryEvent.parse(lines.get(i));
                    if (last == null || e.round() > last.round()) {
                        last = e;
                    }
                    break;
                }
            }
        }
        return last;
    }

    /**
     * @param last       the last round any worker applied, as its history says.
     * @param targets    the workers the fault would kill or stop.
     * @param killedAtMs per worker, when the nemesis last killed it ({@link Long#MIN_VALUE}: never).
     * @param stopped    per worker, whether it is stopped now.
     * @return the workers that round counted that would still hold the job's parameters and run: not targets, not stopped,
     *     and not killed since that round (a restarted process has no parameters until it has joined and voted, and a job
     *     stuck in a failover may show a last round from long before: seed 4403's nemesis killed the last worker with
     *     parameters while the others, counted in that round, were all rejoining).
     */
    static int remaining(final HistoryEvent last, final int[] targets, final long[] killedAtMs, final boolean[] stopped) {
        int remain = 0;
        for (int w = 0; w < killedAtMs.length; w++) {
            boolean target = false;
            for (final int x : targets) {
                target |= x == w;
            }
            remain += last.voted(w) && !target && !stopped[w] && killedAtMs[w] < last.timeMs() ? 1 : 0;
        }
        return remain;
    }

    /** @return the fault as it was carried out: the planned one, or with the targets chosen when it came. */
    private Fault asInjected(final Fault f) {
        return retargeted.getOrDefault(f.index(), f);
    }

    /**
     * @return the rank whose live process serves slice 0 now, as its output says (the last to start serving it, should two
     *     say so), or -1.
     */
    private int relay() {
        int relay = -1;
        long latest = Long.MIN_VALUE;
        for (int w = 0; w < workers.length; w++) {
            final int rank = w;
            final Predicate<String> serves = l -> l.contains("takes over slice 0 ") || (rank == 0 && l.startsWith("worker 0 serves slice 0 "));
            if (workers[w].isAlive() && workers[w].lastLine(serves) != null) {
                final long at = workers[w].timeOfFirstLine(System.nanoTime() - TimeUnit.DAYS.toNanos(1), serves);
                if (relay < 0 || at - latest > 0) {
                    relay = w;
                    latest = at;
                }
            }
        }
        return relay;
    }

    private void end(final Fault f, final Map<Integer, ChildProcess> byFault) throws IOException, InterruptedException {
        final int[] t = asInjected(f).targets();
        switch (f.kind()) {
            case KILL_WORKER:
            case KILL_RELAY:
            case KILL_TWO:
                for (final int w : t) {
                    workers[w] = worker(w, true);
                }
                log(f, "restarted workers " + java.util.Arrays.toString(t) + " with --rejoin");
                break;
            case STOP:
                workers[t[0]].signal("CONT");
                stopped[t[0]] = false;
                log(f, "SIGCONT worker " + t[0]);
                break;
            case LOSS:
                for (final int w : t) {
                    Files.deleteIfExists(lossSwitch(w));
                }
                log(f, "receive loss off at workers " + java.util.Arrays.toString(t));
                break;
            case GARBAGE: {
                final ChildProcess g = byFault.get(f.index());
                g.stop();
                log(f, "garbage stopped: " + g.lastLine(l -> l.startsWith("garbage total sent=")));
                break;
            }
            default: {
                final ChildProcess s = byFault.get(f.index());
                killedNames.add(s.name());
                s.kill();
                log(f, "stranger killed");
            }
        }
    }

    private ChildProcess worker(final int w, final boolean rejoin) throws IOException {
        final int k = incarnation[w]++;
        final String name = "worker-" + w + (k == 0 ? "" : "-r" + k);
        final List<String> jvm = List.of("-D" + AeronRuntime.LOSS_RATE_PROP + "=" + ctx.lossRate,
            "-D" + AeronRuntime.LOSS_SEED_PROP + "=" + (ctx.schedule.seed() * 31 + w * 7 + k), "-D" + AeronRuntime.LOSS_SWITCH_PROP + "=" + lossSwitch(w));
        return start(name, jvm, workerArgs(w, rejoin, secret, true, dir.resolve("logs").resolve(name)), "1g");
    }

    private List<String> workerArgs(final int w, final boolean rejoin, final Path secretFile, final boolean history, final Path outDir) {
        final int n = ctx.schedule.workers();
        final List<String> args = new ArrayList<>(List.of("worker", "--topology", "sharded", "--hosts",
            String.join(",", Collections.nCopies(n, "127.0.0.1")), "--vote-port", Integer.toString(basePort), "--job", Integer.toString(ctx.job),
            "--worker-id", Integer.toString(w), "--workers", Integer.toString(n), "--secret-file", secretFile.toString(), "--run-id", "chaos-" + tag,
            "--epochs", Integer.toString(ctx.epochs), "--batch", Integer.toString(ctx.batch), "--train-limit", Integer.toString(ctx.trainLimit),
            "--test-limit", Integer.toString(ctx.testLimit), "--seed", Long.toString(ctx.trainSeed), "--round-timeout-ms",
            Long.toString(ctx.schedule.roundDeadlineMs()), "--silence-ms", Long.toString(ctx.schedule.silenceMs()), "--min-voters",
            Integer.toString(ctx.schedule.minVoters()), "--await-timeout-s",
            Long.toString(ctx.awaitTimeoutSeconds), "--out", outDir.toString()));
        if (history) {
            args.addAll(List.of("--history", historyOf(w).toString(), "--checkpoint-dir", dir.resolve("checkpoints").toString(),
                "--checkpoint-every", Integer.toString(ctx.checkpointEvery)));
        }
        if (rejoin) {
            args.add("--rejoin");
        }
        return args;
    }

    private ChildProcess start(final String name, final List<String> jvmFlags, final List<String> args, final String heap) throws IOException {
        final List<String> jvm = new ArrayList<>(jvmFlags);
        jvm.add("-Daeron.dir=" + aeronDir(name));
        // every pause of the process's JVM (collections, safepoints) with its wall-clock time, beside its log: a server
        // that falls silent while its process lives is told from a process that did not run
        jvm.add("-Xlog:gc,safepoint:file=" + dir.resolve("logs").resolve(name + ".jvm.log") + ":time,uptime,level,tags");
        synchronized (children) {
            if (abandoned) {
                throw new IllegalStateException("the chaos run was stopped: " + name + " not started");
            }
            final ChildProcess c = ChildProcess.start(name, DLION_CLI, jvm, args, heap, dir.resolve("logs").resolve(name + ".log"));
            children.add(c);
            return c;
        }
    }

    /**
     * The run's JVM was told to stop (SIGTERM, Ctrl-C) before the run ended, when the {@code finally} of {@link #run()}
     * does not run: kill every process the run started (continued first if stopped) and remove their Aeron directories,
     * so that an interrupted soak leaves nothing behind either. Its histories so far stay in its directory, unchecked.
     */
    private void abandon() {
        synchronized (children) {
            abandoned = true;
        }
        int killed = 0;
        int removed = 0;
        try {
            killed = killLiving();
            try (Stream<Path> shm = Files.list(ctx.shmDir)) {
                for (final Path p : (Iterable<Path>) shm::iterator) {
                    if (p.getFileName().toString().startsWith(dirPrefix())) {
                        deleteTree(p);
                        removed++;
                    }
                }
            }
        } catch (final IOException | InterruptedException e) {
            out.println("chaos: stopped before its end; cleaning up failed: " + e);
        }
        out.printf("chaos: stopped before its end: %d processes killed, %d Aeron directories removed; histories so far in %s (unchecked)%n",
            killed, removed, dir);
    }

    /**
     * SIGKILL every process the run started that still lives, continued first if stopped (a stopped process dies only
     * once continued), its name kept as one the run killed.
     *
     * @return how many it killed.
     */
    private int killLiving() throws InterruptedException {
        int killed = 0;
        for (final ChildProcess c : children()) {
            if (c.isAlive()) {
                try {
                    c.signal("CONT");
                } catch (final IOException exited) {
                    // it exited meanwhile
                }
                killedNames.add(c.name());
                c.kill();
                killed++;
            }
        }
        return killed;
    }

    private List<ChildProcess> children() {
        synchronized (children) {
            return List.copyOf(children);
        }
    }

    private String aeronDir(final String name) {
        return ctx.shmDir.resolve(dirPrefix() + name).toString();
    }

    /** @return how the names of this run's Aeron directories begin: {@code aeron-chaos-TAG-}, then the process's name. */
    private String dirPrefix() {
        return "aeron-chaos-" + tag + "-";
    }

    private Path lossSwitch(final int w) {
        return dir.resolve("loss-on-worker-" + w);
    }

    private Path historyOf(final int w) {
        return dir.resolve("history").resolve("worker-" + w + ".log");
    }

    private long params() {
        for (final ChildProcess w : workers) {
            final String line = w == null ? null : w.lastLine(l -> PARAMS.matcher(l).find());
            if (line != null) {
                final Matcher m = PARAMS.matcher(line);
                m.find();
                return Long.parseLong(m.group(1));
            }
        }
        return 1 << 16;
    }

    private boolean allExited() {
        for (final ChildProcess w : workers) {
            if (w.isAlive()) {
                return false;
            }
        }
        return true;
    }

    /** @return processes, Aeron directories and namespaces of this run still there (the killed processes' directories removed). */
    private List<String> leftovers() throws IOException, InterruptedException {
        final List<String> left = new ArrayList<>();
        for (final ChildProcess c : children()) {
            if (c.isAlive()) {
                left.add("process " + c.name() + " (pid " + c.pid() + ") still runs");
            }
        }
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (final Path p : (Iterable<Path>) procs::iterator) {
                final Path cmdline = p.resolve("cmdline");
                if (!p.getFileName().toString().matches("\\d+")) {
                    continue;
                }
                try {
                    final String cmd = new String(Files.readAllBytes(cmdline), StandardCharsets.UTF_8);
                    if (cmd.contains("chaos-" + tag) && Long.parseLong(p.getFileName().toString()) != ProcessHandle.current().pid()) {
                        left.add("process " + p.getFileName() + " of the run still runs: " + cmd.replace('\0', ' '));
                    }
                } catch (final IOException gone) {
                    // the process exited while it was read
                }
            }
        }
        Thread.sleep(500);
        try (Stream<Path> shm = Files.list(ctx.shmDir)) {
            for (final Path p : (Iterable<Path>) shm::iterator) {
                final String name = p.getFileName().toString();
                if (!name.startsWith(dirPrefix())) {
                    continue;
                }
                final String process = name.substring(dirPrefix().length());
                if (killedNames.contains(process)) {
                    deleteTree(p);
                    removed++;
                } else {
                    left.add("Aeron directory " + p + " of " + process + ", which exited by itself");
                }
            }
        }
        try {
            final Process ip = new ProcessBuilder("ip", "netns", "list").redirectErrorStream(true).start();
            final String names = new String(ip.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            ip.waitFor(10, TimeUnit.SECONDS);
            for (final String l : names.split("\n")) {
                if (l.contains(tag)) {
                    left.add("network namespace " + l.trim());
                }
            }
        } catch (final IOException noIp) {
            log("ip netns list is not available: namespaces not checked (the run creates none)");
        }
        return left;
    }

    private static void deleteTree(final Path p) throws IOException {
        try (Stream<Path> walk = Files.walk(p)) {
            for (final Path q : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(q);
            }
        }
    }

    private void writeHistory(final Map<Integer, List<String>> histories) throws IOException {
        final List<String[]> all = new ArrayList<>();
        for (final List<String> lines : histories.values()) {
            for (final String l : lines) {
                all.add(new String[] {l.substring(2, Math.max(2, l.indexOf(' '))), l});
            }
        }
        for (final String l : nemesisLog) {
            all.add(new String[] {l.substring(2, l.indexOf(' ')), l});
        }
        all.sort(Comparator.comparingLong(a -> parseOr(a[0])));
        final List<String> lines = new ArrayList<>();
        for (final String[] a : all) {
            lines.add(a[1]);
        }
        Files.write(dir.resolve("history.txt"), lines, StandardCharsets.US_ASCII);
        Files.write(dir.resolve("nemesis.log"), nemesisLog, StandardCharsets.US_ASCII);
    }

    private static long parseOr(final String s) {
        try {
            return Long.parseLong(s);
        } catch (final NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    private void log(final Fault f, final String what) {
        log(f, System.currentTimeMillis(), what);
    }

    private void log(final Fault f, final long atMs, final String what) {
        log(atMs, String.format(Locale.ROOT, "%s %s: %s", "#" + f.index(), f.kind().label(), what));
    }

    private void log(final String what) {
        log(System.currentTimeMillis(), what);
    }

    private void log(final long now, final String what) {
        final String line = String.format(Locale.ROOT, "t=%d nemesis +%.1fs %s", now, (now - startWallMs) / 1000.0, what);
        nemesisLog.add(line);
        out.println(line);
    }

    private static Path writeSecret(final Path file) throws IOException {
        final byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        Files.write(file, key);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    private record Action(long atMs, Fault fault, boolean start) {
    }

    /** The run's settings, defaults defined once here. */
    public static final class Context {
        /** Default {@link #rejoinBoundMs(long)}. */
        public static final long REJOIN_BOUND_MS_DEFAULT = 60_000;

        private ChaosSchedule.Context schedule = new ChaosSchedule.Context();
        private Path out = Path.of("target", "chaos");
        private Path shmDir = Path.of("/dev/shm");
        private int job = 17;
        private int epochs = 4;
        private int batch = 96;
        private int trainLimit = 12_000;
        private int testLimit = 1_000;
        private long trainSeed = 42;
        private int checkpointEvery = 200;
        private double lossRate = 0.3;
        private int garbageRate = 500;
        private long rejoinBoundMs = REJOIN_BOUND_MS_DEFAULT;
        private long failoverMarginMs = ChaosChecker.FAILOVER_MARGIN_MS;
        private long awaitTimeoutSeconds = 120;
        private long graceMinutes = 10;
        private String replay = "";

        /** @return this, checked. */
        public Context conclude() {
            schedule.conclude();
            require(epochs >= 1, "--epochs must be >= 1, got " + epochs);
            require(batch >= schedule.workers() && batch % schedule.workers() == 0, "--batch must be a multiple of --workers, got " + batch);
            require(lossRate > 0 && lossRate < 1, "the burst's loss rate must be in (0, 1), got " + lossRate);
            require(garbageRate > 0, "the garbage rate must be > 0, got " + garbageRate);
            require(rejoinBoundMs > 0, "the rejoin bound must be > 0, got " + rejoinBoundMs);
            require(failoverMarginMs >= 0, "the failover margin must be >= 0, got " + failoverMarginMs);
            require(Files.isDirectory(shmDir), "the Aeron directory root " + shmDir + " does not exist");
            return this;
        }

        private static void require(final boolean ok, final String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }

        public Context schedule(final ChaosSchedule.Context schedule) {
            this.schedule = schedule;
            return this;
        }

        public ChaosSchedule.Context schedule() {
            return schedule;
        }

        /** @param out the output directory. @return this */
        public Context out(final Path out) {
            this.out = out;
            return this;
        }

        /** @param epochs epochs every worker trains. @return this */
        public Context epochs(final int epochs) {
            this.epochs = epochs;
            return this;
        }

        /** @param trainLimit training examples used. @return this */
        public Context trainLimit(final int trainLimit) {
            this.trainLimit = trainLimit;
            return this;
        }

        /** @param batch the global batch. @return this */
        public Context batch(final int batch) {
            this.batch = batch;
            return this;
        }

        /** @param rejoinBoundMs longest a restarted or stopped worker may take to apply a round again. @return this */
        public Context rejoinBoundMs(final long rejoinBoundMs) {
            this.rejoinBoundMs = rejoinBoundMs;
            return this;
        }

        /** @param failoverMarginMs what a failover or resume may take beyond the round deadline. @return this */
        public Context failoverMarginMs(final long failoverMarginMs) {
            this.failoverMarginMs = failoverMarginMs;
            return this;
        }

        /** @param lossRate received data frames dropped during a loss burst. @return this */
        public Context lossRate(final double lossRate) {
            this.lossRate = lossRate;
            return this;
        }

        /** @param graceMinutes how long past the planned end the workers may take to finish. @return this */
        public Context graceMinutes(final long graceMinutes) {
            this.graceMinutes = graceMinutes;
            return this;
        }

        /** @param replay the command that replays this run, for the summary and a failure's message. @return this */
        public Context replay(final String replay) {
            this.replay = replay;
            return this;
        }

        public String replay() {
            return replay;
        }
    }
}
