package io.dlion.aeron.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import io.aeron.Aeron;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.JobContext;
import io.dlion.aeron.SliceEndpoint;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochClock;

/**
 * What a worker's exchange needs whatever its payload, on top of the job's shared settings ({@link JobContext}): the
 * Aeron client, this worker's id, the slice servers' endpoints ({@link SliceEndpoint}s: one for the star, one per rank
 * for the sharded topology), how long to wait for them, and the clocks and idle strategy of its waits. The vote
 * exchange's ({@link AeronVoteExchange.Context}) and the dense exchange's ({@link AeronMeanExchange.Context}) contexts
 * extend it; a {@link SliceLink} reads its slice's settings from here.
 *
 * @param <T> the concrete context, returned by the fluent setters.
 */
public abstract class ExchangeContext<T extends ExchangeContext<T>> extends JobContext<T> {
    Aeron aeron;
    int workerId = -1;
    List<SliceEndpoint> slices = new ArrayList<>();
    long connectTimeoutNs = TimeUnit.MILLISECONDS.toNanos(Configuration.connectTimeoutMs());
    int fragmentLimit = Configuration.fragmentLimit();
    long firstRound;
    EpochClock epochClock = SystemEpochClock.INSTANCE;
    IdleStrategy idleStrategy = new BackoffIdleStrategy(100, 10, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MICROSECONDS.toNanos(100));
    NanoClock nanoClock = RunningClock.INSTANCE;
    long resultBacklogBytes = RESULT_BACKLOG_BYTES_DEFAULT;
    long resultLostNs = RESULT_LOST_NS_DEFAULT;

    /** Default of {@link #resultBacklogBytes(long)}: 64 MiB. */
    public static final long RESULT_BACKLOG_BYTES_DEFAULT = 64L << 20;
    /** Default of {@link #resultLostNs(long)}: 10 s, twice the silence after which a slice server counts as dead. */
    public static final long RESULT_LOST_NS_DEFAULT = TimeUnit.SECONDS.toNanos(10);

    /** Only the exchanges' own contexts extend this class. */
    ExchangeContext() {
    }

    /**
     * Validate the shared and the exchange settings; without {@link #slices(List)} one slice on the {@link Configuration}
     * channels covers every parameter. A subclass calls this first, then checks that the slices cover the parameters on
     * its payload's chunk grid ({@link SliceEndpoint#checkCover}) and validates its own settings.
     *
     * @return this for a fluent API.
     * @throws IllegalArgumentException naming the field that is wrong.
     * @throws NullPointerException     naming the field that is null.
     */
    @Override
    public T conclude() {
        super.conclude();
        Objects.requireNonNull(aeron, "aeron");
        if (workerId < 0 || workerId >= workers()) {
            throw new IllegalArgumentException("workerId must be in [0, workers=" + workers() + "), got " + workerId);
        }
        if (slices.isEmpty()) {
            slices = List.of(SliceEndpoint.whole(Configuration.voteChannel(), Configuration.resultChannel()));
        }
        if (connectTimeoutNs <= 0) {
            throw new IllegalArgumentException("connectTimeoutNs must be > 0, got " + connectTimeoutNs);
        }
        if (fragmentLimit < 1) {
            throw new IllegalArgumentException("fragmentLimit must be >= 1, got " + fragmentLimit);
        }
        Objects.requireNonNull(idleStrategy, "idleStrategy");
        Objects.requireNonNull(nanoClock, "nanoClock");
        Objects.requireNonNull(epochClock, "epochClock");
        if (firstRound < 0) {
            throw new IllegalArgumentException("firstRound must be >= 0, got " + firstRound);
        }
        if (resultBacklogBytes < 0) {
            throw new IllegalArgumentException("resultBacklogBytes must be >= 0, got " + resultBacklogBytes);
        }
        if (resultLostNs <= 0) {
            throw new IllegalArgumentException("resultLostNs must be > 0, got " + resultLostNs);
        }
        return self();
    }

    /**
     * @param aeron client to add the publications, subscriptions and counters with; not closed by the exchange.
     * @return this for a fluent API.
     */
    public T aeron(final Aeron aeron) {
        this.aeron = aeron;
        return self();
    }

    /** @return the Aeron client. */
    public Aeron aeron() {
        return aeron;
    }

    /**
     * @param workerId this worker, in [0, workers).
     * @return this for a fluent API.
     */
    public T workerId(final int workerId) {
        this.workerId = workerId;
        return self();
    }

    /** @return this worker, in [0, workers). */
    public int workerId() {
        return workerId;
    }

