package io.dlion.dist;

import io.dlion.exchange.ExchangeCounters;
import io.dlion.exchange.RoundTimes;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoteRule;

/**
 * What one D-Lion worker's exchange did: the last round's voters, tie rate and this worker's alignment
 * with the result, and running totals. Written by the worker's training thread, read by listeners.
 * <p>
 * Alignment is {@code mean_j(delta_ij * Delta_j)} in [-1, 1]: 1 when the result is this worker's vote
 * everywhere, about 0 for a vote unrelated to the result. Ties (Delta = 0) count 0.
 */
public final class DLionStats {
    private final int workerId;
    private final ExchangeCounters counters;
    private final RoundTimes times = new RoundTimes();
    private volatile int lastVoters;
    private volatile double lastTieRate;
    private volatile double lastAlignment;
    private volatile long lastRoundNanos;
    private volatile long skippedSteps;
    private volatile long rounds;

    DLionStats(final int workerId, final ExchangeCounters counters) {
        this.workerId = workerId;
        this.counters = counters;
    }

    /** @return where this worker's rounds spend their time (compute, pack, wait, apply); see {@link RoundTimes} for when to read. */
    public RoundTimes times() {
        return times;
    }

    void onSkippedStep() {
        skippedSteps++;
    }

    void onRound(final RoundResult result, final long[] mine, final long nanos) {
        final long n = result.paramCount();
        lastVoters = result.voters();
        lastRoundNanos = nanos;
        rounds++;
        if (n == 0) {
            return;
        }
        if (result.rule() == VoteRule.MAJORITY) {
            final long[] sign = result.sign();
            final long[] tie = result.tie();
            long ties = 0;
            long disagree = 0;
            for (int w = 0; w < mine.length; w++) {
                final long t = tie == null ? 0L : tie[w];
                ties += Long.bitCount(t);
                disagree += Long.bitCount((mine[w] ^ sign[w]) & ~t);
            }
            final long agree = n - ties - disagree;
            lastTieRate = (double) ties / n;
            lastAlignment = (double) (agree - disagree) / n;
        } else {
            // sum_j s_j * Delta_j with s_j = 2*mine_j - 1 and Delta_j = (2 k_j - N) / N, from popcounts per bit plane,
            // segment by segment (N is the voter count of the segment; one segment but for a mid-round drop)
            final long[][] planes = result.countPlanes();
            final int segments = result.segmentCount();
            double sum = 0;
            long ties = 0;
            for (int s = 0; s < segments; s++) {
                final int from = result.segmentStartWord(s);
                final int to = Math.min(result.segmentEndWord(s), mine.length);
                final int voters = result.segmentVoters(s);
                final int used = Math.min(planes.length, VoteAggregator.planes(voters));
                long mineCount = 0;
                for (int w = from; w < to; w++) {
                    mineCount += Long.bitCount(mine[w]);
                }
                final long params = Math.min(n, (long) to << 6) - ((long) from << 6);
                final long sumS = 2 * mineCount - params;
                double sumSK = 0;
                for (int b = 0; b < used; b++) {
                    long both = 0;
                    long plane = 0;
                    for (int w = from; w < to; w++) {
                        both += Long.bitCount(mine[w] & planes[b][w]);
                        plane += Long.bitCount(planes[b][w]);
                    }
                    sumSK += (double) (1L << b) * (2 * both - plane);
                }
                if ((voters & 1) == 0) {
                    ties += countEqual(planes, used, voters / 2, from, to);
                }
                sum += segments == 1 ? 2 * sumSK - (double) voters * sumS : (2 * sumSK - (double) voters * sumS) / voters;
            }
            lastTieRate = (double) ties / n;
            lastAlignment = segments == 1 ? sum / ((double) result.voters() * n) : sum / n;
        }
    }

    private static long countEqual(final long[][] planes, final int used, final int k, final int from, final int to) {
        long count = 0;
        for (int w = from; w < to; w++) {
            long eq = -1L;
            for (int b = 0; b < used; b++) {
                eq &= ((k >>> b) & 1) != 0 ? planes[b][w] : ~planes[b][w];
            }
            count += Long.bitCount(eq);
        }
        return count;
    }

    public int workerId() {
        return workerId;
    }

    /** @return voters in the last round. */
    public int lastVoters() {
        return lastVoters;
    }

    /** @return fraction of parameters whose result was 0 (a tie) in the last round. */
    public double lastTieRate() {
        return lastTieRate;
    }

    /** @return mean(my vote * result) in the last round, in [-1, 1]. */
    public double lastAlignment() {
        return lastAlignment;
    }

    /** @return time of the last round (pack, send, wait, receive), in nanoseconds. */
    public long lastRoundNanos() {
        return lastRoundNanos;
    }

    /** @return steps dropped because their group of batches was smaller than the number of workers. */
    public long skippedSteps() {
        return skippedSteps;
    }

    /** @return rounds completed. */
    public long rounds() {
        return rounds;
    }

    /** @return bytes this worker sent, as counted by its exchange. */
    public long bytesUp() {
        return counters.bytesUp();
    }

    /** @return bytes this worker received, as counted by its exchange. */
    public long bytesDown() {
        return counters.bytesDown();
    }

    /** @return total time waiting for results, in nanoseconds. */
    public long waitNanos() {
        return counters.waitNanos();
    }
}
