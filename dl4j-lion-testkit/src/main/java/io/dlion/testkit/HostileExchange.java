package io.dlion.testkit;

import java.util.Locale;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.TimeoutException;

import io.dlion.exchange.ExchangeCounters;
import io.dlion.vote.RoundResult;
import io.dlion.exchange.VoteExchange;

/**
 * A hostile member of the job, for robustness experiments (issue 6, item 7): it wraps a real exchange and
 * replaces the vote it submits by the inverted vote ({@link Mode#INVERT}: every valid bit flipped, i.e. it
 * votes against its own honest sign) or by random bits ({@link Mode#RANDOM}: each valid bit an independent
 * fair coin from a seeded generator). Bits past {@code paramCount} stay zero, as the packed layout of
 * {@link RoundResult} requires. The result it returns is the honest broadcast, so the hostile worker's own
 * model applies the same Delta as everyone else and all workers stay bit-identical.
 * <p>
 * Call order as for any {@link VoteExchange}: {@code submit(r) -> await(r)} for r = 0, 1, 2, ...
 */
public final class HostileExchange implements VoteExchange {
    /** What the hostile worker sends instead of its vote. */
    public enum Mode {
        /** The complement of the honest vote. */
        INVERT,
        /** Uniform random bits, independent of the data. */
        RANDOM;

        /** @return the mode for a command-line name ({@code invert} or {@code random}). */
        public static Mode parse(final String name) {
            switch (name.toLowerCase(Locale.ROOT)) {
                case "invert":
                    return INVERT;
                case "random":
                    return RANDOM;
                default:
                    throw new IllegalArgumentException("--hostile-mode must be invert or random, got '" + name + "'");
            }
        }

        /** @return the command-line name. */
        public String cliName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final VoteExchange delegate;
    private final Mode mode;
    private final SplittableRandom random;
    private long[] forged = new long[0];

    /**
     * @param delegate the real exchange the forged votes go to.
     * @param mode     invert or random.
     * @param seed     seed of the random bits (used by {@link Mode#RANDOM} only).
     */
    public HostileExchange(final VoteExchange delegate, final Mode mode, final long seed) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.mode = Objects.requireNonNull(mode, "mode");
        this.random = new SplittableRandom(seed);
    }

    public Mode mode() {
        return mode;
    }

    @Override
    public int workerId() {
        return delegate.workerId();
    }

    @Override
    public int workers() {
        return delegate.workers();
    }

    @Override
    public void submit(final long round, final long[] signWords, final long paramCount) {
        final int words = (int) ((paramCount + 63) >>> 6);
        if (forged.length != words) {
            forged = new long[words];
        }
        for (int w = 0; w < words; w++) {
            final long valid = validMask(paramCount, w);
            forged[w] = (mode == Mode.INVERT ? ~signWords[w] : random.nextLong()) & valid;
        }
        delegate.submit(round, forged, paramCount);
    }

    /**
     * @return the bits of word {@code w} that hold parameters below {@code paramCount} in the packed layout
     *     (parameter j: byte {@code (j >>> 3) & 7}, little-endian, bit {@code 7 - (j & 7)} of that byte).
     */
    static long validMask(final long paramCount, final int w) {
        final long first = (long) w << 6;
        final long inWord = Math.min(64, paramCount - first);
        if (inWord >= 64) {
            return -1L;
        }
        final int fullBytes = (int) (inWord >>> 3);
        long mask = fullBytes == 0 ? 0 : -1L >>> (64 - 8 * fullBytes);
        final int rest = (int) (inWord & 7);
        if (rest > 0) {
            final long partial = (0xFFL << (8 - rest)) & 0xFFL;
            mask |= partial << (8 * fullBytes);
        }
        return mask;
    }

    @Override
    public java.util.List<io.dlion.exchange.JoinNotice> takeJoinNotices() {
        return delegate.takeJoinNotices();
    }

    @Override
    public RoundResult await(final long round, final long timeoutMillis) throws TimeoutException, InterruptedException {
        return delegate.await(round, timeoutMillis);
    }

    @Override
    public ExchangeCounters counters() {
        return delegate.counters();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
