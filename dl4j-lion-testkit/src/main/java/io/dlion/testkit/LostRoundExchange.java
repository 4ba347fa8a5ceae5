package io.dlion.testkit;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeoutException;

import io.dlion.aeron.client.RejoinRequiredException;
import io.dlion.exchange.ExchangeCounters;
import io.dlion.exchange.JoinNotice;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.RoundResult;

/**
 * A worker that loses one round's result: it wraps the worker's real exchange and, in round {@code lostRound} only,
 * first stalls for {@code stallMillis} before it submits its vote (past the server's round deadline the server leaves
 * it out of the round and the others go on), then its await throws {@link RejoinRequiredException} as the real exchange
 * does when a frame of a later round arrives while its round's result is incomplete. Every other call, and every later
 * round (after the job rejoined), goes to the real exchange, so the job's rejoin runs on the real transport.
 * <p>
 * Call order as for any {@link VoteExchange}: {@code submit(r) -> await(r)} for r = 0, 1, 2, ...
 */
public final class LostRoundExchange implements VoteExchange {
    private final VoteExchange real;
    private final long lostRound;
    private final long stallMillis;
    private boolean lost;

    /**
     * @param real        the worker's real exchange.
     * @param lostRound   the round whose result is lost, once.
     * @param stallMillis how long the worker stalls before it submits that round's vote, 0 for not at all.
     */
    public LostRoundExchange(final VoteExchange real, final long lostRound, final long stallMillis) {
        this.real = Objects.requireNonNull(real, "real");
        this.lostRound = lostRound;
        this.stallMillis = stallMillis;
    }

    @Override
    public int workerId() {
        return real.workerId();
    }

    @Override
    public int workers() {
        return real.workers();
    }

    @Override
    public void submit(final long round, final long[] signWords, final long paramCount) {
        if (round == lostRound && !lost && stallMillis > 0) {
            try {
                Thread.sleep(stallMillis);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("worker " + real.workerId() + " interrupted while stalling in round " + round, e);
            }
        }
        real.submit(round, signWords, paramCount);
    }

    @Override
    public RoundResult await(final long round, final long timeoutMillis) throws TimeoutException, InterruptedException {
        if (round == lostRound && !lost) {
            lost = true;
            throw new RejoinRequiredException(round, real.workerId(), round + 1);
        }
        return real.await(round, timeoutMillis);
    }

    @Override
    public List<JoinNotice> takeJoinNotices() {
        return real.takeJoinNotices();
    }

    @Override
    public JoinNotice awaitJoin(final long timeoutMillis) throws TimeoutException, InterruptedException {
        return real.awaitJoin(timeoutMillis);
    }

    @Override
    public void rejoin() {
        real.rejoin();
    }

    @Override
    public int pollIdle() {
        return real.pollIdle();
    }

    @Override
    public ExchangeCounters counters() {
        return real.counters();
    }

    @Override
    public void close() {
        real.close();
    }
}
