package io.dlion.dist;

import java.util.Objects;
import java.util.function.IntFunction;

import io.dlion.exchange.InProcessVoteHub;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoteRule;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.parallelism.ParallelWrapper;
import org.deeplearning4j.parallelism.ParallelWrapper.TrainingMode;

/**
 * Turning Distributed Lion on, the DL4J way.
 * <pre>{@code
 * // one model per process (e.g. one per GPU host), exchange over Aeron or in-process:
 * DLion.attach(net, exchange);
 * net.fit(shardOfTrainingData);
 *
 * // N replicas in one JVM, like ParallelWrapper's SHARED_GRADIENTS but with 1-bit votes:
 * ParallelWrapper wrapper = DLion.parallelWrapper(net).workers(4).rule(VoteRule.MAJORITY).build();
 * wrapper.fit(trainingData);
 * }</pre>
 */
public final class DLion {
    /** Default longest wait for one round's result before the step fails. */
    public static final long DEFAULT_ROUND_TIMEOUT_MILLIS = 120_000;
    /** Default wait for missing votes once a round's first vote arrived (in-process hub). */
    public static final long DEFAULT_STRAGGLER_WAIT_MILLIS = 30_000;

    private DLion() {
    }

    /**
     * Plug D-Lion into one model.
     *
     * @param model    MultiLayerNetwork or ComputationGraph with {@link io.dlion.Lion} on every trainable layer.
     * @param exchange this worker's end of the vote.
     * @return the accumulator now set on the model (for its statistics).
     */
    public static DLionAccumulator attach(final Model model, final VoteExchange exchange) {
        return DLionAccumulator.forModel(model, exchange, DEFAULT_ROUND_TIMEOUT_MILLIS);
    }

    /**
     * Plug D-Lion into one model, voting every H steps on the pseudo-gradient of H local steps.
     *
     * @param model    MultiLayerNetwork or ComputationGraph with {@link io.dlion.Lion} on every trainable layer.
     * @param exchange this worker's end of the vote.
     * @param local    H and the outer step's settings.
     * @return the accumulator now set on the model (for its statistics).
     */
    public static DLionAccumulator attach(final Model model, final VoteExchange exchange, final LocalSteps local) {
        return DLionAccumulator.forModel(model, exchange, DEFAULT_ROUND_TIMEOUT_MILLIS, local);
    }

    /**
     * @param model the model to replicate; every trainable layer must use {@link io.dlion.Lion}.
     * @return a builder of a ParallelWrapper whose replicas exchange D-Lion votes.
     */
    public static ParallelBuilder parallelWrapper(final Model model) {
        return new ParallelBuilder(model);
    }

    /** Builds a {@link ParallelWrapper} in {@code TrainingMode.CUSTOM} with a {@link DLionAccumulator}. */
    public static final class ParallelBuilder {
        private final Model model;
        private int workers = 2;
        private VoteRule rule = VoteRule.MAJORITY;
        private long roundTimeoutMillis = DEFAULT_ROUND_TIMEOUT_MILLIS;
        private long stragglerWaitMillis = DEFAULT_STRAGGLER_WAIT_MILLIS;
        private int prefetchBuffer = 2;
        private IntFunction<VoteExchange> exchanges;
        private DLionAccumulator accumulator;

        ParallelBuilder(final Model model) {
            this.model = Objects.requireNonNull(model, "model");
        }

        /**
         * @param workers replicas, one thread each, 1 to {@link VoteAggregator#MAX_VOTERS}.
         * @return this for a fluent API.
         */
        public ParallelBuilder workers(final int workers) {
            this.workers = workers;
            return this;
        }

        /**
         * @param rule majority vote (default) or averaging.
         * @return this for a fluent API.
         */
        public ParallelBuilder rule(final VoteRule rule) {
            this.rule = rule;
            return this;
        }

        /**
         * @param millis longest wait for one round's result.
         * @return this for a fluent API.
         */
        public ParallelBuilder roundTimeoutMillis(final long millis) {
            this.roundTimeoutMillis = millis;
            return this;
        }

        /**
         * @param millis wait for missing votes once a round's first vote arrived (in-process hub only).
         * @return this for a fluent API.
         */
        public ParallelBuilder stragglerWaitMillis(final long millis) {
            this.stragglerWaitMillis = millis;
            return this;
        }

        /**
         * @param batches batches prefetched per worker.
         * @return this for a fluent API.
         */
        public ParallelBuilder prefetchBuffer(final int batches) {
            this.prefetchBuffer = batches;
            return this;
        }

        /**
         * @param exchanges worker id to exchange, e.g. Aeron clients; default: an in-process hub.
         * @return this for a fluent API.
         */
        public ParallelBuilder exchanges(final IntFunction<VoteExchange> exchanges) {
            this.exchanges = exchanges;
            return this;
        }

        /** @return the accumulator of the last {@link #build()}, for its statistics. */
        public DLionAccumulator accumulator() {
            return accumulator;
        }

        /** @return a ParallelWrapper ready to {@code fit}. */
        public ParallelWrapper build() {
            if (workers < 1 || workers > VoteAggregator.MAX_VOTERS) {
                throw new IllegalArgumentException("workers must be in [1, " + VoteAggregator.MAX_VOTERS + "], got " + workers);
            }
            if (rule == null) {
                throw new IllegalArgumentException("rule must not be null");
            }
            if (prefetchBuffer < 0) {
                throw new IllegalArgumentException("prefetchBuffer must be >= 0, got " + prefetchBuffer);
            }
            IntFunction<VoteExchange> source = exchanges;
            if (source == null) {
                final InProcessVoteHub hub = new InProcessVoteHub(workers, rule, stragglerWaitMillis);
                source = hub::exchange;
            }
            accumulator = DLionAccumulator.forReplicas(workers, source, roundTimeoutMillis);
            final ParallelWrapper wrapper = new ParallelWrapper.Builder<>(model)
                .workers(workers)
                .prefetchBuffer(prefetchBuffer)
                .trainingMode(TrainingMode.CUSTOM)
                .gradientsAccumulator(accumulator)
                .build();
            new ReplicaTrainerContext(accumulator).installIn(wrapper);
            return wrapper;
        }
    }
}
