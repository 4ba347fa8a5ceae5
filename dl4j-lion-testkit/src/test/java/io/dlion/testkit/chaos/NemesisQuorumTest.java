package io.dlion.testkit.chaos;

import java.util.Arrays;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The nemesis kills or stops only while the quorum of workers holding the job's parameters stays: those the last round
 * counted, minus the fault's targets, the workers stopped now and the workers killed since that round (seed 4403's
 * nemesis counted workers that were rejoining, killed the last one with parameters, and the job could not go on).
 */
class NemesisQuorumTest {
    /** Round 13,652 applied at t = 1,000 ms, counting workers 1, 2 and 3 (mask 0b1110). */
    private static final HistoryEvent LAST = HistoryEvent.parse("t=1000 w=1 applied r=13652 d=08e121cf v=3 m=e");

    @Test
    void shouldCountTheVotersOfTheLastRoundThatAreNotTargets() {
        assertEquals(3, LAST.voters());
        assertEquals(3, ChaosRun.remaining(LAST, new int[0], never(4), new boolean[4]));
        assertEquals(2, ChaosRun.remaining(LAST, new int[] {3}, never(4), new boolean[4]));
        assertEquals(2, ChaosRun.remaining(LAST, new int[] {0, 3}, never(4), new boolean[4]), "worker 0 was not counted");
    }

    @Test
    void shouldNotCountAWorkerKilledSinceTheLastRoundOrStoppedNow() {
        final long[] killedAtMs = never(4);
        killedAtMs[1] = 1_500; // killed (and restarted) after the round: it is joining, with no parameters
        killedAtMs[2] = 500; // killed before the round and counted in it: it has rejoined
        assertEquals(2, ChaosRun.remaining(LAST, new int[0], killedAtMs, new boolean[4]));
        assertEquals(1, ChaosRun.remaining(LAST, new int[] {2}, killedAtMs, new boolean[4]),
            "seed 4403: killing rank 2 would leave rank 3 alone with parameters");
        final boolean[] stopped = new boolean[4];
        stopped[3] = true;
        assertEquals(1, ChaosRun.remaining(LAST, new int[0], killedAtMs, stopped));
    }

    private static long[] never(final int workers) {
        final long[] killed = new long[workers];
        Arrays.fill(killed, Long.MIN_VALUE);
        return killed;
    }
}
