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
        final long start = clock.read();
        for (int i = 0; i < 60; i++) { // 3 s of 50 ms ticks, as the daemon thread reads it
            source += 50 * MS;
            assertEquals(start + (i + 1) * 50 * MS, clock.read());
        }
        final long before = clock.read();
        source += 3_500 * MS; // the host stalled 3.5 s between two reads
        assertEquals(before + 200 * MS, clock.read(), "a stall counts as the longest step, not its length");
        assertEquals(3_300 * MS, clock.stalledNs());
        source += 200 * MS;
        assertEquals(before + 400 * MS, clock.read(), "a step of exactly the cap counts whole");
        assertEquals(3_300 * MS, clock.stalledNs());
    }

    @Test
    void shouldNeverGoBack() {
        final RunningClock clock = new RunningClock(() -> source, 200 * MS);
        long last = clock.read();
        final long[] steps = {10, 5_000, 0, 199, 201, 3_000, 1};
        for (final long step : steps) {
            source += step * MS;
            final long now = clock.read();
            assertTrue(now >= last, "step " + step + " ms: " + now + " < " + last);
            last = now;
        }
        source -= 100 * MS; // a source that went back is held where it was
        assertEquals(last, clock.read());
    }

    /** A 3 s silence judged on the running clock: a live server is not found dead across a host-wide stall of 3.5 s. */
    @Test
    void shouldNotCountAStallAsAServersSilence() {
        final RunningClock clock = new RunningClock(() -> source, RunningClock.MAX_STEP_NS);
        final long silence = TimeUnit.SECONDS.toNanos(3);
        final long lastFrame = clock.read();
        source += 100 * MS;
        clock.read();
        source += 3_500 * MS;
        assertTrue(clock.read() - lastFrame < silence, "3.6 s of wall time, 0.3 s of it running");
        for (int i = 0; i < 60; i++) {
            source += 50 * MS;
            clock.read();
        }
        assertTrue(clock.read() - lastFrame >= silence, "3 s more of running time");
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
        Thread.sleep(1_000); // five caps: without the daemon thread's reads the clock would advance 200 ms
        final long elapsed = RunningClock.INSTANCE.nanoTime() - first;
        assertTrue(elapsed > 400 * MS, "the process ran 1 s, its clock advanced only " + elapsed / MS + " ms");
    }
}
