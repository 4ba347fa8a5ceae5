package io.dlion.job;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeoutException;

import io.dlion.dist.DLion;
import io.dlion.dist.DLionAccumulator;
import io.dlion.dist.DLionCheckpoint;
import io.dlion.dist.JobRun;
import io.dlion.dist.LocalSteps;
import io.dlion.exchange.JoinNotice;
import io.dlion.exchange.RejoinRequiredException;
import io.dlion.exchange.VoteExchange;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;

/**
 * One worker of a Distributed Lion training job: a user's model, the worker's shard of the data and its end of the
 * vote, trained for a number of epochs, with rejoin, checkpoints and resume.
 * <pre>{@code
 * try (DLionJob job = DLionJob.builder(net, myShard, exchange).epochs(10).roundsPerEpoch(468)
 *         .checkpoints(Path.of("ckpt"), 100).handOver(new DirectoryHandOver(Path.of("/shared/sync"))).build()) {
 *     job.fit();
 * }
 * }</pre>
 * Every step is one round of Algorithm 1: the model's {@code fit(batch)} computes the gradient, its Lion updaters
 * write the vote, the exchange returns the result every worker applies. Between steps the job hands its parameters
 * to a worker that rejoins when the server names it the donor, and writes its checkpoint every K rounds.
 * <p>
 * With local steps ({@link Builder#localSteps}, H > 1) a round is an outer step: H batches trained locally, then one
 * vote on their pseudo-gradient. Epochs, {@code roundsPerEpoch} and the skipped batches of a resume or rejoin then count
 * steps (batches), and an outer step may span the end of an epoch; hand-overs and checkpoints happen only between
 * outer steps (a checkpoint every K outer rounds). When the job's steps are not a multiple of H, its last outer step is
 * shorter ({@link DLionAccumulator#finishOuterStep()}), so that every worker ends with the same parameters.
 * <p>
 * Epochs: the job runs {@code roundsPerEpoch} rounds per epoch, the same number on every worker (a synchronous job
 * cannot let one worker stop early). The iterator is {@code reset()} before every epoch (when it supports reset); a
 * job that starts later (resume, rejoin) resets it once for every epoch it skips and skips the batches of the rounds
 * already done in the current epoch, so an iterator whose order depends only on how often it was reset gives the
 * same batches as in the run that never stopped. DL4J's {@link TrainingListener}s on the model see every iteration
 * (from {@code fit}) and {@code onEpochStart}/{@code onEpochEnd}, and the model's epoch count advances, as in
 * {@code MultiLayerNetwork.fit(DataSetIterator)}.
 * <p>
 * Call order: {@link #builder} → {@link Builder#build()} (binds D-Lion, or resumes/rejoins) → {@link #fit()} or
 * {@link #fitEpoch()} repeatedly → {@link #close()}. One thread trains the job.
 */
public final class DLionJob implements AutoCloseable {
    private final Model model;
    private final DataSetIterator shard;
    private final VoteExchange exchange;
    private final DLionAccumulator accumulator;
    private final int epochs;
    private final int roundsPerEpoch;
    private final HandOver handOver;
    private final Path checkpointDir;
    private final int checkpointEvery;
    private final Listener listener;
    private final JobRun run;
    private final long roundTimeoutMillis;
    private final int rejoinAttempts;
    private final RoundHistory history;
    private final List<JoinNotice> pendingNotices = new ArrayList<>();
    private int epoch;
    private int firstStep;

    /** What a job reports while it trains; every method runs on the training thread. */
    public interface Listener {
        /**
         * After every round.
         *
         * @param job   the job.
         * @param score the model's score of the batch just trained.
         */
        default void onRound(final DLionJob job, final double score) {
        }

        /**
         * After the last round of an epoch.
         *
         * @param job   the job.
         * @param epoch the epoch just finished, 1-based.
         */
        default void onEpochEnd(final DLionJob job, final int epoch) {
        }

        /**
         * A rejoin, a hand-over, a resume: one line for a person to read (also while the job is being built).
         *
         * @param message what happened.
         */
        default void onEvent(final String message) {
            System.getLogger(DLionJob.class.getName()).log(System.Logger.Level.INFO, message);
        }
    }

