package io.dlion.testkit;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import io.aeron.ExclusivePublication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bounded waits of the system tests: for a publication to connect, for a counter to reach a value. */
public final class Await {
    private Await() {
    }

    /**
     * Wait up to 10 s for a publication to connect.
     *
     * @param publication the publication.
     * @throws InterruptedException when interrupted.
     */
    public static void awaitConnected(final ExclusivePublication publication) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!publication.isConnected()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not connected: " + publication.channel());
            }
            Thread.sleep(1);
        }
    }

    /**
     * Wait up to 10 s for a condition to hold, and assert it.
     *
     * @param condition checked every millisecond.
     * @param what      names the condition in the failure message.
     * @throws InterruptedException when interrupted.
     */
    public static void awaitTrue(final BooleanSupplier condition, final String what) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertTrue(condition.getAsBoolean(), what);
    }

    /**
     * Wait up to 10 s for a counter to reach a value, then 20 ms more (so that an overshoot shows), and assert it.
     *
     * @param value    reads the counter.
     * @param expected the value it must end at.
     * @param what     names the counter in the failure message.
     * @throws InterruptedException when interrupted.
     */
    public static void awaitValue(final LongSupplier value, final long expected, final String what) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (value.getAsLong() < expected && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        Thread.sleep(20);
        assertEquals(expected, value.getAsLong(), what);
    }
}
