package io.dlion.aeron.client;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RunningClock}: the time a process ran. Steps up to the cap count whole; a longer step (the process or its host
 * did not run) counts only the cap, so a worker's silence clock does not count a stall against a server.
 */
class RunningClockTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private long source = 1_000 * MS;

    @Test
    void shouldCountStepsUpToTheCapWholeAndOnlyTheCapOfALongerOne() {
        final RunningClock clock = new RunningClock(() -> source, 200 * MS);
        final long start = clock.nanoTime();
        for (int i = 0; i < 60; i++) { // 3 s of 50 ms ticks
            source += 50 * MS;
            clock.tick();
            assertEquals(start + (i + 1) * 50 * MS, clock.nanoTime());
        }
        final long before = clock.nanoTime();
        source += 3_500 * MS; // the host stalled 3.5 s between two ticks
        assertEquals(before + 200 * MS, clock.nanoTime(), "read before the daemon thread ticks again: capped, no jump");
        clock.tick();
        assertEquals(before + 200 * MS, clock.nanoTime(), "a stall counts as the longest step, not its length");
        assertEquals(3_300 * MS, clock.stalledNs());
        source += 200 * MS;
        clock.tick();
        assertEquals(before + 400 * MS, clock.nanoTime(), "a step of exactly the cap counts whole");
        assertEquals(3_300 * MS, clock.stalledNs());
    }

    @Test
    void shouldNeverGoBack() {
        final RunningClock clock = new RunningClock(() -> source, 200 * MS);
        long last = clock.nanoTime();
        final long[] steps = {10, 5_000, 0, 199, 201, 3_000, 1, 60, 700};
        for (int i = 0; i < steps.length; i++) {
            source += steps[i] * MS;
            if (i % 2 == 0) {
                clock.tick();
            }
            for (int read = 0; read < 2; read++) {
                final long now = clock.nanoTime();
                assertTrue(now >= last, "step " + steps[i] + " ms: " + now + " < " + last);
                last = now;
                clock.tick();
            }
        }
        source -= 100 * MS; // a source that went back is held where it was
        clock.tick();
        assertEquals(last, clock.nanoTime());
    }

    /** A 3 s silence judged on the running clock: a live server is not found dead across a host-wide stall of 3.5 s. */
    @Test
    void shouldNotCountAStallAsAServersSilence() {
        final RunningClock clock = new RunningClock(() -> source, RunningClock.MAX_STEP_NS);
        final long silence = TimeUnit.SECONDS.toNanos(3);
        final long lastFrame = clock.nanoTime();
        source += 100 * MS;
        clock.tick();
        source += 3_500 * MS;
        assertTrue(clock.nanoTime() - lastFrame < silence, "3.6 s of wall time, 0.3 s of it running");
        clock.tick();
        for (int i = 0; i < 60; i++) {
            source += 50 * MS;
            clock.tick();
        }
        assertTrue(clock.nanoTime() - lastFrame >= silence, "3 s more of running time");
    }

    @Test
    void shouldBeTheExchangesClockByDefault() {
        assertSame(RunningClock.INSTANCE, new AeronVoteExchange.Context().nanoClock());
        assertSame(RunningClock.INSTANCE, new AeronMeanExchange.Context().nanoClock());
    }

    @Test
    void shouldRefuseACapThatIsNotPositive() {
        assertThrows(IllegalArgumentException.class, () -> new RunningClock(() -> source, 0));
    }

    @Test
    void shouldKeepTheProcessClockMovingBetweenReads() throws InterruptedException {
        final long first = RunningClock.INSTANCE.nanoTime();
        Thread.sleep(1_000); // five caps: without the daemon thread's ticks the clock would advance 200 ms
        final long elapsed = RunningClock.INSTANCE.nanoTime() - first;
        assertTrue(elapsed > 400 * MS, "the process ran 1 s, its clock advanced only " + elapsed / MS + " ms");
    }
}