    private DLionJob(final Builder b, final DLionAccumulator accumulator) {
        this.model = accumulator.model();
        this.shard = b.shard;
        this.exchange = b.exchange;
        this.accumulator = accumulator;
        this.epochs = b.epochs;
        this.roundsPerEpoch = b.roundsPerEpoch;
        this.handOver = b.handOver;
        this.checkpointDir = b.checkpointDir;
        this.checkpointEvery = b.checkpointEvery;
        this.listener = b.listener;
        this.run = b.run;
        this.roundTimeoutMillis = b.roundTimeoutMillis;
        this.rejoinAttempts = b.rejoinAttempts;
        this.history = b.history;
        if (history != null) {
            accumulator.observeRounds(history);
        }
        final long start = accumulator.step();
        this.epoch = (int) (start / roundsPerEpoch) + 1;
        this.firstStep = (int) (start % roundsPerEpoch);
        for (int e = 1; e < epoch && e <= epochs; e++) {
            resetShard();
        }
    }

    /**
     * @param model    a MultiLayerNetwork or ComputationGraph with {@link io.dlion.Lion} on every trainable layer, its
     *                 parameters the same on every worker (same seed); a resumed or rejoining worker's model is replaced
     *                 by the checkpoint's ({@link #model()}).
     * @param shard    this worker's share of the training data, in batches of the per-worker batch size.
     * @param exchange this worker's end of the vote (in-process or Aeron); for a rejoin, an exchange created to join.
     * @return a builder.
     */
    public static Builder builder(final Model model, final DataSetIterator shard, final VoteExchange exchange) {
        return new Builder(model, shard, exchange);
    }

    /** @return the model this job trains (after a resume or rejoin: the one restored from the checkpoint). */
    public Model model() {
        return model;
    }

    /** @return the accumulator, for its round and statistics. */
    public DLionAccumulator accumulator() {
        return accumulator;
    }

    /** @return this worker's exchange. */
    public VoteExchange exchange() {
        return exchange;
    }

    /** @return the round the next step votes in (= rounds completed by the job). */
    public long round() {
        return accumulator.round();
    }

    /** @return the epoch the next step belongs to, 1-based ({@code epochs() + 1} when done). */
    public int epoch() {
        return epoch;
    }

    /** @return epochs the job trains. */
    public int epochs() {
        return epochs;
    }

    /** @return the steps the job has taken (= {@link #round()} with H = 1). */
    public long step() {
        return accumulator.step();
    }

    /** @return rounds per epoch (steps per epoch with local steps), the same on every worker. */
    public int roundsPerEpoch() {
        return roundsPerEpoch;
    }

    /** @return true when every epoch is done. */
    public boolean done() {
        return epoch > epochs;
    }

    /**
     * Train every remaining epoch.
     *
     * @return the trained model.
     */
    public Model fit() {
        while (fitEpoch()) {
            continue;
        }
        return model;
    }

    /**
     * Train the rest of the current epoch.
     *
     * @return true when more epochs remain.
     */
    public boolean fitEpoch() {
        if (done()) {
            return false;
        }
        resetShard();
        for (int s = 0; s < firstStep; s++) {
            nextBatch(s);
        }
        final List<TrainingListener> dl4jListeners = new ArrayList<>(listeners());
        for (final TrainingListener l : dl4jListeners) {
            l.onEpochStart(model);
        }
        long rejoinedAt = -1;
        for (int s = firstStep; s < roundsPerEpoch; s++) {
            final DataSet batch = nextBatch(s);
            try {
                if (model instanceof MultiLayerNetwork) {
                    ((MultiLayerNetwork) model).fit(batch);
                } else {
                    ((ComputationGraph) model).fit(batch);
                }
            } catch (final RuntimeException ex) {
                final RejoinRequiredException lost = rejoinRequired(ex);
                if (lost == null) {
                    throw ex;
                }
                rejoin(lost);
                // the round the job goes on with: later in this epoch (skip the batches of the rounds in between), or later
                final long next = accumulator.step() - (long) (epoch - 1) * roundsPerEpoch;
                if (next >= roundsPerEpoch) {
                    rejoinedAt = accumulator.step();
                    break;
                }
                for (int k = s + 1; k < next; k++) {
                    nextBatch(k);
                }
                s = (int) next - 1;
                continue;
            }
            listener.onRound(this, model.score());
            betweenRounds();
        }
        for (final TrainingListener l : dl4jListeners) {
            l.onEpochEnd(model);
        }
        endEpoch(true);
        if (done()) {
            accumulator.finishOuterStep();
        }
        if (rejoinedAt >= 0) {
            // rejoined in a later epoch: the epochs in between are skipped, their shard resets counted as a resume does
            while (epoch <= rejoinedAt / roundsPerEpoch && !done()) {
                resetShard();
                endEpoch(false);
            }
            firstStep = (int) (rejoinedAt % roundsPerEpoch);
        }
        return !done();
    }

