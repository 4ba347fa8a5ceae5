package io.dlion.monitor;

import java.util.function.Function;

import io.aeron.Counter;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.client.WorkerCounters;
import io.dlion.dist.DLionStats;
import io.dlion.exchange.ExchangeCounters;
import io.dlion.exchange.RoundTimes;
import io.dlion.job.DLionJob;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;

/**
 * One worker's metrics, labelled {@code worker="<id>"}: rounds, bytes and wait time from its exchange's counters, the
 * last round's voters, tie rate and alignment from its {@link DLionStats}, the phases of every round (histograms), the
 * loss of the last batch, the test accuracy of the last epoch, and, on Aeron, the result frames it rejected, by reason.
 * <p>
 * Call order: {@link DLionMetrics#worker(int)} → {@link #bind(DLionJob)} (again after a rejoin, with the new job) →
 * rounds ({@link #onRound}, on the training thread) and epochs ({@link #onEpochEnd}, {@link #testAccuracy}) →
 * {@link #close()} before the job's exchange closes.
 */
public final class WorkerProbe extends DLionMetrics.Source implements DLionJob.Listener {
    private final int workerId;
    private final String label;
    private final DistributionDataPoint[] phases = new DistributionDataPoint[RoundTimes.Phase.values().length];
    private volatile DLionJob job;
    private volatile DLionStats stats;
    private volatile ExchangeCounters counters;
    private volatile WorkerCounters aeronCounters;
    private volatile double loss = Double.NaN;
    private volatile double accuracy = Double.NaN;
    private volatile int epochsDone;

    WorkerProbe(final DLionMetrics owner, final int workerId) {
        super(owner);
        this.workerId = workerId;
        this.label = Integer.toString(workerId);
        for (final RoundTimes.Phase p : RoundTimes.Phase.values()) {
            phases[p.ordinal()] = owner.phases().labelValues(label, p.label());
        }
    }

    /**
     * @param job this worker's job, built; its round times are observed from now on, and its counters read.
     * @return this.
     */
    public WorkerProbe bind(final DLionJob job) {
        if (job.exchange().workerId() != workerId) {
            throw new IllegalArgumentException("worker probe " + workerId + " bound to the job of worker " + job.exchange().workerId());
        }
        this.job = job;
        this.stats = job.accumulator().currentStats();
        this.counters = job.exchange().counters();
        this.aeronCounters = job.exchange() instanceof AeronVoteExchange ? ((AeronVoteExchange) job.exchange()).workerCounters() : null;
        stats.times().observer((phase, nanos) -> phases[phase.ordinal()].observe(nanos / 1e9));
        return this;
    }

    /** @return the worker's id. */
    public int workerId() {
        return workerId;
    }

    @Override
    public void onRound(final DLionJob job, final double score) {
        if (job != this.job) {
            bind(job);
        }
        loss = score;
    }

    @Override
    public void onEpochEnd(final DLionJob job, final int epoch) {
        epochsDone = epoch;
    }

    /**
     * @param epoch    the epoch evaluated, 1-based.
     * @param accuracy the test accuracy after it, in [0, 1].
     */
    public void testAccuracy(final int epoch, final double accuracy) {
        this.epochsDone = epoch;
        this.accuracy = accuracy;
    }

    @Override
    public void close() {
        final DLionStats s = stats;
        if (s != null) {
            s.times().observer(null);
        }
        super.close();
    }

