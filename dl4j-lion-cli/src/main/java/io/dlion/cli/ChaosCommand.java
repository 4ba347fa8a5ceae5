package io.dlion.cli;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;

import io.dlion.testkit.chaos.ChaosChecker;
import io.dlion.testkit.chaos.ChaosRun;
import io.dlion.testkit.chaos.ChaosSchedule;
import io.dlion.testkit.chaos.FaultKind;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./dlion chaos}: a seeded chaos soak ({@link ChaosRun}): a sharded job of worker processes over UDP loopback trains
 * while a nemesis kills, stops, drops packets, sprays garbage and sends a stranger, faults that may overlap; a checker proves
 * the properties of the whole history. Writes {@code summary.md}, {@code history.txt} and every process's log to
 * {@code --out}. Exit code 0 when every property held; a failure prints the seed and the command that replays it.
 */
@Command(name = "chaos", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Chaos soak: seeded, overlapping faults on a sharded job of worker processes, and a checker of the whole history.")
public final class ChaosCommand implements Callable<Integer> {
    /**
     * Epochs per minute of the run when --epochs is not given (about what 4 workers train on 2 cores under the faults; a
     * job that ends early leaves the later faults out, and the summary says how many).
     */
    static final double EPOCHS_PER_MINUTE = 12;

    @Option(names = "--workers", description = "worker processes, 3 to 64 (default: ${DEFAULT-VALUE})")
    int workers = 4;

    @Option(names = "--minutes", required = true, description = "how long the nemesis acts; the job trains about as long")
    double minutes;

    @Option(names = "--seed", required = true, description = "seed of the fault schedule: the same seed gives the same schedule")
    long seed;

    @Option(names = "--out", description = "directory for summary.md, history.txt and the logs (default: runs/chaos-SEED)")
    Path out;

    @Option(names = "--min-voters", description = "the slice servers' quorum; at most workers - this many are out at once"
        + " (default: ${DEFAULT-VALUE})")
    int minVoters = 2;

    @Option(names = "--round-timeout-ms", description = "the slice servers' round deadline (default: ${DEFAULT-VALUE})")
    long roundTimeoutMs = ChaosSchedule.Context.ROUND_DEADLINE_MS_DEFAULT;

    @Option(names = "--silence-ms", description = "the workers' --silence-ms: a slice server silent this long is dead; a stop lasts"
        + " less (default: ${DEFAULT-VALUE})")
    long silenceMs = ChaosSchedule.Context.SILENCE_MS_DEFAULT;

    @Option(names = "--mean-gap-s", description = "mean time between two faults' starts (default: ${DEFAULT-VALUE})")
    double meanGapSeconds = ChaosSchedule.Context.MEAN_GAP_MS_DEFAULT / 1000.0;

    @Option(names = "--warm-up-s", description = "no fault before this (default: ${DEFAULT-VALUE})")
    double warmUpSeconds = ChaosSchedule.Context.WARM_UP_MS_DEFAULT / 1000.0;

    @Option(names = "--quiet-end-s", description = "no fault starts in the last this many seconds (default: ${DEFAULT-VALUE})")
    double quietEndSeconds = ChaosSchedule.Context.QUIET_END_MS_DEFAULT / 1000.0;

    @Option(names = "--kinds", split = ",", description = "fault kinds the nemesis draws from: kill-worker, kill-relay, kill-two, stop, loss,"
        + " garbage, stranger (default: all)")
    List<String> kinds;

    @Option(names = "--epochs", description = "epochs the job trains (default: " + EPOCHS_PER_MINUTE + " per minute, at least 2)")
    Integer epochs;

    @Option(names = "--train-limit", description = "Fashion-MNIST training examples (default: ${DEFAULT-VALUE})")
    int trainLimit = 12_000;

    @Option(names = "--rejoin-bound-s", description = "longest a restarted or stopped worker may take to apply a round again"
        + " (default: ${DEFAULT-VALUE})")
    double rejoinBoundSeconds = ChaosRun.Context.REJOIN_BOUND_MS_DEFAULT / 1000.0;

    @Option(names = "--failover-margin-s", description = "what a failover (after a kill) or a resume (after a stop, loss, garbage, a"
        + " stranger) may take beyond the round deadline (default: ${DEFAULT-VALUE}: twice the 3 s of silence that finds a dead slice"
        + " server, for two ranks killed at once are found dead one after the other when the second served no slice)")
    double failoverMarginSeconds = ChaosChecker.FAILOVER_MARGIN_MS / 1000.0;

    /** @return the run's settings, checked. */
    ChaosRun.Context context() {
        if (!(minutes > 0)) {
            throw new IllegalArgumentException("--minutes must be > 0, got " + minutes);
        }
        final int e = epochs != null ? epochs : (int) Math.max(2, Math.ceil(minutes * EPOCHS_PER_MINUTE));
        final ChaosSchedule.Context schedule = new ChaosSchedule.Context().workers(workers).minVoters(minVoters).seed(seed)
            .durationMs(Math.round(minutes * 60_000)).roundDeadlineMs(roundTimeoutMs).silenceMs(silenceMs).meanGapMs(Math.round(meanGapSeconds * 1000))
            .warmUpMs(Math.round(warmUpSeconds * 1000)).quietEndMs(Math.round(quietEndSeconds * 1000)).kinds(kinds());
        final Path dir = out != null ? out : Path.of("runs", "chaos-" + seed);
        return new ChaosRun.Context().schedule(schedule).out(dir).epochs(e).trainLimit(trainLimit)
            .rejoinBoundMs(Math.round(rejoinBoundSeconds * 1000)).failoverMarginMs(Math.round(failoverMarginSeconds * 1000))
            .replay(replay(e, dir)).conclude();
    }

    private Set<FaultKind> kinds() {
        if (kinds == null) {
            return EnumSet.allOf(FaultKind.class);
        }
        final Set<FaultKind> set = EnumSet.noneOf(FaultKind.class);
        for (final String k : kinds) {
            try {
                set.add(FaultKind.valueOf(k.trim().toUpperCase(Locale.ROOT).replace('-', '_')));
            } catch (final IllegalArgumentException ex) {
                throw new IllegalArgumentException("--kinds: unknown fault kind '" + k + "'; the kinds are kill-worker, kill-relay, kill-two,"
                    + " stop, loss, garbage, stranger", ex);
            }
        }
        return set;
    }

    private String replay(final int e, final Path dir) {
        final StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "./dlion chaos --workers %d --minutes %s --seed %d --epochs %d"
            + " --min-voters %d --round-timeout-ms %d --silence-ms %d --mean-gap-s %s --warm-up-s %s --quiet-end-s %s --train-limit %d --rejoin-bound-s %s"
            + " --failover-margin-s %s", workers, minutes, seed, e, minVoters, roundTimeoutMs, silenceMs, meanGapSeconds, warmUpSeconds, quietEndSeconds,
            trainLimit, rejoinBoundSeconds, failoverMarginSeconds));
        if (kinds != null) {
            sb.append(" --kinds ").append(String.join(",", kinds));
        }
        return sb.append(" --out ").append(dir).toString();
    }

    @Override
    public Integer call() throws Exception {
        final ChaosRun.Result result = new ChaosRun(context(), System.out).run();
        System.out.println(result.ok() ? "chaos run: OK" : "chaos run: FAILED (seed " + seed + "; see " + result.out().resolve("summary.md") + ")");
        return result.ok() ? 0 : 1;
    }
}