    private void endEpoch(final boolean trained) {
        if (model instanceof MultiLayerNetwork) {
            ((MultiLayerNetwork) model).incrementEpochCount();
        } else {
            ((ComputationGraph) model).incrementEpochCount();
        }
        firstStep = 0;
        if (trained) {
            if (history != null) {
                history.epochEnd(epoch, accumulator.round(), model.params());
            }
            listener.onEpochEnd(this, epoch);
        }
        epoch++;
    }

    /**
     * This worker's round result was lost: take a live worker's parameters and go on, with at most {@code rejoinAttempts}
     * attempts, each reported (none when it is 0: rejoin is off).
     *
     * @throws IllegalStateException saying why, when the job cannot rejoin or no attempt succeeded.
     */
    private void rejoin(final RejoinRequiredException lost) {
        final int id = exchange.workerId();
        if (rejoinAttempts == 0) {
            throw new IllegalStateException("worker " + id + " cannot rejoin the job: rejoin is off (rejoinAttempts=0); "
                + lost.getMessage(), lost);
        }
        if (handOver == null) {
            throw new IllegalStateException("worker " + id + " cannot rejoin the job: it has no hand-over to take a live worker's"
                + " parameters with (DLionJob.Builder.handOver); " + lost.getMessage(), lost);
        }
        Exception last = lost;
        for (int attempt = 1; attempt <= rejoinAttempts; attempt++) {
            listener.onEvent(String.format("worker %d: rejoin attempt %d of %d: %s", id, attempt, rejoinAttempts, last.getMessage()));
            try {
                handOver.prepareTake();
                exchange.rejoin();
                final DLionCheckpoint donated = take(handOver, exchange, roundTimeoutMillis, run, listener);
                donated.rejoinInto(accumulator);
                if (history != null) {
                    history.joined(accumulator.round(), donated.workerId());
                }
                listener.onEvent(String.format("worker %d took worker %d's parameters of round %d (momentum zero)", id,
                    donated.workerId(), accumulator.round()));
                return;
            } catch (final UnsupportedOperationException ex) {
                throw new IllegalStateException("worker " + id + " cannot rejoin the job: " + ex.getMessage() + "; " + lost.getMessage(), lost);
            } catch (final IOException | TimeoutException | RuntimeException ex) {
                last = ex;
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("worker " + id + ": interrupted while rejoining", ex);
            }
        }
        throw new IllegalStateException("worker " + id + " could not rejoin the job in " + rejoinAttempts + " attempts (after: "
            + lost.getMessage() + "); the last one failed: " + last.getMessage(), last);
    }

    /**
     * Wait for the server's notice naming this joining worker, then for its donor's hand-over.
     *
     * @return the donor's checkpoint, checked to be of this run.
     */
    private static DLionCheckpoint take(final HandOver handOver, final VoteExchange exchange, final long timeoutMillis, final JobRun run,
        final Listener listener) throws IOException, TimeoutException, InterruptedException {
        final int id = exchange.workerId();
        final JoinNotice notice = exchange.awaitJoin(timeoutMillis);
        if (notice.donor() < 0) {
            throw new IllegalStateException("worker " + id + ": the server named no live worker to take the parameters from");
        }
        listener.onEvent(String.format("worker %d rejoins at round %d: waiting for worker %d's parameters (%s)", id, notice.round(),
            notice.donor(), handOver));
        final DLionCheckpoint donated = handOver.take(notice, timeoutMillis, exchange::pollIdle);
        run.check("hand-over from worker " + notice.donor(), donated.run());
        if (donated.round() != notice.round()) {
            throw new IllegalStateException("worker " + id + ": the hand-over from worker " + notice.donor() + " is of round "
                + donated.round() + ", the server named round " + notice.round());
        }
        return donated;
    }

