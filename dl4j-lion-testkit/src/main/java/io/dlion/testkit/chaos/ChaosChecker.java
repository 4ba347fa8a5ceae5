package io.dlion.testkit.chaos;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Proves properties of a chaos run's whole history: pure code over the workers' round histories, the nemesis's log of
 * what it did, the workers' exit codes and what was left behind. The properties ({@link Property}):
 * <ol>
 *   <li><b>same result</b>: for every round, every worker that applied it applied the same result digest;</li>
 *   <li><b>no repeat, no skip</b>: in each worker's history (all its processes, in order) the rounds applied go up by one;
 *       a gap is allowed only right after a {@code joined r=R} line, and then the next round applied is exactly R, above
 *       every round the worker applied before; a restarted process (a second {@code start}) must join before it applies;</li>
 *   <li><b>identical end</b>: every worker exited 0 and logged its parameters at the job's last round, all with the same
 *       digest; and at every epoch's end, the workers that logged the same round logged the same parameter digest;</li>
 *   <li><b>recovered in bound</b>: every fault injected was recovered within its bound (below);</li>
 *   <li><b>nothing left behind</b>: no process, {@code /dev/shm} directory or namespace of the run remains.</li>
 * </ol>
 * <b>Recovery, per kind</b> (times are the history lines' wall clocks; {@code D} = the round deadline):
 * <ul>
 *   <li>kills (worker, relay, two): <i>failover</i> = from the SIGKILL to the first round applied by another worker whose
 *       voters include none of the killed ranks, bound {@code D + 6 s} (a dead slice server is found after the workers'
 *       silence, 3 s in a chaos run; two ranks killed at once may take it twice, when the second served no slice and the
 *       rule names it for the first one's); <i>rejoin</i> = from the restart to the restarted worker's first round applied, bound
 *       {@link Bounds#rejoinMs()} (a JVM start, the data, the join and the hand-over);</li>
 *   <li>stop: <i>resume</i> = from the SIGCONT to the first round applied by any worker, bound {@code D + 6 s}; and
 *       <i>rejoin</i> = from the SIGCONT to the stopped worker's first round applied, bound {@link Bounds#rejoinMs()} (a
 *       worker dropped from its round rejoins in place);</li>
 *   <li>loss, garbage, stranger: <i>resume</i> = from the fault's end to the first round applied by any worker (for a loss
 *       burst, by each worker it hit), bound {@code D + 6 s}.</li>
 * </ul>
 * A measure that is not within its bound starts instead at the SIGCONT of another worker's stop that began before the
 * round it waited for (or before the bound ran out) and had not ended at its start: nobody finishes a round while a slice's
 * server is stopped. A measure whose worker was killed by a later fault before it recovered, or was
 * still rejoining after an earlier kill (the kill's rejoin measure covers that time), and a failover that another kill
 * interrupted (within its bound, before the job recovered: the job then recovers from that kill, whose own failover is
 * measured from its SIGKILL), or a resume of the job that a kill interrupted the same way, is <i>superseded</i>, and one that
 * had no round left to apply (the job had reached its end: every worker exited 0) is <i>after the end</i>: neither fails. In a
 * job that failed, a recovery that never came is <i>NEVER</i>.
 */
public final class ChaosChecker {
    /** What the checker proves. */
    public enum Property {
        SAME_RESULT("every worker that applied a round applied the same result"),
        NO_REPEAT_NO_SKIP("no round applied twice, none skipped except through a logged hand-over"),
        IDENTICAL_END("every worker ended (exit 0) with identical parameters; identical at every epoch's end"),
        RECOVERED_IN_BOUND("every fault recovered within its bound"),
        NOTHING_LEFT_BEHIND("no process, /dev/shm directory or namespace of the run left behind");

        private final String text;

        Property(final String text) {
            this.text = text;
        }

        /** @return what it says, for the summary. */
        public String text() {
            return text;
        }
    }

    /** Default margin of a failover, on top of the round deadline: twice a chaos run's 3 s of silence (two ranks killed at once). */
    public static final long FAILOVER_MARGIN_MS = 6_000;

    /**
     * The bounds recoveries are checked against.
     *
     * @param roundDeadlineMs  the slice servers' round deadline.
     * @param failoverMarginMs what a failover or a resume may take beyond the round deadline.
     * @param rejoinMs         longest a restarted (or stopped) worker may take to apply a round again.
     */
    public record Bounds(long roundDeadlineMs, long failoverMarginMs, long rejoinMs) {
        /**
         * @param roundDeadlineMs the slice servers' round deadline.
         * @param rejoinMs        longest a restarted (or stopped) worker may take to apply a round again.
         */
        public Bounds(final long roundDeadlineMs, final long rejoinMs) {
            this(roundDeadlineMs, FAILOVER_MARGIN_MS, rejoinMs);
        }

        /** @return the bound of failovers and resumes: the round deadline plus the margin. */
        public long failoverMs() {
            return roundDeadlineMs + failoverMarginMs;
        }
    }

    /**
     * One recovery measured.
     *
     * @param fault   the fault.
     * @param measure {@code failover}, {@code rejoin} or {@code resume}.
     * @param worker  the worker it is about, or -1 for the job.
     * @param ms      how long it took; -1 when it never happened.
     * @param boundMs its bound.
     * @param outcome {@code ok}, {@code LATE}, {@code NEVER}, {@code superseded} or {@code after the end}.
     */
    public record Recovery(Fault fault, String measure, int worker, long ms, long boundMs, String outcome) {
        /** @return true unless it was late or never came. */
        public boolean held() {
            return !"LATE".equals(outcome) && !"NEVER".equals(outcome);
        }

        /** @return true when it was measured (not superseded, not after the end). */
        public boolean measured() {
            return ms >= 0 && ("ok".equals(outcome) || "LATE".equals(outcome));
        }
    }

    /** The checker's findings. */
    public static final class Verdict {
        private final Map<Property, List<String>> violations = new EnumMap<>(Property.class);
        private final List<Recovery> recoveries = new ArrayList<>();
        private long rounds;
        private long roundsSkipped;
        private long roundsShort;
        private int workers;

        Verdict() {
            for (final Property p : Property.values()) {
                violations.put(p, new ArrayList<>());
            }
        }

        void violate(final Property property, final String what) {
            violations.get(property).add(what);
        }

        /** @return true when every property held. */
        public boolean ok() {
            return violations.values().stream().allMatch(List::isEmpty);
        }

        /** @return true when this property held. */
        public boolean held(final Property property) {
            return violations.get(property).isEmpty();
        }

        /** @return what broke this property, empty when it held. */
        public List<String> violations(final Property property) {
            return violations.get(property);
        }

        /** @return every recovery measured, in fault order. */
        public List<Recovery> recoveries() {
            return recoveries;
        }

        /** @return the highest round any worker applied, plus one. */
        public long rounds() {
            return rounds;
        }

        /** @return rounds the workers skipped through hand-overs (rounds lost to the faults), summed over the workers. */
        public long roundsSkipped() {
            return roundsSkipped;
        }

        /** @return rounds whose result counted fewer voters than the job has workers. */
        public long roundsShort() {
            return roundsShort;
        }

        /**
         * @param measure a measure name, or null for all.
         * @param q       the quantile, 0..1.
         * @return the quantile (nearest rank) of the recoveries measured, ms; -1 when none.
         */
        public long quantile(final String measure, final double q) {
            final List<Long> ms = new ArrayList<>();
            for (final Recovery r : recoveries) {
                if (r.measured() && (measure == null || measure.equals(r.measure()))) {
                    ms.add(r.ms());
                }
            }
            if (ms.isEmpty()) {
                return -1;
            }
            ms.sort(null);
            return ms.get(Math.max(0, (int) Math.ceil(q * ms.size()) - 1));
        }

        /**
         * @param title   the first line.
         * @param faults  the faults injected.
         * @param replay  the command that replays the run.
         * @return the one-page summary, Markdown.
         */
        public String summary(final String title, final List<Injected> faults, final String replay) {
            final StringBuilder sb = new StringBuilder("# ").append(title).append("\n\n");
            sb.append("Replay: `").append(replay).append("`\n\n");
            sb.append(String.format("Workers %d, rounds %d, rounds skipped through hand-overs %d (summed over workers), rounds with fewer"
                + " voters than workers %d.%n%n", workers, rounds, roundsSkipped, roundsShort));
            final Map<FaultKind, Integer> byKind = new EnumMap<>(FaultKind.class);
            for (final Injected f : faults) {
                byKind.merge(f.fault().kind(), 1, Integer::sum);
            }
            sb.append("| fault kind | injected |\n|---|---|\n");
            for (final FaultKind k : FaultKind.values()) {
                sb.append("| ").append(k.label()).append(" | ").append(byKind.getOrDefault(k, 0)).append(" |\n");
            }
            sb.append("| all | ").append(faults.size()).append(" |\n\n");
            sb.append("| recovery | measured | p50 ms | p99 ms | max ms | bound ms | superseded / after the end |\n|---|---|---|---|---|---|---|\n");
            for (final String m : List.of("failover", "resume", "rejoin")) {
                long count = 0;
                long other = 0;
                long max = -1;
                long bound = 0;
                for (final Recovery r : recoveries) {
                    if (r.measure().equals(m)) {
                        bound = Math.max(bound, r.boundMs());
                        if (r.measured()) {
                            count++;
                            max = Math.max(max, r.ms());
                        } else if (r.held()) {
                            other++;
                        }
                    }
                }
                sb.append(String.format("| %s | %d | %d | %d | %d | %d | %d |%n", m, count, quantile(m, 0.5), quantile(m, 0.99), max, bound,
                    other));
            }
            sb.append("\n| property | held |\n|---|---|\n");
            for (final Property p : Property.values()) {
                final List<String> v = violations.get(p);
                sb.append("| ").append(p.text()).append(" | ").append(v.isEmpty() ? "yes" : "**NO** (" + v.size() + ")").append(" |\n");
            }
            for (final Property p : Property.values()) {
                final List<String> v = violations.get(p);
                if (!v.isEmpty()) {
                    sb.append("\n**").append(p.text()).append("** broken:\n");
                    for (int i = 0; i < Math.min(10, v.size()); i++) {
                        sb.append("- ").append(v.get(i)).append('\n');
                    }
                    if (v.size() > 10) {
                        sb.append("- ... and ").append(v.size() - 10).append(" more\n");
                    }
                }
            }
            return sb.toString();
        }
    }

    private final Bounds bounds;

    /** @param bounds the recovery bounds. */
    public ChaosChecker(final Bounds bounds) {
        this.bounds = bounds;
    }

    /**
     * @param histories every worker's history lines, in file order, by worker id (0 .. workers - 1).
     * @param faults    the faults injected.
     * @param exitCodes the exit code of each worker's last process, by worker id.
     * @param leftovers what the run left behind (processes, directories, namespaces), one line each.
     * @return the verdict.
     */
    public Verdict check(final Map<Integer, List<String>> histories, final List<Injected> faults, final Map<Integer, Integer> exitCodes,
        final List<String> leftovers) {
        final Verdict v = new Verdict();
        v.workers = histories.size();
        final Map<Integer, List<HistoryEvent>> events = new TreeMap<>();
        for (final Map.Entry<Integer, List<String>> e : histories.entrySet()) {
            final List<HistoryEvent> list = new ArrayList<>();
            for (final String line : e.getValue()) {
                if (line.isBlank()) {
                    continue;
                }
                try {
                    final HistoryEvent ev = HistoryEvent.parse(line);
                    if (ev.worker() != e.getKey()) {
                        v.violate(Property.NO_REPEAT_NO_SKIP, "worker " + e.getKey() + "'s history holds a line of worker " + ev.worker());
                    }
                    list.add(ev);
                } catch (final IllegalArgumentException ex) {
                    // a process killed while it wrote leaves at most its last line short
                    v.violate(Property.NO_REPEAT_NO_SKIP, "worker " + e.getKey() + ": " + ex.getMessage());
                }
            }
            events.put(e.getKey(), list);
        }
        sameResult(events, v);
        sequences(events, v);
        identicalEnd(events, exitCodes, v);
        recoveries(events, faults, endedWell(events, exitCodes), v);
        for (final String l : leftovers) {
            v.violate(Property.NOTHING_LEFT_BEHIND, l);
        }
        return v;
    }

    private static void sameResult(final Map<Integer, List<HistoryEvent>> events, final Verdict v) {
        final Map<Long, HistoryEvent> first = new HashMap<>();
        long max = -1;
        for (final List<HistoryEvent> list : events.values()) {
            for (final HistoryEvent e : list) {
                if (!HistoryEvent.APPLIED.equals(e.type())) {
                    continue;
                }
                max = Math.max(max, e.round());
                final HistoryEvent seen = first.putIfAbsent(e.round(), e);
                if (seen != null && !seen.digest().equals(e.digest())) {
                    v.violate(Property.SAME_RESULT, String.format("round %d: worker %d applied %s, worker %d applied %s", e.round(), seen.worker(),
                        seen.digest(), e.worker(), e.digest()));
                }
            }
        }
        v.rounds = max + 1;
        for (final HistoryEvent e : first.values()) {
            if (e.voters() < events.size()) {
                v.roundsShort++;
            }
        }
    }

    private static void sequences(final Map<Integer, List<HistoryEvent>> events, final Verdict v) {
        for (final Map.Entry<Integer, List<HistoryEvent>> en : events.entrySet()) {
            final int w = en.getKey();
            long last = -1;
            long expect = 0;
            int starts = 0;
            boolean mustJoin = false;
            for (final HistoryEvent e : en.getValue()) {
                switch (e.type()) {
                    case HistoryEvent.START:
                        starts++;
                        mustJoin = starts > 1;
                        break;
                    case HistoryEvent.JOINED:
                        if (e.round() <= last) {
                            v.violate(Property.NO_REPEAT_NO_SKIP, String.format("worker %d joins at round %d but had applied round %d already",
                                w, e.round(), last));
                        }
                        v.roundsSkipped += Math.max(0, e.round() - (last + 1));
                        expect = e.round();
                        mustJoin = false;
                        break;
                    case HistoryEvent.APPLIED:
                        if (mustJoin) {
                            v.violate(Property.NO_REPEAT_NO_SKIP, String.format("worker %d applied round %d in a restarted process that never"
                                + " joined", w, e.round()));
                            mustJoin = false;
                        }
                        if (e.round() <= last) {
                            v.violate(Property.NO_REPEAT_NO_SKIP, String.format("worker %d applied round %d twice (or out of order: after"
                                + " round %d)", w, e.round(), last));
                        } else if (e.round() != expect) {
                            v.violate(Property.NO_REPEAT_NO_SKIP, String.format("worker %d skipped rounds %d to %d without a hand-over",
                                w, expect, e.round() - 1));
                        }
                        last = Math.max(last, e.round());
                        expect = last + 1;
                        break;
                    default:
                        break;
                }
            }
        }
    }

    private static void identicalEnd(final Map<Integer, List<HistoryEvent>> events, final Map<Integer, Integer> exitCodes, final Verdict v) {
        long finalRound = -1;
        for (final List<HistoryEvent> list : events.values()) {
            for (final HistoryEvent e : list) {
                if (HistoryEvent.EPOCH.equals(e.type())) {
                    finalRound = Math.max(finalRound, e.round());
                }
            }
        }
        final Map<Long, HistoryEvent> atRound = new HashMap<>();
        for (final Map.Entry<Integer, List<HistoryEvent>> en : events.entrySet()) {
            final int w = en.getKey();
            final Integer code = exitCodes.get(w);
            if (code == null || code != 0) {
                v.violate(Property.IDENTICAL_END, "worker " + w + " exited with " + code);
            }
            boolean atEnd = false;
            for (final HistoryEvent e : en.getValue()) {
                if (!HistoryEvent.EPOCH.equals(e.type())) {
                    continue;
                }
                atEnd |= e.round() == finalRound;
                final HistoryEvent seen = atRound.putIfAbsent(e.round(), e);
                if (seen != null && !seen.digest().equals(e.digest())) {
                    v.violate(Property.IDENTICAL_END, String.format("after round %d (epoch %d) worker %d's parameters are %s, worker %d's %s",
                        e.round(), e.voters(), seen.worker(), shortDigest(seen.digest()), w, shortDigest(e.digest())));
                }
            }
            if (finalRound < 0 || !atEnd) {
                v.violate(Property.IDENTICAL_END, "worker " + w + " logged no parameters at the job's last round " + finalRound);
            }
        }
    }

    private static String shortDigest(final String digest) {
        return digest.length() > 16 ? digest.substring(0, 16) : digest;
    }

    /** @return true when every worker that logged a history exited 0: the job reached its end, it did not fail. */
    private static boolean endedWell(final Map<Integer, List<HistoryEvent>> events, final Map<Integer, Integer> exitCodes) {
        for (final Integer w : events.keySet()) {
            final Integer code = exitCodes.get(w);
            if (code == null || code != 0) {
                return false;
            }
        }
        return true;
    }

    private void recoveries(final Map<Integer, List<HistoryEvent>> events, final List<Injected> faults, final boolean endedWell, final Verdict v) {
        final List<HistoryEvent> applied = new ArrayList<>();
        for (final List<HistoryEvent> list : events.values()) {
            for (final HistoryEvent e : list) {
                if (HistoryEvent.APPLIED.equals(e.type())) {
                    applied.add(e);
                }
            }
        }
        applied.sort((a, b) -> Long.compare(a.timeMs(), b.timeMs()));
        final long failover = bounds.failoverMs();
        for (final Injected f : faults) {
            final Fault fault = f.fault();
            if (f.endWallMs() < 0) {
                continue;
            }
            final int[] t = fault.targets();
            switch (fault.kind()) {
                case KILL_WORKER:
                case KILL_RELAY:
                case KILL_TWO:
                    v.recoveries.add(measure(fault, "failover", -1, f.startWallMs(), e -> !contains(t, e.worker()) && noneVoted(e, t), failover,
                        faults, f, applied, endedWell));
                    for (final int w : t) {
                        v.recoveries.add(measure(fault, "rejoin", w, f.endWallMs(), e -> e.worker() == w, bounds.rejoinMs(), faults, f, applied,
                            endedWell));
                    }
                    break;
                case STOP:
                    v.recoveries.add(measure(fault, "resume", -1, f.endWallMs(), e -> true, failover, faults, f, applied, endedWell));
                    v.recoveries.add(measure(fault, "rejoin", t[0], f.endWallMs(), e -> e.worker() == t[0], bounds.rejoinMs(), faults, f,
                        applied, endedWell));
                    break;
                case LOSS:
                    for (final int w : t) {
                        v.recoveries.add(measure(fault, "resume", w, f.endWallMs(), e -> e.worker() == w, failover, faults, f, applied, endedWell));
                    }
                    break;
                default:
                    v.recoveries.add(measure(fault, "resume", -1, f.endWallMs(), e -> true, failover, faults, f, applied, endedWell));
            }
        }
        for (final Recovery r : v.recoveries) {
            if (!r.held()) {
                v.violate(Property.RECOVERED_IN_BOUND, String.format("%s: %s%s %s (bound %d ms)", r.fault().describe(), r.measure(),
                    r.worker() >= 0 ? " of worker " + r.worker() : "", "NEVER".equals(r.outcome()) ? "never came" : "took " + r.ms() + " ms",
                    r.boundMs()));
            }
        }
    }

    /**
     * The first round applied after {@code start} that the predicate picks, measured from {@code start}; when it is not within
     * the bound, from the SIGCONT of another worker's stop that began before it (or before the bound ran out) and had not
     * ended at the start, and so on.
     */
    private static Recovery measure(final Fault fault, final String measure, final int worker, final long start,
        final java.util.function.Predicate<HistoryEvent> which, final long bound, final List<Injected> faults, final Injected self,
        final List<HistoryEvent> applied, final boolean endedWell) {
        final HistoryEvent next = firstApplied(applied, start, which);
        final long until = next == null ? Long.MAX_VALUE : next.timeMs();
        if (worker >= 0) {
            for (final Injected o : faults) {
                if (o == self || !o.fault().kind().kills() || !contains(o.fault().targets(), worker)) {
                    continue;
                }
                // killed by a later fault before it recovered; or still rejoining after an earlier kill (the kill's rejoin
                // measure covers that time)
                final boolean later = o.startWallMs() >= self.startWallMs() && o.startWallMs() < until;
                final HistoryEvent back = o.endWallMs() < 0 ? null : firstApplied(applied, o.endWallMs(), e -> e.worker() == worker);
                final boolean rejoining = o.startWallMs() < self.startWallMs() && o.startWallMs() <= start
                    && (back == null || back.timeMs() > start);
                if (later || rejoining) {
                    return new Recovery(fault, measure, worker, -1, bound, "superseded");
                }
            }
        }
        if (worker < 0) {
            for (final Injected o : faults) {
                // a kill (another one, for a kill) before the job recovered from this fault, within this measure's bound:
                // the job's recovery is that kill's failover, measured from its own SIGKILL
                if (o != self && o.fault().kind().kills() && o.startWallMs() >= self.startWallMs() && o.startWallMs() < until
                    && o.startWallMs() - start < bound) {
                    return new Recovery(fault, measure, worker, -1, bound, "superseded");
                }
            }
        }
        long from = start;
        while (true) {
            if (next != null && next.timeMs() - from <= bound) {
                return new Recovery(fault, measure, worker, Math.max(0, next.timeMs() - from), bound, "ok");
            }
            final long limit = Math.min(until, from + bound);
            long shiftTo = from;
            for (final Injected o : faults) {
                if (o != self && o.fault().kind() == FaultKind.STOP && o.endWallMs() >= 0 && o.startWallMs() <= limit && o.endWallMs() > from) {
                    shiftTo = Math.max(shiftTo, o.endWallMs());
                }
            }
            if (shiftTo == from) {
                break;
            }
            from = shiftTo;
        }
        if (next == null) {
            // no round left to apply: only when the job reached its end (a job that failed in the fault never recovered from it;
            // seed 5006's failed failover was taken for one after the end)
            final boolean ended = endedWell && (applied.isEmpty() || applied.get(applied.size() - 1).timeMs() <= from + bound);
            return new Recovery(fault, measure, worker, -1, bound, ended ? "after the end" : "NEVER");
        }
        return new Recovery(fault, measure, worker, next.timeMs() - from, bound, "LATE");
    }

    private static HistoryEvent firstApplied(final List<HistoryEvent> applied, final long afterMs,
        final java.util.function.Predicate<HistoryEvent> which) {
        for (final HistoryEvent e : applied) {
            if (e.timeMs() > afterMs && which.test(e)) {
                return e;
            }
        }
        return null;
    }

    private static boolean noneVoted(final HistoryEvent e, final int[] workers) {
        for (final int w : workers) {
            if (e.voted(w)) {
                return false;
            }
        }
        return true;
    }

    private static boolean contains(final int[] a, final int x) {
        for (final int y : a) {
            if (y == x) {
                return true;
            }
        }
        return false;
    }

    /** @return the faults injected, counted by kind. */
    public static Map<FaultKind, Integer> byKind(final List<Injected> faults) {
        final Map<FaultKind, Integer> m = new LinkedHashMap<>();
        for (final FaultKind k : FaultKind.values()) {
            m.put(k, 0);
        }
        for (final Injected f : faults) {
            m.merge(f.fault().kind(), 1, Integer::sum);
        }
        return m;
    }
}