    /**
     * @param slices the slice servers' channels and streams, covering [0, paramCount) in order, with slice bounds on the
     *               payload's chunk grid ({@link io.dlion.aeron.Topology#endpoints}); one endpoint for the star.
     * @return this for a fluent API.
     */
    public T slices(final List<SliceEndpoint> slices) {
        this.slices = new ArrayList<>(slices);
        return self();
    }

    /** @return the slice servers' channels and streams, empty before {@link #conclude()} for the defaults. */
    public List<SliceEndpoint> slices() {
        return slices;
    }

    /**
     * @param connectTimeoutNs how long the constructor waits for every slice's server to prove itself.
     * @return this for a fluent API.
     */
    public T connectTimeoutNs(final long connectTimeoutNs) {
        this.connectTimeoutNs = connectTimeoutNs;
        return self();
    }

    /** @return how long the constructor waits for every slice's server. */
    public long connectTimeoutNs() {
        return connectTimeoutNs;
    }

    /**
     * @param fragmentLimit fragments polled per slice per pass.
     * @return this for a fluent API.
     */
    public T fragmentLimit(final int fragmentLimit) {
        this.fragmentLimit = fragmentLimit;
        return self();
    }

    /** @return fragments polled per slice per pass. */
    public int fragmentLimit() {
        return fragmentLimit;
    }

    /**
     * @param idleStrategy used while waiting for the servers and their results.
     * @return this for a fluent API.
     */
    public T idleStrategy(final IdleStrategy idleStrategy) {
        this.idleStrategy = idleStrategy;
        return self();
    }

    /** @return used while waiting. */
    public IdleStrategy idleStrategy() {
        return idleStrategy;
    }

    /**
     * @param nanoClock for deadlines, HELLO repeats and the servers' silence (default {@link RunningClock#INSTANCE}: the
     *                  time this process ran, so that its own pauses do not count against a server).
     * @return this for a fluent API.
     */
    public T nanoClock(final NanoClock nanoClock) {
        this.nanoClock = nanoClock;
        return self();
    }

    /** @return for deadlines, HELLO repeats and the servers' silence. */
    public NanoClock nanoClock() {
        return nanoClock;
    }

    /**
     * @param firstRound the round this worker submits first (default 0): a worker that joins or restarts in a running
     *                   job starts at the job's round, which it learns with the parameters it resumes from.
     * @return this for a fluent API.
     */
    public T firstRound(final long firstRound) {
        this.firstRound = firstRound;
        return self();
    }

    /** @return the round this worker submits first. */
    public long firstRound() {
        return firstRound;
    }

    /**
     * @param epochClock for HELLO timestamps.
     * @return this for a fluent API.
     */
    public T epochClock(final EpochClock epochClock) {
        this.epochClock = epochClock;
        return self();
    }

    /** @return for HELLO timestamps. */
    public EpochClock epochClock() {
        return epochClock;
    }

    /**
     * @param resultBacklogBytes most bytes of result frames a worker reads off Aeron's log and keeps, over all slices, while
     *                           it cannot use them yet: a worker that joined at round R keeps the results of R and later
     *                           from its join until it has applied them (its donor's hand-over, the restore and the first
     *                           steps of a freshly started process take seconds), instead of leaving them in the log, where
     *                           they would hold back every worker's results. Beyond it frames stay in the log (the old
     *                           pacing; nothing is lost). 0 keeps none. Default {@link #RESULT_BACKLOG_BYTES_DEFAULT}: about
     *                           1,500 rounds of a 200,000-parameter model's ternary results.
     * @return this for a fluent API.
     */
    public T resultBacklogBytes(final long resultBacklogBytes) {
        this.resultBacklogBytes = resultBacklogBytes;
        return self();
    }

    /** @return most bytes of result frames kept while they cannot be used yet. */
    public long resultBacklogBytes() {
        return resultBacklogBytes;
    }

    /**
     * @param resultLostNs how long a slice's server, alive (the vote publication to it connected), may send nothing at all,
     *                     though this worker says HELLO every second, while this worker awaits the slice's result of a
     *                     round that another slice's later round shows the job has completed, before the result counts as
     *                     lost for good and the worker rejoins ({@link RejoinRequiredException}). Such a result went out
     *                     while this worker could not take it (a stopped process far behind) and lies past what the
     *                     sender still sends again: no later frame of the slice, nor an answer to a HELLO, gets past the
     *                     gap. Default {@link #RESULT_LOST_NS_DEFAULT}.
     * @return this for a fluent API.
     */
    public T resultLostNs(final long resultLostNs) {
        this.resultLostNs = resultLostNs;
        return self();
    }

    /** @return how long an awaited slice may be silent, its server alive, while the job is past the round, before its result counts as lost. */
    public long resultLostNs() {
        return resultLostNs;
    }

    @SuppressWarnings("unchecked")
    private T self() {
        return (T) this;
    }
}
