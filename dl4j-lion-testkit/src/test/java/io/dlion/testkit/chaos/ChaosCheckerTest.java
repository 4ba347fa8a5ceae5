package io.dlion.testkit.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.dlion.testkit.chaos.ChaosChecker.Property;
import io.dlion.testkit.chaos.ChaosChecker.Recovery;
import io.dlion.testkit.chaos.ChaosChecker.Verdict;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The checker on hand-made histories: a clean run of three workers (one killed at round 40 and rejoined at round 60) holds
 * every property, and each planted fault (a round applied twice, a digest that differs, a skipped round, a restarted process
 * that never joined, a join behind the rounds applied, parameters that differ at the end, a worker that did not exit 0, a
 * late or missing recovery, a leftover) breaks exactly the property it should.
 */
class ChaosCheckerTest {
    private static final long T0 = 1_000_000;
    /** 100 ms per round: round r is applied at T0 + 100 r. */
    private static final long ROUND_MS = 100;
    private static final int ROUNDS = 100;
    private static final ChaosChecker CHECKER = new ChaosChecker(new ChaosChecker.Bounds(2_000, 30_000));

    /** A job of three workers, 100 rounds in two epochs; worker 2 is killed after round 39 and joins at round 60. */
    private static Map<Integer, List<String>> clean() {
        final Map<Integer, List<String>> h = new TreeMap<>();
        for (int w = 0; w < 3; w++) {
            final List<String> lines = new ArrayList<>();
            lines.add(line(T0 - 500, w, "start pid=" + (100 + w)));
            for (int r = 0; r < ROUNDS; r++) {
                if (w == 2 && r == 40) {
                    lines.add(line(T0 + 5_500, w, "start pid=200"));
                    lines.add(line(T0 + 5_900, w, "joined r=60 donor=0"));
                    r = 60;
                }
                final boolean all = r < 40 || r >= 60;
                lines.add(line(T0 + ROUND_MS * r + w, w, "applied r=" + r + " d=" + digest(r) + " v=" + (all ? 3 : 2) + " m=" + (all ? "7" : "3")));
                if (r == 49 && w != 2) {
                    lines.add(line(T0 + ROUND_MS * r + 10, w, "epoch e=1 r=50 p=" + "ab".repeat(32)));
                }
            }
            lines.add(line(T0 + ROUND_MS * ROUNDS + 10, w, "epoch e=2 r=100 p=" + "cd".repeat(32)));
            h.put(w, lines);
        }
        return h;
    }

    /** Worker 2 killed just after round 39 (at T0 + 3,950), restarted at T0 + 5,000. */
    private static List<Injected> kill() {
        return List.of(new Injected(new Fault(0, 20_000, FaultKind.KILL_WORKER, new int[] {2}, 1_050), T0 + 3_950, T0 + 5_000));
    }

    private static Map<Integer, Integer> exits() {
        return Map.of(0, 0, 1, 0, 2, 0);
    }

    private static String line(final long t, final int w, final String rest) {
        return "t=" + t + " w=" + w + " " + rest;
    }

    private static String digest(final int round) {
        return String.format("%032x", round * 7919L);
    }

