package io.dlion.exchange;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import io.dlion.vote.RoundResult;
import io.dlion.codec.DownlinkEncoding;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoteRule;
import io.dlion.vote.VoterSet;

/**
 * The aggregation server and N workers' exchanges in one JVM: what the Aeron transport does over the
 * network, without the network. Used by {@code ParallelWrapper} replicas and by tests.
 * <p>
 * A round completes when all N workers have voted, or, after the straggler wait, with the votes that
 * arrived (the result records who voted). A vote for a round that already completed is late: it is
 * counted, never mixed in, and its sender gets the completed result like everyone else. The result is
 * encoded with the down-link encoding a transport would send and decoded again, so the bytes counted
 * per worker are those of real encoded buffers: up {@code ceil(n/8)}, down the encoding's size.
 */
public final class InProcessVoteHub {
    private static final int KEPT_RESULTS = 8;

    private final int workers;
    private final VoteRule rule;
    private final long stragglerWaitMillis;
    private final Object lock = new Object();
    private final Map<Long, RoundResult> results = new LinkedHashMap<>();
    private final AtomicLong lateVotes = new AtomicLong();
    private final AtomicLong partialRounds = new AtomicLong();
    private long openRound = -1;
    private long completedUpTo = -1;
    private long[][] votes;
    private boolean[] voted;
    private int votedCount;
    private long paramCount;
    private long openedAtNanos;

    /**
     * @param workers             number of workers, 1 to {@link VoteAggregator#MAX_VOTERS}.
     * @param rule                majority vote or averaging.
     * @param stragglerWaitMillis how long a round waits for missing votes once the first one arrived.
     */
    public InProcessVoteHub(final int workers, final VoteRule rule, final long stragglerWaitMillis) {
        if (workers < 1 || workers > VoteAggregator.MAX_VOTERS) {
            throw new IllegalArgumentException("workers must be in [1, " + VoteAggregator.MAX_VOTERS + "], got " + workers);
        }
        if (stragglerWaitMillis <= 0) {
            throw new IllegalArgumentException("stragglerWaitMillis must be > 0, got " + stragglerWaitMillis);
        }
        this.workers = workers;
        this.rule = rule;
        this.stragglerWaitMillis = stragglerWaitMillis;
    }

    /** @return the exchange of worker {@code id}. */
    public VoteExchange exchange(final int id) {
        if (id < 0 || id >= workers) {
            throw new IllegalArgumentException("worker id must be in [0, " + workers + "), got " + id);
        }
        return new Exchange(id);
    }

    /** @return rounds that completed without every worker's vote (after the straggler wait). */
    public long partialRounds() {
        return partialRounds.get();
    }

    /** @return votes that arrived for a round that had already completed. */
    public long lateVotes() {
        return lateVotes.get();
    }

    public VoteRule rule() {
        return rule;
    }

    private void submit(final int worker, final long round, final long[] words, final long n) {
        synchronized (lock) {
            if (round <= completedUpTo) {
                lateVotes.incrementAndGet();
                return;
            }
            if (round != openRound) {
                if (openRound >= 0 && votedCount > 0) {
                    complete();
                }
                open(round, n);
            }
            if (n != paramCount) {
                throw new IllegalArgumentException("worker " + worker + " voted on " + n + " parameters, round " + round + " has " + paramCount);
            }
            if (voted[worker]) {
                throw new IllegalStateException("worker " + worker + " voted twice in round " + round);
            }
            System.arraycopy(words, 0, votes[worker], 0, votes[worker].length);
            voted[worker] = true;
            votedCount++;
            if (votedCount == workers) {
                complete();
            }
            lock.notifyAll();
        }
    }

    private void open(final long round, final long n) {
        final int words = (int) ((n + 63) >>> 6);
        if (votes == null || votes[0].length != words) {
            votes = new long[workers][words];
        }
        voted = new boolean[workers];
        votedCount = 0;
        openRound = round;
        paramCount = n;
        openedAtNanos = System.nanoTime();
    }

    private void complete() {
        if (votedCount < workers) {
            partialRounds.incrementAndGet();
        }
        final long[][] present = new long[votedCount][];
        final VoterSet mask = new VoterSet(workers);
        int k = 0;
        for (int i = 0; i < workers; i++) {
            if (voted[i]) {
                present[k++] = votes[i];
                mask.add(i);
            }
        }
        final int words = votes[0].length;
        final RoundResult result;
        if (rule == VoteRule.MAJORITY) {
            final long[] sign = new long[words];
            final long[] tie = (votedCount & 1) == 0 ? new long[words] : null;
            VoteAggregator.majority(present, votedCount, 0, words, sign, tie);
            result = RoundResult.majority(openRound, paramCount, votedCount, mask, sign, tie);
        } else {
            final long[][] planes = new long[VoteAggregator.planes(votedCount)][words];
            VoteAggregator.count(present, votedCount, 0, words, planes);
            result = RoundResult.average(openRound, paramCount, votedCount, mask, planes);
        }
        results.put(openRound, DownlinkEncoding.roundTrip(result));
        while (results.size() > KEPT_RESULTS) {
            results.remove(results.keySet().iterator().next());
        }
        completedUpTo = openRound;
        votedCount = 0;
        Arrays.fill(voted, false);
        openRound = -1;
    }

    private RoundResult await(final long round, final long timeoutMillis) throws TimeoutException, InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        synchronized (lock) {
            while (true) {
                final RoundResult r = results.get(round);
                if (r != null) {
                    return r;
                }
                final long now = System.nanoTime();
                if (round == openRound && votedCount > 0 && now - openedAtNanos >= TimeUnit.MILLISECONDS.toNanos(stragglerWaitMillis)) {
                    complete();
                    lock.notifyAll();
                    continue;
                }
                if (now >= deadline) {
                    throw new TimeoutException("no result for round " + round + " within " + timeoutMillis + " ms");
                }
                final long untilStraggler = round == openRound
                    ? openedAtNanos + TimeUnit.MILLISECONDS.toNanos(stragglerWaitMillis) - now : Long.MAX_VALUE;
                final long waitNanos = Math.max(1, Math.min(deadline - now, untilStraggler));
                TimeUnit.NANOSECONDS.timedWait(lock, waitNanos);
            }
        }
    }

    private final class Exchange implements VoteExchange {
        private final int id;
        private final ExchangeCounters counters = new ExchangeCounters();

        Exchange(final int id) {
            this.id = id;
        }

        @Override
        public int workerId() {
            return id;
        }

        @Override
        public int workers() {
            return workers;
        }

        @Override
        public void submit(final long round, final long[] signWords, final long paramCount) {
            InProcessVoteHub.this.submit(id, round, signWords, paramCount);
            counters.addBytesUp((paramCount + 7) >>> 3);
        }

        @Override
        public RoundResult await(final long round, final long timeoutMillis) throws TimeoutException, InterruptedException {
            final long start = System.nanoTime();
            final RoundResult r = InProcessVoteHub.this.await(round, timeoutMillis);
            counters.addBytesDown(DownlinkEncoding.encodedBytes(r));
            counters.addRound(System.nanoTime() - start);
            return r;
        }

        @Override
        public ExchangeCounters counters() {
            return counters;
        }

        @Override
        public void close() {
            // nothing to release: the hub owns the shared state
        }
    }
}
