package io.dlion.testkit.chaos;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The nemesis's plan: from the seed alone, faults at random times, which may overlap. {@link #plan()} is a pure function of
 * its {@link Context}: the same seed and settings give the same schedule on any machine.
 * <p>
 * <b>What the plan keeps true</b>, by simulating the job as it goes (so that every fault is one the job must survive):
 * <ul>
 *   <li>the quorum: at most {@code workers - minVoters} workers are out at any time (killed and not yet back, or stopped),
 *       a worker counting as out from its SIGKILL until {@link Context#rejoinAllowanceMs()} after its restart, or from its
 *       SIGSTOP until {@value #AFTER_STOP_MS} ms after its SIGCONT;</li>
 *   <li>the relay: {@link FaultKind#KILL_RELAY} names the rank that serves slice 0 as the plan foresees it by the failover
 *       rule (a dead rank's slices move to the first rank from each slice, in ring order, that is in: a restarted rank
 *       serves again once it has rejoined). The run kills whichever process serves slice 0 when the fault comes, which is
 *       that rank unless a restarted rank rejoined sooner than the plan allows for; either way no more workers are out
 *       than the plan counts;</li>
 *   <li>a stop lasts longer than the round deadline and at most {@link Context#maxStopMs()} (by default
 *       {@value Context#STOP_BELOW_SILENCE_MS} ms below the workers' {@link Context#silenceMs()}, after which a silent slice
 *       server counts as dead, so that a stopped server is not taken for dead).</li>
 * </ul>
 * Faults start from {@link Context#warmUpMs()} (counted from the moment every worker applied a round) to {@code durationMs - quietEndMs} (the
 * last restarted worker has time to rejoin before the run ends); the gap between two starts is uniform in
 * [0.5, 1.5] x {@link Context#meanGapMs()}. Each fault is of a kind the job can take at that moment, drawn at random among
 * those drawn fewest times so far: the kills that need workers in (two at once needs every worker in) come as often as
 * the others.
 */
public final class ChaosSchedule {
    /** A stopped worker counts as out for this long after its SIGCONT (it may have to rejoin). */
    static final long AFTER_STOP_MS = 3_000;

    private final Context ctx;

    /** @param ctx the settings, concluded here. */
    public ChaosSchedule(final Context ctx) {
        this.ctx = ctx.conclude();
    }

    /** @return the settings. */
    public Context context() {
        return ctx;
    }

    /** @return the faults, in order of their start. */
    public List<Fault> plan() {
        final SplittableRandom random = new SplittableRandom(ctx.seed);
        final int n = ctx.workers;
        final int[] owner = new int[n];
        for (int w = 0; w < n; w++) {
            owner[w] = w;
        }
        final long[] outUntil = new long[n];
        final Map<FaultKind, Integer> drawn = new EnumMap<>(FaultKind.class);
        final int maxOut = n - ctx.minVoters;
        final List<Fault> faults = new ArrayList<>();
        final long last = ctx.durationMs - ctx.quietEndMs;
        long t = ctx.warmUpMs;
        while (t <= last) {
            final List<Integer> free = new ArrayList<>();
            int out = 0;
            for (int w = 0; w < n; w++) {
                if (outUntil[w] <= t) {
                    free.add(w);
                } else {
                    out++;
                }
            }
            final int relay = owner[0];
            final List<Integer> killable = free;
            final List<FaultKind> feasible = new ArrayList<>();
            for (final FaultKind kind : ctx.kinds) {
                final boolean ok;
                switch (kind) {
                    case KILL_WORKER:
                    case STOP:
                        ok = out + 1 <= maxOut && !(kind == FaultKind.STOP ? free : killable).isEmpty();
                        break;
                    case KILL_RELAY:
                        ok = out + 1 <= maxOut && outUntil[relay] <= t;
                        break;
                    case KILL_TWO:
                        ok = out + 2 <= maxOut && killable.size() >= 2;
                        break;
                    default:
                        ok = true;
                }
                if (ok) {
                    feasible.add(kind);
                }
            }
            if (feasible.isEmpty()) {
                t += Math.max(1, Math.round(ctx.meanGapMs * (0.5 + random.nextDouble())));
                continue;
            }
            int fewest = Integer.MAX_VALUE;
            for (final FaultKind k : feasible) {
                fewest = Math.min(fewest, drawn.getOrDefault(k, 0));
            }
            final List<FaultKind> due = new ArrayList<>();
            for (final FaultKind k : feasible) {
                if (drawn.getOrDefault(k, 0) == fewest) {
                    due.add(k);
                }
            }
            final FaultKind kind = due.get(random.nextInt(due.size()));
            drawn.merge(kind, 1, Integer::sum);
            final int[] targets;
            final long duration;
            switch (kind) {
                case KILL_WORKER:
                    targets = new int[] {killable.get(random.nextInt(killable.size()))};
                    duration = between(random, 1_000, 4_000);
                    break;
                case KILL_RELAY:
                    targets = new int[] {relay};
                    duration = between(random, 1_000, 4_000);
                    break;
                case KILL_TWO:
                    targets = pickTwo(random, killable);
                    duration = between(random, 1_000, 4_000);
                    break;
                case STOP:
                    targets = new int[] {free.get(random.nextInt(free.size()))};
                    duration = between(random, ctx.roundDeadlineMs + Math.min(500, (ctx.maxStopMs() - ctx.roundDeadlineMs) / 2), ctx.maxStopMs());
                    break;
                case LOSS:
                    targets = random.nextBoolean() ? allWorkers(n) : new int[] {random.nextInt(n)};
                    duration = between(random, 2_000, 6_000);
                    break;
                case GARBAGE:
                    targets = new int[] {random.nextInt(n)};
                    duration = between(random, 3_000, 8_000);
                    break;
                default:
                    targets = new int[] {random.nextInt(n)};
                    duration = between(random, 15_000, 25_000);
            }
            final Fault fault = new Fault(faults.size(), t, kind, targets, duration);
            faults.add(fault);
            if (kind.kills()) {
                for (final int w : targets) {
                    outUntil[w] = fault.endMs() + ctx.rejoinAllowanceMs;
                }
                moveSlices(owner, targets, outUntil, t);
            } else if (kind == FaultKind.STOP) {
                outUntil[targets[0]] = fault.endMs() + AFTER_STOP_MS;
            }
            t += Math.max(1, Math.round(ctx.meanGapMs * (0.5 + random.nextDouble())));
        }
        return Collections.unmodifiableList(faults);
    }

    /**
     * The failover rule as the plan foresees it: every slice a killed rank serves moves to the first rank from the slice
     * on, in ring order, that is in at {@code t} (neither out nor killed now).
     */
    static void moveSlices(final int[] owner, final int[] killed, final long[] outUntil, final long t) {
        final int n = owner.length;
        for (int s = 0; s < n; s++) {
            boolean lost = false;
            for (final int k : killed) {
                lost |= owner[s] == k;
            }
            if (!lost) {
                continue;
            }
            for (int i = 0; i < n; i++) {
                final int r = (s + i) % n;
                if (outUntil[r] <= t) {
                    owner[s] = r;
                    break;
                }
            }
        }
    }

    private static int[] pickTwo(final SplittableRandom random, final List<Integer> killable) {
        final int a = random.nextInt(killable.size());
        final int b = (a + 1 + random.nextInt(killable.size() - 1)) % killable.size();
        return new int[] {Math.min(killable.get(a), killable.get(b)), Math.max(killable.get(a), killable.get(b))};
    }

    private static int[] allWorkers(final int n) {
        final int[] all = new int[n];
        for (int i = 0; i < n; i++) {
            all[i] = i;
        }
        return all;
    }

    private static long between(final SplittableRandom random, final long from, final long to) {
        return to <= from ? from : from + random.nextLong(to - from + 1);
    }

    /** Settings of a schedule, defaults defined once here; {@link #conclude()} checks them, naming the option. */
    public static final class Context {
        /** Default {@link #warmUpMs()}. */
        public static final long WARM_UP_MS_DEFAULT = 20_000;
        /** Default {@link #quietEndMs()}. */
        public static final long QUIET_END_MS_DEFAULT = 30_000;
        /** Default {@link #meanGapMs()}. */
        public static final long MEAN_GAP_MS_DEFAULT = 15_000;
        /** Default {@link #roundDeadlineMs()}. */
        public static final long ROUND_DEADLINE_MS_DEFAULT = 2_000;
        /**
         * Default {@link #silenceMs()}: 3 s, so that two ranks killed at once, the second found dead only after the first
         * (a restarted rank that serves no slice, named for the first one's), fail over within the round deadline + 6 s.
         */
        public static final long SILENCE_MS_DEFAULT = 3_000;
        /** Default {@link #maxStopMs()}: this much below {@link #silenceMs()}. */
        public static final long STOP_BELOW_SILENCE_MS = 500;
        /** Default {@link #rejoinAllowanceMs()}. */
        public static final long REJOIN_ALLOWANCE_MS_DEFAULT = 40_000;

        private int workers = 4;
        private int minVoters = 2;
        private long durationMs = 60_000;
        private long seed = 1;
        private long warmUpMs = WARM_UP_MS_DEFAULT;
        private long quietEndMs = QUIET_END_MS_DEFAULT;
        private long meanGapMs = MEAN_GAP_MS_DEFAULT;
        private long roundDeadlineMs = ROUND_DEADLINE_MS_DEFAULT;
        private long silenceMs = SILENCE_MS_DEFAULT;
        private long maxStopMs;
        private long rejoinAllowanceMs = REJOIN_ALLOWANCE_MS_DEFAULT;
        private Set<FaultKind> kinds = EnumSet.allOf(FaultKind.class);

        /** @return this, checked. */
        public Context conclude() {
            require(workers >= 3 && workers <= 64, "--workers must be in [3, 64], got " + workers);
            require(minVoters >= 1 && minVoters <= workers - 1, "--min-voters must be in [1, workers - 1], got " + minVoters);
            require(durationMs > 0, "--minutes must be > 0, got " + durationMs + " ms");
            require(warmUpMs >= 0 && quietEndMs >= 0, "the warm-up and the quiet end must be >= 0");
            require(meanGapMs >= 1, "--mean-gap must be >= 1 ms, got " + meanGapMs);
            require(roundDeadlineMs >= 1, "--round-timeout-ms must be >= 1, got " + roundDeadlineMs);
            require(silenceMs >= 1_000, "--silence-ms must be >= 1000, got " + silenceMs);
            require(maxStopMs() > roundDeadlineMs, "the longest stop (" + maxStopMs() + " ms) must exceed the round deadline (" + roundDeadlineMs
                + " ms): a stop must go past it (a longer --silence-ms or a shorter --round-timeout-ms)");
            require(maxStopMs() < silenceMs, "the longest stop (" + maxStopMs() + " ms) must be shorter than the silence (" + silenceMs
                + " ms) after which a slice server counts as dead");
            require(rejoinAllowanceMs >= 0, "the rejoin allowance must be >= 0");
            require(!kinds.isEmpty(), "--kinds must name at least one fault kind");
            return this;
        }

        private static void require(final boolean ok, final String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }

        /** @param workers worker processes of the job, 3 to 64. @return this */
        public Context workers(final int workers) {
            this.workers = workers;
            return this;
        }

        public int workers() {
            return workers;
        }

        /** @param minVoters the job's quorum; the plan keeps at least this many workers in. @return this */
        public Context minVoters(final int minVoters) {
            this.minVoters = minVoters;
            return this;
        }

        public int minVoters() {
            return minVoters;
        }

        /** @param durationMs the run's length. @return this */
        public Context durationMs(final long durationMs) {
            this.durationMs = durationMs;
            return this;
        }

        public long durationMs() {
            return durationMs;
        }

        /** @param seed the seed of the whole schedule. @return this */
        public Context seed(final long seed) {
            this.seed = seed;
            return this;
        }

        public long seed() {
            return seed;
        }

        /** @param warmUpMs no fault before this. @return this */
        public Context warmUpMs(final long warmUpMs) {
            this.warmUpMs = warmUpMs;
            return this;
        }

        public long warmUpMs() {
            return warmUpMs;
        }

        /** @param quietEndMs no fault starts in the last this many ms. @return this */
        public Context quietEndMs(final long quietEndMs) {
            this.quietEndMs = quietEndMs;
            return this;
        }

        public long quietEndMs() {
            return quietEndMs;
        }

        /** @param meanGapMs mean time between two faults' starts. @return this */
        public Context meanGapMs(final long meanGapMs) {
            this.meanGapMs = meanGapMs;
            return this;
        }

        public long meanGapMs() {
            return meanGapMs;
        }

        /** @param roundDeadlineMs the slice servers' round deadline; a stop lasts longer. @return this */
        public Context roundDeadlineMs(final long roundDeadlineMs) {
            this.roundDeadlineMs = roundDeadlineMs;
            return this;
        }

        public long roundDeadlineMs() {
            return roundDeadlineMs;
        }

        /**
         * @param silenceMs how long the workers let a slice server be silent before they find it dead ({@code ./dlion worker
         *                  --silence-ms}); a stop stays below it.
         * @return this
         */
        public Context silenceMs(final long silenceMs) {
            this.silenceMs = silenceMs;
            return this;
        }

        public long silenceMs() {
            return silenceMs;
        }

        /** @param maxStopMs the longest stop; 0 (default) for {@value #STOP_BELOW_SILENCE_MS} ms below the silence. @return this */
        public Context maxStopMs(final long maxStopMs) {
            this.maxStopMs = maxStopMs;
            return this;
        }

        public long maxStopMs() {
            return maxStopMs > 0 ? maxStopMs : silenceMs - STOP_BELOW_SILENCE_MS;
        }

        /** @param rejoinAllowanceMs how long a restarted worker counts as out after its restart. @return this */
        public Context rejoinAllowanceMs(final long rejoinAllowanceMs) {
            this.rejoinAllowanceMs = rejoinAllowanceMs;
            return this;
        }

        public long rejoinAllowanceMs() {
            return rejoinAllowanceMs;
        }

        /** @param kinds the fault kinds the plan draws from. @return this */
        public Context kinds(final Set<FaultKind> kinds) {
            this.kinds = kinds.isEmpty() ? EnumSet.noneOf(FaultKind.class) : EnumSet.copyOf(kinds);
            return this;
        }

        public Set<FaultKind> kinds() {
            return kinds;
        }
    }
}