    private static RejoinRequiredException rejoinRequired(final Throwable ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof RejoinRequiredException) {
                return (RejoinRequiredException) t;
            }
        }
        return null;
    }

    private void resetShard() {
        if (shard.resetSupported()) {
            shard.reset();
        }
    }

    private DataSet nextBatch(final int step) {
        if (!shard.hasNext()) {
            throw new IllegalStateException("worker " + exchange.workerId() + ": its shard ended after " + step + " of "
                + roundsPerEpoch + " rounds of epoch " + epoch + "; every worker must give roundsPerEpoch batches per epoch");
        }
        return shard.next();
    }

    private java.util.Collection<TrainingListener> listeners() {
        return model instanceof MultiLayerNetwork ? ((MultiLayerNetwork) model).getListeners() : ((ComputationGraph) model).getListeners();
    }

    /** Between rounds: hand the parameters to a rejoining worker if this one is its donor; write the checkpoint. */
    private void betweenRounds() {
        final long round = accumulator.round();
        if (handOver != null) {
            handOver.doWork();
        }
        pendingNotices.addAll(exchange.takeJoinNotices());
        if (!accumulator.atOuterBoundary()) {
            return;
        }
        for (final Iterator<JoinNotice> it = pendingNotices.iterator(); it.hasNext();) {
            final JoinNotice n = it.next();
            final int id = exchange.workerId();
            if (n.donor() != id) {
                it.remove();
            } else if (handOver == null) {
                listener.onEvent(String.format("worker %d: worker %d rejoins and this worker is its donor, but has no hand-over",
                    id, n.worker()));
                it.remove();
            } else if (n.round() == round) {
                try {
                    final String where = handOver.give(n, accumulator);
                    listener.onEvent(String.format("worker %d handed worker %d the parameters of round %d: %s", id, n.worker(), round,
                        where));
                } catch (final IOException e) {
                    listener.onEvent(String.format("worker %d: hand-over to worker %d failed: %s", id, n.worker(), e.getMessage()));
                }
                it.remove();
            } else if (n.round() < round) {
                listener.onEvent(String.format("worker %d: missed the hand-over to worker %d at round %d (now at %d)", id, n.worker(),
                    n.round(), round));
                it.remove();
            }
        }
        if (checkpointEvery > 0 && round % checkpointEvery == 0) {
            DLionCheckpoint.write(checkpointOf(checkpointDir, exchange.workerId()), model, accumulator, run);
        }
    }

    /**
     * @param dir    a checkpoint directory.
     * @param worker a worker id.
     * @return the file of that worker's checkpoint in that directory.
     */
    public static Path checkpointOf(final Path dir, final int worker) {
        return dir.resolve("worker-" + worker + ".zip");
    }

    /** Unbind the model and close the exchange. */
    @Override
    public void close() {
        accumulator.close();
    }

    /** Settings of a {@link DLionJob}; {@link #build()} validates them once, naming the field. */
    public static final class Builder {
        /** Default of {@link #rejoinAttempts(int)}. */
        public static final int REJOIN_ATTEMPTS_DEFAULT = 3;

        private final Model model;
        private final DataSetIterator shard;
        private final VoteExchange exchange;
        private int epochs = 1;
        private int roundsPerEpoch;
        private long roundTimeoutMillis = DLion.DEFAULT_ROUND_TIMEOUT_MILLIS;
        private HandOver handOver;
        private boolean rejoin;
        private Path checkpointDir;
        private int checkpointEvery;
        private boolean resume;
        private JobRun run = JobRun.UNNAMED;
        private int rejoinAttempts = REJOIN_ATTEMPTS_DEFAULT;
        private RoundHistory history;
        private LocalSteps localSteps = LocalSteps.none();
        private Listener listener = new Listener() {
        };

        private Builder(final Model model, final DataSetIterator shard, final VoteExchange exchange) {
            this.model = Objects.requireNonNull(model, "model");
            this.shard = Objects.requireNonNull(shard, "shard");
            this.exchange = Objects.requireNonNull(exchange, "exchange");
        }

        /**
         * @param epochs epochs to train, counting from the job's start (a resumed job trains the rest), >= 1.
         * @return this for a fluent API.
         */
        public Builder epochs(final int epochs) {
            this.epochs = epochs;
            return this;
        }

        /**
         * @param rounds rounds (batches) per epoch, the same on every worker; default: the batches the shard gives in
         *               one pass, counted when the job is built.
         * @return this for a fluent API.
         */
        public Builder roundsPerEpoch(final int rounds) {
            this.roundsPerEpoch = rounds;
            return this;
        }

        /**
         * @param millis the longest a step waits for its round's result (e.g. while the server restarts).
         * @return this for a fluent API.
         */
        public Builder roundTimeoutMillis(final long millis) {
            this.roundTimeoutMillis = millis;
            return this;
        }

        /**
         * @param handOver how this worker hands its parameters to a worker that rejoins (when the server names it the
         *                 donor), and how it takes a donor's when it rejoins itself; null: it cannot donate.
         * @return this for a fluent API.
         */
        public Builder handOver(final HandOver handOver) {
            this.handOver = handOver;
            return this;
        }

        /**
         * @param rejoin this worker restarts in a running job: wait for the server's notice of its first round and its
         *               donor, take the donor's parameters through the {@link #handOver} and continue from them with zero
         *               momentum (its old momentum belongs to parameters the job has left).
         * @return this for a fluent API.
         */
        public Builder rejoin(final boolean rejoin) {
            this.rejoin = rejoin;
            return this;
        }

        /**
         * @param dir   directory of this worker's checkpoint {@code worker-<id>.zip} (parameters, momentum, round).
         * @param every write it every this many rounds (0: never, only {@link #resume} reads it).
         * @return this for a fluent API.
         */
        public Builder checkpoints(final Path dir, final int every) {
            this.checkpointDir = dir;
            this.checkpointEvery = every;
            return this;
        }

        /**
         * @param resume start from this worker's checkpoint (the whole job restarted after every process stopped; the
         *               exchange must accept votes from the checkpoint's round on).
         * @return this for a fluent API.
         */
        public Builder resume(final boolean resume) {
            this.resume = resume;
            return this;
        }

        /**
         * @param run the job id and run id this worker's checkpoints carry; a resume refuses a checkpoint of another
         *            job or run, naming both (default {@link JobRun#UNNAMED}). Give the hand-over the same.
         * @return this for a fluent API.
         */
        public Builder run(final JobRun run) {
            this.run = Objects.requireNonNull(run, "run");
            return this;
        }

        /**
         * @param attempts how often the job tries to rejoin, each time it must (a round result lost mid-job), or at its
         *                 start with {@link #rejoin(boolean) rejoin(true)}, before it fails saying why; >= 0 (default
         *                 {@value #REJOIN_ATTEMPTS_DEFAULT}). 0: rejoin is off, a lost round result fails the job at once
         *                 (its {@link #handOver} still serves a rejoining worker as donor).
         * @return this for a fluent API.
         */
        public Builder rejoinAttempts(final int attempts) {
            this.rejoinAttempts = attempts;
            return this;
        }

        /**
         * @param history where the job logs every round it applies, its joins and a digest of its parameters at each epoch's
         *                end, for a checker of the whole run; null (the default): no history. The caller closes it.
         * @return this for a fluent API.
         */
        public Builder history(final RoundHistory history) {
            this.history = history;
            return this;
        }

        /**
         * @param local H local steps per vote and the outer step's settings (default: per-step D-Lion, H = 1); a resume
         *              or rejoin must use the H of the checkpoint or donor.
         * @return this for a fluent API.
         */
        public Builder localSteps(final LocalSteps local) {
            this.localSteps = Objects.requireNonNull(local, "localSteps");
            return this;
        }

        /**
         * @param listener what the job reports (rounds, epochs, events).
         * @return this for a fluent API.
         */
        public Builder listener(final Listener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Validate, then bind D-Lion to the model, resume it from its checkpoint, or rejoin the running job (this
         * waits for the server's notice and the donor's hand-over).
         *
         * @return the job, ready to {@link DLionJob#fit()}.
         * @throws IOException          when a checkpoint or hand-over cannot be read.
         * @throws TimeoutException     when a rejoin's notice or hand-over did not come within the round timeout.
         * @throws InterruptedException when interrupted while waiting.
         */
        public DLionJob build() throws IOException, TimeoutException, InterruptedException {
            require(epochs >= 1, "epochs must be >= 1, got " + epochs);
            require(roundsPerEpoch >= 0, "roundsPerEpoch must be >= 1, got " + roundsPerEpoch);
            require(roundTimeoutMillis > 0, "roundTimeoutMillis must be > 0, got " + roundTimeoutMillis);
            require(checkpointEvery >= 0, "checkpointEvery must be >= 0, got " + checkpointEvery);
            require(checkpointEvery == 0 || checkpointDir != null, "checkpoints need a directory");
            require(!resume || checkpointDir != null, "resume needs the checkpoint directory");
            require(!(rejoin && resume), "rejoin and resume exclude each other: rejoin takes a live donor's parameters, resume this"
                + " worker's own checkpoint");
            require(!rejoin || handOver != null, "rejoin needs a handOver (where the donor's parameters come from)");
            require(rejoinAttempts >= 0, "rejoinAttempts must be >= 0, got " + rejoinAttempts);
            require(!rejoin || rejoinAttempts >= 1, "rejoin needs rejoinAttempts >= 1, got " + rejoinAttempts);
            localSteps.conclude();
            if (handOver != null) {
                handOver.bind(exchange);
            }
            if (roundsPerEpoch == 0) {
                roundsPerEpoch = countBatches();
                require(roundsPerEpoch >= 1, "the shard gives no batch");
            }
            final DLionAccumulator acc;
            if (rejoin) {
                acc = rejoin();
            } else if (resume) {
                final DLionCheckpoint own = DLionCheckpoint.read(checkpointOf(checkpointDir, exchange.workerId()));
                run.check("checkpoint " + own.file(), own.run());
                acc = own.resume(exchange, roundTimeoutMillis, localSteps);
                listener.onEvent(String.format("worker %d resumed from %s at round %d", exchange.workerId(), own.file(), acc.round()));
            } else {
                acc = DLionAccumulator.forModel(model, exchange, roundTimeoutMillis, localSteps);
            }
            return new DLionJob(this, acc);
        }

        /** The exchange was created to join: take a donor's parameters, trying again (a new join) up to rejoinAttempts times. */
        private DLionAccumulator rejoin() throws IOException, TimeoutException, InterruptedException {
            final int id = exchange.workerId();
            for (int attempt = 1;; attempt++) {
                try {
                    if (attempt > 1) {
                        handOver.prepareTake();
                        exchange.rejoin();
                    }
                    final DLionCheckpoint donated = take(handOver, exchange, roundTimeoutMillis, run, listener);
                    final DLionAccumulator acc = donated.rejoin(DLionCheckpoint.Momentum.ZERO, null, exchange, roundTimeoutMillis, localSteps);
                    if (history != null) {
                        history.joined(acc.round(), donated.workerId());
                    }
                    listener.onEvent(String.format("worker %d took worker %d's parameters of round %d (momentum zero)", id,
                        donated.workerId(), acc.round()));
                    return acc;
                } catch (final IOException | TimeoutException | RuntimeException ex) {
                    if (attempt >= rejoinAttempts || ex instanceof UnsupportedOperationException || ex instanceof IllegalArgumentException) {
                        throw ex;
                    }
                    listener.onEvent(String.format("worker %d: join attempt %d of %d failed (%s); joining again", id, attempt, rejoinAttempts,
                        ex.getMessage()));
                }
            }
        }

        private int countBatches() {
            if (shard.resetSupported()) {
                shard.reset();
            }
            int n = 0;
            while (shard.hasNext()) {
                shard.next();
                n++;
            }
            shard.reset();
            return n;
        }

        private static void require(final boolean ok, final String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }
    }
}
