package io.dlion.aeron;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.dlion.exchange.VoteExchange;
import io.dlion.testkit.NaiveVote;
import io.dlion.vote.VoteRule;
import org.agrona.concurrent.IdleStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The process's rounds in flight, counted from a worker's submit to the end of its await on a real job, and the media
 * driver's idle strategy that follows them: a round's start wakes it from a park, in a round it yields instead of
 * parking, between rounds and in a round stalled for longer than {@link RoundActivity#STALL_NS} it idles as it is told.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RoundActivityTest {
    private static final long PARAMS = 100_003;

    /** Counts its idles and parks for as long as it is told: the strategy between rounds. */
    private static final class Parking implements IdleStrategy {
        final AtomicLong idles = new AtomicLong();
        final long parkNs;

        Parking(final long parkNs) {
            this.parkNs = parkNs;
        }

        @Override
        public void idle(final int workCount) {
            if (workCount == 0) {
                idle();
            }
        }

        @Override
        public void idle() {
            idles.incrementAndGet();
            LockSupport.parkNanos(parkNs);
        }

        @Override
        public void reset() {
        }
    }

    @Test
    void shouldIdleAsToldBetweenRoundsAndYieldInOne() {
        final Parking between = new Parking(0);
        final IdleStrategy idle = RoundActivity.idleStrategy(between, 3);
        for (int i = 0; i < 10; i++) {
            idle.idle(0);
        }
        assertEquals(10, between.idles.get(), "no round in flight: every idle is the given strategy's");
        RoundActivity.begin();
        try {
            for (int i = 0; i < 10; i++) {
                idle.idle(0);
            }
            assertEquals(10, between.idles.get(), "a round in flight: spins and yields, never the given strategy");
        } finally {
            RoundActivity.end();
        }
        idle.idle(0);
        assertEquals(11, between.idles.get());
    }

    @Test
    void shouldBackOffInARoundThatMakesNoProgressAndYieldAgainOnceItDoes() throws InterruptedException {
        final Parking between = new Parking(0);
        final IdleStrategy idle = RoundActivity.idleStrategy(between, 0);
        RoundActivity.begin();
        try {
            idle.idle(0);
            assertEquals(0, between.idles.get(), "a round that just began is moving: the driver yields");
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(RoundActivity.STALL_NS) + 50);
            idle.idle(0);
            assertEquals(1, between.idles.get(), "no progress for longer than the stall time: the driver backs off as between rounds");
            RoundActivity.progress();
            idle.idle(0);
            assertEquals(1, between.idles.get(), "progress again: the driver yields again");
        } finally {
            RoundActivity.end();
        }
    }

    @Test
    void shouldWakeAThreadParkedBetweenRoundsWhenARoundStarts() throws Exception {
        assertEquals(0, RoundActivity.inFlight(), "no round in flight (a test before this one left one open), so the thread parks");
        final Parking between = new Parking(TimeUnit.SECONDS.toNanos(30));
        final IdleStrategy idle = RoundActivity.idleStrategy(between, 0);
        final AtomicLong wokenNs = new AtomicLong();
        final Thread driver = new Thread(() -> {
            idle.idle(0);   // parks for 30 s unless woken
            wokenNs.set(System.nanoTime());
        });
        driver.start();
        while (driver.isAlive() && driver.getState() != Thread.State.TIMED_WAITING) {
            Thread.sleep(1);
        }
        assertTrue(driver.isAlive(), "the thread parks between rounds");
        final long beginNs = System.nanoTime();
        RoundActivity.begin();
        try {
            driver.join(TimeUnit.SECONDS.toMillis(10));
            assertTrue(wokenNs.get() != 0, "the round's start woke the parked thread");
            assertTrue(wokenNs.get() - beginNs < TimeUnit.SECONDS.toNanos(5), "woken at once, not at the end of its 30 s park");
        } finally {
            RoundActivity.end();
        }
    }

    @Test
    void shouldRefuseTheEndOfARoundThatDidNotBegin() {
        final int before = RoundActivity.inFlight();
        for (int i = 0; i < before; i++) {
            RoundActivity.end();
        }
        try {
            assertThrows(IllegalStateException.class, RoundActivity::end);
            assertEquals(0, RoundActivity.inFlight());
        } finally {
            for (int i = 0; i < before; i++) {
                RoundActivity.begin();
            }
        }
    }

    /** Two workers of a real job over UDP: each submit counts, each await's end uncounts, with a result or a timeout. */
    @Test
    void shouldCountAWorkersRoundFromSubmitToTheEndOfItsAwait() throws Exception {
        try (LocalAeronJob job = LocalAeronJob.launch(new LocalAeronJob.Context().jobId(31).workers(2).paramCount(PARAMS)
            .rule(VoteRule.MAJORITY).transport(LocalAeronJob.Transport.UDP).roundTimeoutNs(TimeUnit.SECONDS.toNanos(30)))) {
            final VoteExchange first = job.exchange(0);
            final VoteExchange second = job.exchange(1);
            final int base = RoundActivity.inFlight();
            final long[][] votes = NaiveVote.randomVotes(5, 2, PARAMS);
            first.submit(0, votes[0], PARAMS);
            assertEquals(base + 1, RoundActivity.inFlight());
            second.submit(0, votes[1], PARAMS);
            assertEquals(base + 2, RoundActivity.inFlight());
            NaiveVote.assertMatches(votes, PARAMS, VoteRule.MAJORITY, first.await(0, 30_000));
            assertEquals(base + 1, RoundActivity.inFlight());
            second.await(0, 30_000);
            assertEquals(base, RoundActivity.inFlight());
            first.submit(1, votes[0], PARAMS);
            assertEquals(base + 1, RoundActivity.inFlight());
            assertThrows(TimeoutException.class, () -> first.await(1, 200), "the other worker never votes");
            assertEquals(base, RoundActivity.inFlight(), "a round that timed out is over for the idle strategies");
        }
    }
}