    static void register(final DLionMetrics m) {
        m.counter("dlion_worker_rounds_total", "Rounds this worker completed (its exchange's count)",
            cb -> m.read(m.workers(), w -> {
                final ExchangeCounters c = w.counters;
                if (c != null) {
                    cb.call(c.rounds(), w.label);
                }
            }), "worker");
        m.counter("dlion_worker_sent_bytes_total", "Bytes of vote frames this worker sent, headers included, each frame once",
            cb -> m.read(m.workers(), w -> {
                final ExchangeCounters c = w.counters;
                if (c != null) {
                    cb.call(c.bytesUp(), w.label);
                }
            }), "worker");
        m.counter("dlion_worker_received_bytes_total", "Bytes of result frames this worker received, headers included, each frame once",
            cb -> m.read(m.workers(), w -> {
                final ExchangeCounters c = w.counters;
                if (c != null) {
                    cb.call(c.bytesDown(), w.label);
                }
            }), "worker");
        m.counter("dlion_worker_wait_seconds_total", "Time this worker waited for results",
            cb -> m.read(m.workers(), w -> {
                final ExchangeCounters c = w.counters;
                if (c != null) {
                    cb.call(c.waitNanos() / 1e9, w.label);
                }
            }), "worker");
        m.gauge("dlion_worker_round", "The round this worker votes in next (rounds of the job done, across restarts)",
            cb -> m.read(m.workers(), w -> {
                final DLionJob j = w.job;
                if (j != null) {
                    cb.call(j.round(), w.label);
                }
            }), "worker");
        m.gauge("dlion_worker_voters", "Workers whose votes made the last round's result",
            cb -> m.read(m.workers(), w -> {
                final DLionStats s = w.stats;
                if (s != null && s.rounds() > 0) {
                    cb.call(s.lastVoters(), w.label);
                }
            }), "worker");
        m.gauge("dlion_worker_tie_ratio", "Fraction of parameters whose last result was a tie (0)",
            cb -> m.read(m.workers(), w -> {
                final DLionStats s = w.stats;
                if (s != null && s.rounds() > 0) {
                    cb.call(s.lastTieRate(), w.label);
                }
            }), "worker");
        m.gauge("dlion_worker_vote_alignment", "mean(this worker's vote * result) of the last round, in [-1, 1]",
            cb -> m.read(m.workers(), w -> {
                final DLionStats s = w.stats;
                if (s != null && s.rounds() > 0) {
                    cb.call(s.lastAlignment(), w.label);
                }
            }), "worker");
        m.gauge("dlion_worker_train_loss", "The model's score (loss) of the last batch this worker trained",
            cb -> m.read(m.workers(), w -> {
                if (!Double.isNaN(w.loss)) {
                    cb.call(w.loss, w.label);
                }
            }), "worker");
        m.gauge("dlion_worker_epochs", "Epochs this worker finished",
            cb -> m.read(m.workers(), w -> cb.call(w.epochsDone, w.label)), "worker");
        m.gauge("dlion_worker_test_accuracy", "Test accuracy after the last epoch evaluated, in [0, 1]",
            cb -> m.read(m.workers(), w -> {
                if (!Double.isNaN(w.accuracy)) {
                    cb.call(w.accuracy, w.label);
                }
            }), "worker");
        m.counter("dlion_worker_frames_rejected_total", "Result frames this worker dropped, by reason (Aeron transport)",
            cb -> m.read(m.workers(), w -> {
                final WorkerCounters c = w.aeronCounters;
                if (c != null) {
                    cb.call(c.rejectedResults().get(), w.label, "malformed");
                    cb.call(c.staleResults().get(), w.label, "other-round");
                    cb.call(c.unprovenFrames().get(), w.label, "unproven-session");
                    cb.call(c.badMacFrames().get(), w.label, "bad-mac");
                }
            }), "worker", "reason");
        aeronCounter(m, "dlion_worker_images_refused_total", "Result images this worker refused: not proven in time, or a forged HELLO_ACK",
            WorkerCounters::refusedImages);
        aeronCounter(m, "dlion_worker_server_restarts_total", "Times a server came back with a new session and proved itself",
            WorkerCounters::serverReconnects);
        aeronCounter(m, "dlion_worker_slice_servers_lost_total", "Slice servers found dead; their slices moved to the next live rank",
            WorkerCounters::slicesMoved);
        aeronCounter(m, "dlion_worker_vote_offers_refused_total", "Vote offers the publication did not take (back pressure, not connected)",
            WorkerCounters::offersNotAccepted);
    }

    /** One of the worker's Aeron counters as a Prometheus counter, by worker (none for a worker without the transport). */
    private static void aeronCounter(final DLionMetrics m, final String name, final String help,
        final Function<WorkerCounters, Counter> counter) {
        m.counter(name, help, cb -> m.read(m.workers(), w -> {
            final WorkerCounters c = w.aeronCounters;
            if (c != null) {
                cb.call(counter.apply(c).get(), w.label);
            }
        }), "worker");
    }
}