    private static void replace(final Map<Integer, List<String>> h, final int w, final String from, final String to) {
        final List<String> lines = h.get(w);
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(from)) {
                lines.set(i, lines.get(i).replace(from, to));
                return;
            }
        }
        throw new IllegalArgumentException("no line of worker " + w + " holds " + from);
    }

    private static void onlyBroken(final Verdict v, final Property broken) {
        assertFalse(v.ok(), "the checker must fail");
        for (final Property p : Property.values()) {
            assertEquals(p != broken, v.held(p), p + ": " + v.violations(p));
        }
    }

    @Test
    void shouldHoldEveryPropertyOnACleanHistory() {
        final Verdict v = CHECKER.check(clean(), kill(), exits(), List.of());
        assertTrue(v.ok(), () -> v.summary("clean", kill(), "-"));
        assertEquals(100, v.rounds());
        assertEquals(20, v.roundsSkipped(), "worker 2 skipped rounds 40 to 59");
        assertEquals(20, v.roundsShort());
        // failover: the first round without worker 2 (round 40, at T0 + 4,000) 50 ms after the kill; rejoin: round 60, 1,000 ms after the restart
        assertEquals(50, v.recoveries().get(0).ms());
        assertEquals(1_002, v.recoveries().get(1).ms());
    }

    @Test
    void shouldFailWhenAWorkerAppliesARoundTwice() {
        final Map<Integer, List<String>> h = clean();
        h.get(1).add(12, line(T0 + 1_050, 1, "applied r=10 d=" + digest(10) + " v=3 m=7"));
        onlyBroken(CHECKER.check(h, kill(), exits(), List.of()), Property.NO_REPEAT_NO_SKIP);
    }

    @Test
    void shouldFailWhenOneWorkerAppliedAnotherResult() {
        final Map<Integer, List<String>> h = clean();
        replace(h, 0, "applied r=33 d=" + digest(33), "applied r=33 d=" + digest(34));
        final Verdict v = CHECKER.check(h, kill(), exits(), List.of());
        onlyBroken(v, Property.SAME_RESULT);
        assertTrue(v.violations(Property.SAME_RESULT).get(0).startsWith("round 33:"), v.violations(Property.SAME_RESULT).toString());
    }

    @Test
    void shouldFailWhenAWorkerSkipsARoundWithoutAHandOver() {
        final Map<Integer, List<String>> h = clean();
        h.get(0).removeIf(l -> l.contains(" applied r=70 "));
        onlyBroken(CHECKER.check(h, kill(), exits(), List.of()), Property.NO_REPEAT_NO_SKIP);
    }

    @Test
    void shouldFailWhenARestartedProcessAppliesWithoutJoining() {
        final Map<Integer, List<String>> h = clean();
        h.get(2).removeIf(l -> l.contains(" joined "));
        onlyBroken(CHECKER.check(h, kill(), exits(), List.of()), Property.NO_REPEAT_NO_SKIP);
    }

    @Test
    void shouldFailWhenAWorkerJoinsAtARoundItHadApplied() {
        final Map<Integer, List<String>> h = clean();
        replace(h, 2, "joined r=60", "joined r=39");
        onlyBroken(CHECKER.check(h, kill(), exits(), List.of()), Property.NO_REPEAT_NO_SKIP);
    }

    @Test
    void shouldFailWhenTheParametersDifferAtTheEnd() {
        final Map<Integer, List<String>> h = clean();
        replace(h, 1, "epoch e=2 r=100 p=" + "cd".repeat(32), "epoch e=2 r=100 p=" + "ce".repeat(32));
        onlyBroken(CHECKER.check(h, kill(), exits(), List.of()), Property.IDENTICAL_END);
    }

    @Test
    void shouldFailWhenTheParametersDifferAtAnEpochsEnd() {
        final Map<Integer, List<String>> h = clean();
        replace(h, 0, "epoch e=1 r=50 p=" + "ab".repeat(32), "epoch e=1 r=50 p=" + "ac".repeat(32));
        onlyBroken(CHECKER.check(h, kill(), exits(), List.of()), Property.IDENTICAL_END);
    }

    @Test
    void shouldFailWhenAWorkerDidNotReachTheEndOrExitZero() {
        final Map<Integer, List<String>> h = clean();
        h.get(1).removeIf(l -> l.contains(" epoch e=2 "));
        onlyBroken(CHECKER.check(h, kill(), exits(), List.of()), Property.IDENTICAL_END);
        onlyBroken(CHECKER.check(clean(), kill(), Map.of(0, 0, 1, 1, 2, 0), List.of()), Property.IDENTICAL_END);
    }

    @Test
    void shouldFailWhenARejoinTakesLongerThanItsBound() {
        // restarted at T0 + 5,000 but its first round only 40 s later: every round from 60 on moves by 40 s for worker 2
        final Map<Integer, List<String>> h = clean();
        final List<String> late = new ArrayList<>();
        for (final String l : h.get(2)) {
            final HistoryEvent e = HistoryEvent.parse(l);
            late.add(e.timeMs() > T0 + 5_000 ? l.replace("t=" + e.timeMs(), "t=" + (e.timeMs() + 40_000)) : l);
        }
        h.put(2, late);
        final Verdict v = CHECKER.check(h, kill(), exits(), List.of());
        onlyBroken(v, Property.RECOVERED_IN_BOUND);
        assertTrue(v.violations(Property.RECOVERED_IN_BOUND).get(0).contains("rejoin of worker 2 took 41002 ms"),
            v.violations(Property.RECOVERED_IN_BOUND).toString());
    }

    @Test
    void shouldFailWhenTheSurvivorsStallPastTheFailoverBound() {
        // the survivors' rounds without worker 2 begin 9 s after the kill: over the 2 s deadline + 6 s
        final List<Injected> early = List.of(new Injected(new Fault(0, 20_000, FaultKind.KILL_RELAY, new int[] {2}, 1_050), T0 + 3_950 - 9_000,
            T0 + 5_000));
        final Verdict v = CHECKER.check(clean(), early, exits(), List.of());
        onlyBroken(v, Property.RECOVERED_IN_BOUND);
        assertTrue(v.violations(Property.RECOVERED_IN_BOUND).get(0).contains("failover took 9050 ms"),
            v.violations(Property.RECOVERED_IN_BOUND).toString());
    }

    @Test
    void shouldMeasureAFailoverFromTheEndOfAStopThatHeldTheJobAndIgnoreALaterStop() {
        // killed 9 s before its rounds stop: late, unless another worker was stopped in between (a stopped slice server holds
        // every round); a stop that begins after the failover does not move it
        final List<Injected> faults = List.of(
            new Injected(new Fault(0, 20_000, FaultKind.KILL_RELAY, new int[] {2}, 1_050), T0 + 3_950 - 9_000, T0 + 5_000),
            new Injected(new Fault(1, 21_000, FaultKind.STOP, new int[] {1}, 7_000), T0 - 4_000, T0 + 3_000),
            new Injected(new Fault(2, 30_000, FaultKind.STOP, new int[] {0}, 3_000), T0 + 4_500, T0 + 7_500));
        final Verdict v = CHECKER.check(clean(), faults, exits(), List.of());
        assertTrue(v.ok(), () -> v.summary("stopped", faults, "-"));
        assertEquals(1_000, v.recoveries().get(0).ms(), "from the SIGCONT at T0 + 3,000 to round 40 at T0 + 4,000");
    }

    @Test
    void shouldTakeTheFailoverOfAKillThatCameBeforeTheJobRecoveredFromAnEarlierOne() {
        // the first kill alone would be late (9,050 ms); a second kill 7,000 ms after it, before the job applied a round
        // without the killed rank and within the first's bound, is what the job recovers from: measured from its SIGKILL
        final List<Injected> faults = List.of(
            new Injected(new Fault(0, 20_000, FaultKind.KILL_RELAY, new int[] {2}, 1_050), T0 + 3_950 - 9_000, T0 + 5_000),
            new Injected(new Fault(1, 27_000, FaultKind.KILL_WORKER, new int[] {2}, 1_050), T0 + 3_950 - 2_000, T0 + 5_000));
        final Verdict v = CHECKER.check(clean(), faults, exits(), List.of());
        assertTrue(v.ok(), () -> v.summary("two kills", faults, "-"));
        assertEquals("superseded", v.recoveries().get(0).outcome());
        final Recovery second = v.recoveries().stream().filter(r -> r.fault().index() == 1 && "failover".equals(r.measure()))
            .findFirst().orElseThrow();
        assertEquals(2_050, second.ms(), "from the second SIGKILL to round 40");
    }

    /**
     * Garbage that ends as a kill begins (seed 4501: the sprayer stopped in the same millisecond as a kill of two ranks),
     * and the job applies no round for 9 s: the kill's failover is late, and so is that time, but it is the kill's, not
     * the garbage's. The job-level resume after the garbage is superseded by the kill, as a failover is by a later kill;
     * before, the same stall was counted twice.
     */
    @Test
    void shouldChargeAStallAfterGarbageThatEndsAtAKillToTheKillOnly() {
        final Map<Integer, List<String>> h = clean();
        for (final List<String> lines : h.values()) {
            for (int i = 0; i < lines.size(); i++) {
                final HistoryEvent e = HistoryEvent.parse(lines.get(i));
                if (e.timeMs() > T0 + 3_950) {
                    lines.set(i, lines.get(i).replace("t=" + e.timeMs(), "t=" + (e.timeMs() + 9_000)));
                }
            }
        }
        final List<Injected> faults = new ArrayList<>(kill());
        faults.add(new Injected(new Fault(1, 10_000, FaultKind.GARBAGE, new int[] {0}, 3_000), T0 + 950, T0 + 3_950));
        final Verdict v = CHECKER.check(h, faults, exits(), List.of());
        onlyBroken(v, Property.RECOVERED_IN_BOUND);
        assertEquals(1, v.violations(Property.RECOVERED_IN_BOUND).size(), v.violations(Property.RECOVERED_IN_BOUND).toString());
        assertTrue(v.violations(Property.RECOVERED_IN_BOUND).get(0).contains("failover took 9050 ms"),
            v.violations(Property.RECOVERED_IN_BOUND).toString());
        final Recovery resume = v.recoveries().stream().filter(r -> r.fault().index() == 1).findFirst().orElseThrow();
        assertEquals("superseded", resume.outcome(), v.recoveries().toString());

        // a kill after the resume's bound ran out (8.5 s after the garbage's end) does not excuse the stall before it
        final List<Injected> later = List.of(
            new Injected(new Fault(0, 20_000, FaultKind.KILL_WORKER, new int[] {2}, 1_050), T0 + 12_450, T0 + 13_500),
            new Injected(new Fault(1, 10_000, FaultKind.GARBAGE, new int[] {0}, 3_000), T0 + 950, T0 + 3_950));
        final Verdict w = CHECKER.check(h, later, exits(), List.of());
        onlyBroken(w, Property.RECOVERED_IN_BOUND);
        assertEquals(1, w.violations(Property.RECOVERED_IN_BOUND).size(), w.violations(Property.RECOVERED_IN_BOUND).toString());
        assertTrue(w.violations(Property.RECOVERED_IN_BOUND).get(0).contains("resume took 9050 ms"),
            w.violations(Property.RECOVERED_IN_BOUND).toString());
    }

    @Test
    void shouldFailAFailoverThatNeverCameInAJobThatFailedNotCallItAfterTheEnd() {
        // the job stops at the kill (every worker's rounds from 40 on gone) and every process exits 1: the failover never
        // came; in a job that ended well the same history's missing rounds would be after its end
        final Map<Integer, List<String>> h = clean();
        for (final List<String> lines : h.values()) {
            lines.removeIf(l -> {
                final HistoryEvent e = HistoryEvent.parse(l);
                return !HistoryEvent.START.equals(e.type()) && e.timeMs() > T0 + 3_950;
            });
        }
        final Verdict v = CHECKER.check(h, kill(), Map.of(0, 1, 1, 1, 2, 1), List.of());
        assertFalse(v.held(Property.RECOVERED_IN_BOUND), v.violations(Property.RECOVERED_IN_BOUND).toString());
        assertTrue(v.violations(Property.RECOVERED_IN_BOUND).get(0).contains("failover never came"),
            v.violations(Property.RECOVERED_IN_BOUND).toString());
        assertFalse(v.held(Property.IDENTICAL_END));
    }

    @Test
    void shouldFailWhenAWorkerNeverAppliesAgainAfterALossBurst() {
        final Map<Integer, List<String>> h = clean();
        h.get(1).removeIf(l -> {
            final HistoryEvent e = HistoryEvent.parse(l);
            return HistoryEvent.APPLIED.equals(e.type()) && e.round() >= 5;
        });
        final List<Injected> burst = List.of(new Injected(new Fault(0, 1_000, FaultKind.LOSS, new int[] {1}, 1_000), T0, T0 + 1_000));
        final Verdict v = CHECKER.check(h, burst, exits(), List.of());
        assertFalse(v.held(Property.RECOVERED_IN_BOUND), v.violations(Property.RECOVERED_IN_BOUND).toString());
        assertTrue(v.violations(Property.RECOVERED_IN_BOUND).get(0).contains("resume of worker 1 never came"),
            v.violations(Property.RECOVERED_IN_BOUND).toString());
    }

    @Test
    void shouldNotCountARecoveryCutShortByALaterKillOfTheSameWorker() {
        // a loss burst at worker 2 ends at T0 + 3,900, and worker 2 is killed at T0 + 3,950 before it applies again
        final Map<Integer, List<String>> h = clean();
        replace(h, 2, "t=" + (T0 + 3_902), "t=" + (T0 + 3_800));
        final List<Injected> faults = new ArrayList<>(kill());
        faults.add(new Injected(new Fault(1, 10_000, FaultKind.LOSS, new int[] {2}, 1_000), T0 + 2_900, T0 + 3_900));
        final Verdict v = CHECKER.check(h, faults, exits(), List.of());
        assertTrue(v.ok(), () -> v.summary("superseded", faults, "-"));
        assertEquals("superseded", v.recoveries().get(2).outcome());
    }

    @Test
    void shouldNotBlameALossBurstForAWorkerStillRejoiningButStillBlameItForTheOthers() {
        // worker 2's rejoin takes 21 s (its rounds from 60 on move by 20 s); a loss burst hits every worker while it rejoins
        final Map<Integer, List<String>> h = clean();
        final List<String> slow = new ArrayList<>();
        for (final String l : h.get(2)) {
            final HistoryEvent e = HistoryEvent.parse(l);
            slow.add(e.timeMs() > T0 + 5_000 ? l.replace("t=" + e.timeMs(), "t=" + (e.timeMs() + 20_000)) : l);
        }
        h.put(2, slow);
        final List<Injected> faults = new ArrayList<>(kill());
        faults.add(new Injected(new Fault(1, 25_000, FaultKind.LOSS, new int[] {0, 1, 2}, 1_000), T0 + 6_000, T0 + 7_000));
        final Verdict v = CHECKER.check(h, faults, exits(), List.of());
        assertTrue(v.ok(), () -> v.summary("rejoining", faults, "-"));
        assertEquals("superseded", v.recoveries().get(4).outcome(), v.recoveries().toString());
        // the others stall 10 s in the same burst: that is the burst's
        final Map<Integer, List<String>> stalled = clean();
        for (final int w : new int[] {0, 1}) {
            final List<String> late = new ArrayList<>();
            for (final String l : stalled.get(w)) {
                final HistoryEvent e = HistoryEvent.parse(l);
                late.add(e.timeMs() > T0 + 6_000 ? l.replace("t=" + e.timeMs(), "t=" + (e.timeMs() + 10_000)) : l);
            }
            stalled.put(w, late);
        }
        final Verdict stall = CHECKER.check(stalled, faults, exits(), List.of());
        assertEquals(2, stall.violations(Property.RECOVERED_IN_BOUND).size(), stall.violations(Property.RECOVERED_IN_BOUND).toString());
    }

    @Test
    void shouldFailWhenSomethingIsLeftBehind() {
        onlyBroken(CHECKER.check(clean(), kill(), exits(), List.of("/dev/shm/aeron-chaos-1-worker-2 (worker 2)")), Property.NOTHING_LEFT_BEHIND);
    }

    @Test
    void shouldRejectAMalformedLineNamingIt() {
        final IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> HistoryEvent.parse("t=5 w=1 applied r=3"));
        assertTrue(e.getMessage().contains("t=5 w=1 applied r=3"), e.getMessage());
    }
}
