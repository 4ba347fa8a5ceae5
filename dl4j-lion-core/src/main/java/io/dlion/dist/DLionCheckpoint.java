package io.dlion.dist;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Objects;
import java.util.Properties;

import io.dlion.exchange.VoteExchange;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.updater.BaseMultiLayerUpdater;
import org.deeplearning4j.util.ModelSerializer;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * One D-Lion worker's state between two rounds, in one file: DL4J's model zip ({@link ModelSerializer}, with
 * the updater state, i.e. this worker's Lion momentum {@code m}) plus an entry {@value #ENTRY} holding the
 * round the worker votes in next and the {@link JobRun} (job id and run id) it belongs to. Parameters are the same on
 * every worker; the momentum is each worker's own.
 * <p>
 * With local steps ({@link LocalSteps}, H > 1) a checkpoint is taken only between outer steps: its {@code round} is the
 * outer round voted next, the entry also holds {@code localSteps} (H; absent in older files: 1), and a second entry
 * {@value #OUTER_ENTRY} holds the worker's outer momentum (the Lion updaters' state in the model zip is the inner
 * optimizer's, kept across outer steps). A resume must use the same H.
 * <p>
 * Uses, between steps (never while the model is inside {@code fit}):
 * <ul>
 *   <li><b>Resume a whole job</b>: every worker writes its checkpoint at the same round R
 *       ({@link #write(Path, Model, DLionAccumulator)}); after a restart each worker reads its own and continues
 *       with {@link #resume(VoteExchange, long)}: parameters, momentum and round exactly as they were, so the
 *       continued run is bit-identical to one that never stopped.</li>
 *   <li><b>Rejoin</b>: a restarted or late worker takes a checkpoint another worker (e.g. worker 0) wrote at the
 *       job's current round R and continues with {@link #rejoin(Momentum, DLionCheckpoint, VoteExchange, long)}:
 *       the donor's parameters (so every worker is bit-identical again), a momentum chosen by {@link Momentum},
 *       and its next vote in round R.</li>
 * </ul>
 * Files are written to a temporary file and moved into place, so a crash while writing leaves the previous
 * checkpoint intact.
 */
public final class DLionCheckpoint {
    /**
     * Zip entry with the D-Lion fields ({@code format}, {@code round}, {@code worker}, {@code workers}, {@code model},
     * {@code job}, {@code run}, and with local steps {@code localSteps}).
     */
    public static final String ENTRY = "dlion-checkpoint.properties";
    /** Zip entry with the outer momentum of a worker with local steps (ND4J's binary array format). */
    public static final String OUTER_ENTRY = "dlion-outer-momentum.bin";
    /** Version of the {@link #ENTRY} fields: 2 added {@code job} and {@code run}; version 1 files read as {@link JobRun#UNNAMED}. */
    public static final int FORMAT = 2;

    /** The momentum a rejoining worker starts with. */
    public enum Momentum {
        /**
         * m = 0, as a fresh worker: its first votes are the signs of its own gradients. Default: the worker's
         * old momentum belongs to parameters the job has left, and the donor's belongs to another shard of the
         * data (copying it would make two workers vote alike for about 1 / (1 - beta2) rounds).
         */
        ZERO,
        /** The momentum saved in the worker's own (older) checkpoint: its own data, but as of that older round. */
        OWN,
        /** The donor's momentum, as saved. */
        DONOR
    }

    private final Path file;
    private final long round;
    private final int workerId;
    private final int workers;
    private final boolean graph;
    private final JobRun run;
    private final int localSteps;

    private DLionCheckpoint(final Path file, final long round, final int workerId, final int workers, final boolean graph, final JobRun run,
        final int localSteps) {
        this.localSteps = localSteps;
        this.file = file;
        this.round = round;
        this.workerId = workerId;
        this.workers = workers;
        this.graph = graph;
        this.run = run;
    }

    /**
     * Write a worker's checkpoint of a job that has no job or run id ({@link JobRun#UNNAMED}).
     *
     * @param file        where to write (replaced atomically if it exists).
     * @param model       the worker's model (MultiLayerNetwork or ComputationGraph).
     * @param accumulator the worker's accumulator ({@link DLionAccumulator#forModel}), for its round and worker id.
     * @return the checkpoint written.
     */
    public static DLionCheckpoint write(final Path file, final Model model, final DLionAccumulator accumulator) {
        return write(file, model, accumulator, JobRun.UNNAMED);
    }

    /**
     * Write a worker's checkpoint: call between steps, on the thread that trains the model.
     *
     * @param file        where to write (replaced atomically if it exists).
     * @param model       the worker's model (MultiLayerNetwork or ComputationGraph).
     * @param accumulator the worker's accumulator ({@link DLionAccumulator#forModel}), for its round and worker id.
     * @param run         the job and run the state belongs to.
     * @return the checkpoint written.
     */
    public static DLionCheckpoint write(final Path file, final Model model, final DLionAccumulator accumulator, final JobRun run) {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(run, "run");
        Objects.requireNonNull(model, "model");
        final DLionWorker worker = accumulator.single();
        if (!worker.atOuterBoundary()) {
            throw new IllegalStateException("a checkpoint is taken between outer steps only: worker " + worker.exchange().workerId()
                + " is at step " + worker.step() + ", inside outer round " + worker.round() + " (localSteps=" + worker.local().steps() + ")");
        }
        final int h = worker.local().steps();
        final boolean graph = isGraph(model);
        final Path dir = file.toAbsolutePath().getParent();
        try {
            Files.createDirectories(dir);
            final Path tmp = Files.createTempFile(dir, file.getFileName().toString(), ".tmp");
            try {
                ModelSerializer.writeModel(model, tmp.toFile(), true);
                final Properties p = new Properties();
                p.setProperty("format", Integer.toString(FORMAT));
                p.setProperty("round", Long.toString(worker.round()));
                p.setProperty("worker", Integer.toString(worker.exchange().workerId()));
                p.setProperty("workers", Integer.toString(worker.exchange().workers()));
                p.setProperty("model", graph ? "ComputationGraph" : "MultiLayerNetwork");
                p.setProperty("job", Integer.toString(run.jobId()));
                p.setProperty("run", run.runId());
                if (h > 1) {
                    p.setProperty("localSteps", Integer.toString(h));
                }
                try (FileSystem zip = FileSystems.newFileSystem(tmp)) {
                    try (OutputStream out = Files.newOutputStream(zip.getPath(ENTRY))) {
                        p.store(out, "D-Lion worker checkpoint");
                    }
                    if (h > 1) {
                        try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(zip.getPath(OUTER_ENTRY)))) {
                            Nd4j.write(worker.outerMomentum(), out);
                        }
                    }
                }
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } finally {
                Files.deleteIfExists(tmp);
            }
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot write D-Lion checkpoint " + file, e);
        }
        return new DLionCheckpoint(file, worker.round(), worker.exchange().workerId(), worker.exchange().workers(), graph, run, h);
    }

    /**
     * @param file a file written by {@link #write}.
     * @return the checkpoint (the model is restored on demand, a fresh copy each time).
     */
    public static DLionCheckpoint read(final Path file) {
        final Properties p = new Properties();
        try (FileSystem zip = FileSystems.newFileSystem(file)) {
            final Path entry = zip.getPath(ENTRY);
            if (!Files.exists(entry)) {
                throw new IllegalArgumentException(file + " is not a D-Lion checkpoint: no " + ENTRY + " entry");
            }
            try (InputStream in = Files.newInputStream(entry)) {
                p.load(in);
            }
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot read D-Lion checkpoint " + file, e);
        }
        final int format = Integer.parseInt(p.getProperty("format", "0"));
        if (format != FORMAT && format != 1) {
            throw new IllegalArgumentException(file + ": checkpoint format " + format + ", this version reads 1 and " + FORMAT);
        }
        final JobRun run = format == 1 ? JobRun.UNNAMED : new JobRun(Integer.parseInt(p.getProperty("job")), p.getProperty("run"));
        return new DLionCheckpoint(file, Long.parseLong(p.getProperty("round")), Integer.parseInt(p.getProperty("worker")),
            Integer.parseInt(p.getProperty("workers")), "ComputationGraph".equals(p.getProperty("model")), run,
            Integer.parseInt(p.getProperty("localSteps", "1")));
    }

    /** @return the round the worker votes in next. */
    public long round() {
        return round;
    }

    /** @return H, the local steps per vote of the job that wrote it (1: per-step D-Lion). */
    public int localSteps() {
        return localSteps;
    }

    /** @return the id of the worker that wrote it. */
    public int workerId() {
        return workerId;
    }

    /** @return the number of workers of the job. */
    public int workers() {
        return workers;
    }

    /** @return the file it was read from or written to. */
    public Path file() {
        return file;
    }

    /** @return the job and run the state belongs to. */
    public JobRun run() {
        return run;
    }

    /** @return a new model with the saved parameters and updater state (momentum). */
    public Model model() {
        try {
            return graph ? ModelSerializer.restoreComputationGraph(file.toFile(), true)
                : ModelSerializer.restoreMultiLayerNetwork(file.toFile(), true);
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot restore the model of D-Lion checkpoint " + file, e);
        }
    }

    /**
     * Resume this worker where its checkpoint left off: the saved parameters, momentum and round.
     *
     * @param exchange           this worker's exchange; it must accept votes from round {@link #round()} on.
     * @param roundTimeoutMillis the longest a step waits for a round's result.
     * @return the accumulator, set on the restored model ({@link DLionAccumulator#model()}).
     */
    public DLionAccumulator resume(final VoteExchange exchange, final long roundTimeoutMillis) {
        return resume(exchange, roundTimeoutMillis, LocalSteps.none());
    }

    /**
     * Resume this worker where its checkpoint left off: the saved parameters, momentum (inner and outer) and round.
     *
     * @param exchange           this worker's exchange; it must accept votes from round {@link #round()} on.
     * @param roundTimeoutMillis the longest a step waits for a round's result.
     * @param local              the job's local steps; H must be the checkpoint's.
     * @return the accumulator, set on the restored model ({@link DLionAccumulator#model()}).
     */
    public DLionAccumulator resume(final VoteExchange exchange, final long roundTimeoutMillis, final LocalSteps local) {
        checkWorker(exchange);
        checkLocalSteps(local);
        if (exchange.workerId() != workerId) {
            throw new IllegalArgumentException("checkpoint of worker " + workerId + " resumed as worker " + exchange.workerId()
                + ": use rejoin to take another worker's parameters");
        }
        final DLionAccumulator acc = attach(model(), exchange, roundTimeoutMillis, local);
        loadOuterMomentum(acc);
        return acc;
    }

    private void checkLocalSteps(final LocalSteps local) {
        Objects.requireNonNull(local, "localSteps");
        if (local.steps() != localSteps) {
            throw new IllegalArgumentException("checkpoint " + file + " was written with localSteps=" + localSteps + ", the job has localSteps="
                + local.steps());
        }
    }

    private void loadOuterMomentum(final DLionAccumulator acc) {
        if (localSteps <= 1) {
            return;
        }
        final INDArray target = acc.single().outerMomentum();
        try (FileSystem zip = FileSystems.newFileSystem(file);
             DataInputStream in = new DataInputStream(Files.newInputStream(zip.getPath(OUTER_ENTRY)))) {
            final INDArray saved = Nd4j.read(in);
            if (saved.length() != target.length()) {
                throw new IllegalArgumentException("checkpoint " + file + ": outer momentum of " + saved.length() + " values, the model has "
                    + target.length());
            }
            target.assign(saved.reshape(target.shape()));
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot read the outer momentum of D-Lion checkpoint " + file, e);
        }
    }

    /**
     * A worker (re)joins the job with this checkpoint's parameters, written by a donor worker at the job's
     * current round; its next vote is in {@link #round()}.
     *
     * @param momentum           the momentum policy.
     * @param own                the joining worker's own older checkpoint, for {@link Momentum#OWN} (else ignored, may be null).
     * @param exchange           the joining worker's exchange; it must accept votes from round {@link #round()} on.
     * @param roundTimeoutMillis the longest a step waits for a round's result.
     * @return the accumulator, set on the new model ({@link DLionAccumulator#model()}).
     */
    public DLionAccumulator rejoin(final Momentum momentum, final DLionCheckpoint own, final VoteExchange exchange, final long roundTimeoutMillis) {
        return rejoin(momentum, own, exchange, roundTimeoutMillis, LocalSteps.none());
    }

    /**
     * A worker (re)joins the job with this checkpoint's parameters, taken at an outer-step boundary; the momentum policy
     * applies to the inner (Lion updater) and the outer momentum alike.
     *
     * @param momentum           the momentum policy.
     * @param own                the joining worker's own older checkpoint, for {@link Momentum#OWN} (else ignored, may be null).
     * @param exchange           the joining worker's exchange; it must accept votes from round {@link #round()} on.
     * @param roundTimeoutMillis the longest a step waits for a round's result.
     * @param local              the job's local steps; H must be the checkpoint's.
     * @return the accumulator, set on the new model ({@link DLionAccumulator#model()}).
     */
    public DLionAccumulator rejoin(final Momentum momentum, final DLionCheckpoint own, final VoteExchange exchange, final long roundTimeoutMillis,
        final LocalSteps local) {
        Objects.requireNonNull(momentum, "momentum");
        checkWorker(exchange);
        checkLocalSteps(local);
        final Model model = model();
        final INDArray state = updaterState(model);
        switch (momentum) {
            case ZERO:
                if (state != null) {
                    state.assign(0);
                }
                break;
            case OWN:
                if (own == null) {
                    throw new IllegalArgumentException("Momentum.OWN needs the worker's own checkpoint");
                }
                if (own.round() > round) {
                    throw new IllegalArgumentException("own checkpoint is of round " + own.round() + ", newer than the donor's " + round);
                }
                final INDArray saved = updaterState(own.model());
                if (state != null && (saved == null || saved.length() != state.length())) {
                    throw new IllegalArgumentException("own checkpoint has another updater state size than the donor's model");
                }
                if (state != null) {
                    state.assign(saved);
                }
                break;
            default:
                break;
        }
        final DLionAccumulator acc = attach(model, exchange, roundTimeoutMillis, local);
        if (momentum == Momentum.DONOR) {
            loadOuterMomentum(acc);
        } else if (momentum == Momentum.OWN) {
            own.checkLocalSteps(local);
            own.loadOuterMomentum(acc);
        }
        return acc;
    }

    /**
     * A running worker whose round result was lost takes this checkpoint's parameters in place: its model (the one the
     * accumulator is bound to, which stays bound) gets the donor's parameters and zero momentum, and its next vote is in
     * {@link #round()}. Call between steps.
     *
     * @param accumulator the worker's accumulator, made by {@link DLionAccumulator#forModel}.
     * @throws IllegalArgumentException when the checkpoint's model has another parameter count.
     */
    public void rejoinInto(final DLionAccumulator accumulator) {
        checkLocalSteps(accumulator.localSteps());
        final Model target = accumulator.model();
        final Model donated = model();
        if (donated.numParams() != target.numParams()) {
            throw new IllegalArgumentException("checkpoint " + file + " holds " + donated.numParams() + " parameters, the model has "
                + target.numParams());
        }
        target.params().assign(donated.params());
        final INDArray state = updaterState(target);
        if (state != null) {
            state.assign(0);
        }
        accumulator.resumeAt(round);
        accumulator.single().zeroOuterMomentum();
    }

    private void checkWorker(final VoteExchange exchange) {
        Objects.requireNonNull(exchange, "exchange");
        if (exchange.workers() != workers) {
            throw new IllegalArgumentException("checkpoint of a job with " + workers + " workers, exchange has " + exchange.workers());
        }
    }

    private DLionAccumulator attach(final Model model, final VoteExchange exchange, final long roundTimeoutMillis, final LocalSteps local) {
        final DLionAccumulator acc = DLionAccumulator.forModel(model, exchange, roundTimeoutMillis, local);
        acc.resumeAt(round);
        return acc;
    }

    /** @return the model's flat updater state (Lion's momentum of every block), or null when it has none. */
    static INDArray updaterState(final Model model) {
        final BaseMultiLayerUpdater<?> updater = isGraph(model) ? ((ComputationGraph) model).getUpdater(true)
            : (BaseMultiLayerUpdater<?>) ((MultiLayerNetwork) model).getUpdater(true);
        return updater.getStateViewArray();
    }

    private static boolean isGraph(final Model model) {
        if (model instanceof ComputationGraph) {
            return true;
        }
        if (model instanceof MultiLayerNetwork) {
            return false;
        }
        throw new IllegalArgumentException("D-Lion checkpoints hold a MultiLayerNetwork or a ComputationGraph, got " + model.getClass().getName());
    }
}
