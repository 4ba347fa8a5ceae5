package io.dlion.testkit.chaos;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The nemesis's plan: the same seed gives the same schedule, another seed another; the plan keeps the job survivable. */
class ChaosScheduleTest {

    private static ChaosSchedule.Context thirtyMinutes(final long seed) {
        return new ChaosSchedule.Context().workers(5).minVoters(2).durationMs(30 * 60_000L).meanGapMs(20_000).seed(seed);
    }

    @Test
    void shouldPlanTheSameScheduleFromTheSameSeed() {
        final List<Fault> a = new ChaosSchedule(thirtyMinutes(7)).plan();
        final List<Fault> b = new ChaosSchedule(thirtyMinutes(7)).plan();
        assertEquals(a, b);
        assertEquals(a.toString(), b.toString());
        assertNotEquals(a, new ChaosSchedule(thirtyMinutes(8)).plan());
    }

    /**
     * The plan keeps the quorum, names as the relay the rank that serves slice 0 by the failover rule (a plain scan written
     * here: a killed rank's slices go to the first rank from each slice that is in), and, now that a restarted rank serves
     * again, kills the relay and two ranks at once many times.
     */
    @Test
    void shouldKeepTheQuorumAndDrawEveryKindOften() {
        for (long seed = 1; seed <= 20; seed++) {
            final ChaosSchedule.Context ctx = thirtyMinutes(seed);
            final List<Fault> faults = new ChaosSchedule(ctx).plan();
            final Map<FaultKind, Integer> kinds = new EnumMap<>(FaultKind.class);
            final int[] owner = {0, 1, 2, 3, 4};
            final long[] outUntil = new long[5];
            long previous = -1;
            for (final Fault f : faults) {
                assertTrue(f.atMs() > previous && f.atMs() >= ctx.warmUpMs() && f.atMs() <= ctx.durationMs() - ctx.quietEndMs(), f.describe());
                previous = f.atMs();
                kinds.merge(f.kind(), 1, Integer::sum);
                if (f.kind() == FaultKind.KILL_RELAY) {
                    assertEquals(owner[0], f.targets()[0], "the relay is the rank serving slice 0 by the rule: " + f);
                }
                if (f.kind() == FaultKind.STOP) {
                    assertTrue(f.durationMs() > ctx.roundDeadlineMs() && f.durationMs() <= ctx.maxStopMs(), f.describe());
                    assertTrue(f.durationMs() < ctx.silenceMs(), "a stop shorter than the silence that finds a server dead: " + f.describe());
                }
                if (f.kind().kills() || f.kind() == FaultKind.STOP) {
                    for (final int w : f.targets()) {
                        assertTrue(outUntil[w] <= f.atMs(), "worker " + w + " is still out at " + f);
                        outUntil[w] = f.endMs() + (f.kind() == FaultKind.STOP ? ChaosSchedule.AFTER_STOP_MS : ctx.rejoinAllowanceMs());
                    }
                    if (f.kind().kills()) {
                        for (int slice = 0; slice < 5; slice++) {
                            final int served = owner[slice];
                            if (java.util.Arrays.stream(f.targets()).anyMatch(k -> k == served)) {
                                int r = slice;
                                while (outUntil[r] > f.atMs()) {
                                    r = (r + 1) % 5;
                                }
                                owner[slice] = r;
                            }
                        }
                    }
                    int out = 0;
                    for (final long u : outUntil) {
                        out += u > f.atMs() ? 1 : 0;
                    }
                    assertTrue(out <= 5 - ctx.minVoters(), "more workers out than the quorum allows at " + f);
                }
            }
            assertTrue(faults.size() >= 50, "seed " + seed + ": " + faults.size() + " faults in 30 minutes");
            for (final FaultKind k : FaultKind.values()) {
                assertTrue(kinds.getOrDefault(k, 0) >= 5, "seed " + seed + " draws " + k + " less than 5 times: " + kinds);
            }
        }
    }

    @Test
    void shouldRejectAStopThatCannotPassTheDeadline() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> new ChaosSchedule(new ChaosSchedule.Context().roundDeadlineMs(5_000).maxStopMs(4_000)));
        assertTrue(e.getMessage().contains("round deadline"), e.getMessage());
    }

    /** A stop must pass the round deadline and stay below the workers' silence, or a stopped server would be taken for dead. */
    @Test
    void shouldRejectAStopThatASilenceCannotHold() {
        final IllegalArgumentException tooShort = assertThrows(IllegalArgumentException.class,
            () -> new ChaosSchedule(new ChaosSchedule.Context().roundDeadlineMs(2_000).silenceMs(2_400)));
        assertTrue(tooShort.getMessage().contains("round deadline") && tooShort.getMessage().contains("--silence-ms"), tooShort.getMessage());
        final IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class,
            () -> new ChaosSchedule(new ChaosSchedule.Context().silenceMs(3_000).maxStopMs(3_000)));
        assertTrue(tooLong.getMessage().contains("silence"), tooLong.getMessage());
        assertEquals(2_500, new ChaosSchedule.Context().maxStopMs(), "by default a stop lasts at most 0.5 s less than the 3 s silence");
    }
}
