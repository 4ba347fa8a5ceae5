package io.dlion.spark;

import java.io.Serializable;
import java.util.Objects;

import io.dlion.aeron.Configuration;
import io.dlion.aeron.Topology;
import io.dlion.dist.DLion;
import io.dlion.dist.LocalSteps;
import io.dlion.exchange.VoteExchange;
import io.dlion.job.DLionJob;
import io.dlion.vote.VoteRule;

/**
 * Settings of a {@link DLionSparkTrainer}: what every barrier task trains and how the job survives a failed task.
 * Sent to the executors with the task, so everything here is serializable. {@link #conclude()} validates once,
 * naming the field; the trainer calls it.
 * <pre>{@code
 * DLionSparkOptions options = new DLionSparkOptions()
 *     .epochs(2).batchSizePerWorker(32)                     // every task: 2 epochs over its partition, 32 examples a step
 *     .checkpoints("/shared/dlion-ckpt", 100);               // a directory every executor reaches; a retried stage resumes
 * }</pre>
 */
public final class DLionSparkOptions implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Default worker-side bound on one round: a task whose server or peers are gone fails after this long. */
    public static final long ROUND_TIMEOUT_MILLIS_DEFAULT = DLion.DEFAULT_ROUND_TIMEOUT_MILLIS;
    /**
     * Default server deadline of a round: after it the servers go on with the tasks that voted (at least
     * {@link #minVoters(int)}), or abort the round and the stage fails.
     */
    public static final long SERVER_ROUND_TIMEOUT_MILLIS_DEFAULT = Configuration.ROUND_TIMEOUT_MS_DEFAULT;
    /** Default of {@link #rejoinAttempts(int)}: the job's ({@link DLionJob.Builder#REJOIN_ATTEMPTS_DEFAULT}). */
    public static final int REJOIN_ATTEMPTS_DEFAULT = DLionJob.Builder.REJOIN_ATTEMPTS_DEFAULT;
    /** The most tasks (workers) one job can have: the wire's worker ids and voter sets take 1,024 workers. */
    public static final int MAX_WORKERS = io.dlion.aeron.wire.MessageHeaderFlyweight.MAX_WORKERS;

    private int epochs = 1;
    private int batchSizePerWorker;
    private VoteRule rule = VoteRule.MAJORITY;
    private int jobId = 1;
    private String checkpointDir;
    private int checkpointEvery;
    private long roundTimeoutMillis = ROUND_TIMEOUT_MILLIS_DEFAULT;
    private long serverRoundTimeoutMillis = SERVER_ROUND_TIMEOUT_MILLIS_DEFAULT;
    private int votePort;
    private Topology.Kind topology = Topology.Kind.SHARDED;
    private boolean shuffle;
    private long seed;
    private ListenerFactory listenerFactory;
    private int metricsPort = -1;
    private String uiUrl;
    private long progressMillis = PROGRESS_MILLIS_DEFAULT;
    private int minVoters;
    private int rejoinAttempts = REJOIN_ATTEMPTS_DEFAULT;
    private ExchangeDecorator exchangeDecorator;
    private String partition;
    private long partitionSeed;
    private int localSteps = LocalSteps.STEPS_DEFAULT;
    private double outerLrScale = LocalSteps.OUTER_LR_SCALE_DEFAULT;
    private double outerBeta1 = LocalSteps.OUTER_BETA1_DEFAULT;
    private double outerBeta2 = LocalSteps.OUTER_BETA2_DEFAULT;
    private double outerWeightDecay = LocalSteps.OUTER_WEIGHT_DECAY_DEFAULT;

    /** Default interval of the driver's progress line. */
    public static final long PROGRESS_MILLIS_DEFAULT = 10_000;

    /**
     * Makes each task's {@link DLionJob.Listener} on the executor (a listener itself is not sent; a factory is).
     * Runs on the task's training thread.
     */
    @FunctionalInterface
    public interface ListenerFactory extends Serializable {
        /**
         * @param worker       the task's worker id (its partition index).
         * @param stageAttempt the barrier stage's attempt, 0 first; a retried stage has a higher one.
         * @return the listener of that task's job.
         */
        DLionJob.Listener create(int worker, int stageAttempt);
    }

    /**
     * Wraps a task's exchange, e.g. to inject a fault in a test: the job votes through what it returns. Runs on the
     * executor, once per task attempt.
     */
    @FunctionalInterface
    interface ExchangeDecorator extends Serializable {
        /**
         * @param exchange     the task's Aeron exchange.
         * @param worker       the task's worker id.
         * @param stageAttempt the barrier stage's attempt, 0 first.
         * @return the exchange the task's job uses.
         */
        VoteExchange wrap(VoteExchange exchange, int worker, int stageAttempt);
    }

    /**
     * Validate once.
     *
     * @return this for a fluent API.
     * @throws IllegalArgumentException naming the field that is wrong.
     */
    public DLionSparkOptions conclude() {
        require(epochs >= 1, "epochs must be >= 1, got " + epochs);
        require(batchSizePerWorker >= 1, "batchSizePerWorker must be >= 1, got " + batchSizePerWorker);
        Objects.requireNonNull(rule, "rule");
        require(checkpointEvery >= 0, "checkpointEvery must be >= 0, got " + checkpointEvery);
        require(checkpointEvery == 0 || checkpointDir != null, "checkpointEvery=" + checkpointEvery + " needs a checkpointDir");
        require(roundTimeoutMillis > 0, "roundTimeoutMillis must be > 0, got " + roundTimeoutMillis);
        require(serverRoundTimeoutMillis > 0, "serverRoundTimeoutMillis must be > 0, got " + serverRoundTimeoutMillis);
        require(votePort == 0 || votePort > 0 && votePort < 65535, "votePort must be 0 (any free port) or in [1, 65534], got " + votePort);
        Topology.checkJobKind("topology", topology);
        require(metricsPort >= -1 && metricsPort <= 65535 - MAX_WORKERS, "metricsPort must be -1 (none), 0 (any free port) or in [1, "
            + (65535 - MAX_WORKERS) + "], got " + metricsPort);
        require(uiUrl == null || uiUrl.startsWith("http://") || uiUrl.startsWith("https://"), "ui must be the UI server's"
            + " http://HOST:PORT, got '" + uiUrl + "'");
        require(progressMillis >= 0, "progressMillis must be >= 0 (0: no progress line), got " + progressMillis);
        require(minVoters >= 0 && minVoters <= MAX_WORKERS, "minVoters must be 0 (a majority of the tasks) or in [1, " + MAX_WORKERS
            + "], got " + minVoters);
        require(rejoinAttempts >= 0, "rejoinAttempts must be >= 0 (0: a task that lost a round fails), got " + rejoinAttempts);
        localSteps().conclude();
        if (partition != null) {
            io.dlion.job.Partition.parse(partition, "partition");
        }
        return this;
    }

    /**
     * @param local H local steps per vote and the outer step's settings ({@link LocalSteps}; default per-step D-Lion);
     *              checkpoints are then taken every {@code checkpointEvery} outer rounds, between outer steps.
     * @return this for a fluent API.
     */
    public DLionSparkOptions localSteps(final LocalSteps local) {
        this.localSteps = local.steps();
        this.outerLrScale = local.outerLrScale();
        this.outerBeta1 = local.outerBeta1();
        this.outerBeta2 = local.outerBeta2();
        this.outerWeightDecay = local.outerWeightDecay();
        return this;
    }

    /**
     * @param spec split the training data again by label before training ({@code iid}, {@code dirichlet:ALPHA} or
     *             {@code classes:K}; {@link DLionSparkTrainer#partition}), over as many workers as the RDD has partitions;
     *             null (default): train on the RDD's partitions as they are.
     * @param seed the split's seed.
     * @return this for a fluent API.
     */
    public DLionSparkOptions partition(final String spec, final long seed) {
        this.partition = spec;
        this.partitionSeed = seed;
        return this;
    }

    /** @return the seed of {@link #partition()}. */
    public long partitionSeed() {
        return partitionSeed;
    }

    /** @return the split of the data by label, or null to keep the RDD's partitions. */
    public String partition() {
        return partition;
    }

    /** @return the local steps per vote and the outer step's settings. */
    public LocalSteps localSteps() {
        return new LocalSteps().steps(localSteps).outerLrScale(outerLrScale).outerBeta1(outerBeta1).outerBeta2(outerBeta2)
            .outerWeightDecay(outerWeightDecay);
    }

    /**
     * @param workers the job's tasks (the RDD's partitions).
     * @throws IllegalArgumentException naming minVoters when it exceeds the tasks.
     */
    void checkMinVoters(final int workers) {
        require(minVoters <= workers, "minVoters must be at most the tasks (partitions) of the job, " + workers + ", got " + minVoters);
    }

    private static void require(final boolean ok, final String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    /**
     * @param epochs passes over every task's partition, >= 1 (default 1).
     * @return this for a fluent API.
     */
    public DLionSparkOptions epochs(final int epochs) {
        this.epochs = epochs;
        return this;
    }

    public int epochs() {
        return epochs;
    }

    /**
     * @param batchSizePerWorker examples per step of one task, >= 1 (required). A task's partition is cut into
     *                           batches of this size (a last, smaller one is dropped); every task trains as many
     *                           steps per epoch as the task with the fewest batches has. The global batch is
     *                           {@code batchSizePerWorker * partitions}.
     * @return this for a fluent API.
     */
    public DLionSparkOptions batchSizePerWorker(final int batchSizePerWorker) {
        this.batchSizePerWorker = batchSizePerWorker;
        return this;
    }

    public int batchSizePerWorker() {
        return batchSizePerWorker;
    }

    /**
     * @param rule majority vote (default) or average.
     * @return this for a fluent API.
     */
    public DLionSparkOptions rule(final VoteRule rule) {
        this.rule = rule;
        return this;
    }

    public VoteRule rule() {
        return rule;
    }

    /**
     * @param jobId the job id in every frame (default 1).
     * @return this for a fluent API.
     */
    public DLionSparkOptions jobId(final int jobId) {
        this.jobId = jobId;
        return this;
    }

    public int jobId() {
        return jobId;
    }

    /**
     * @param dir   a directory every executor reaches under the same path (a shared filesystem; on one host a local
     *              path): each {@code fit} keeps its checkpoints in its own sub-directory, the two newest rounds.
     * @param every write every task's checkpoint every this many rounds; 0 for none, and then a retried stage starts
     *              the training over.
     * @return this for a fluent API.
     */
    public DLionSparkOptions checkpoints(final String dir, final int every) {
        this.checkpointDir = dir;
        this.checkpointEvery = every;
        return this;
    }

    public String checkpointDir() {
        return checkpointDir;
    }

    public int checkpointEvery() {
        return checkpointEvery;
    }

    /**
     * @param millis the longest a task waits for one round's result (default {@value #ROUND_TIMEOUT_MILLIS_DEFAULT}).
     * @return this for a fluent API.
     */
    public DLionSparkOptions roundTimeoutMillis(final long millis) {
        this.roundTimeoutMillis = millis;
        return this;
    }

    public long roundTimeoutMillis() {
        return roundTimeoutMillis;
    }

    /**
     * @param millis the server's round deadline (default {@value #SERVER_ROUND_TIMEOUT_MILLIS_DEFAULT}): a round
     *               without progress for this long goes on with the tasks that voted, when they are at least
     *               {@link #minVoters(int)}, else it is aborted.
     * @return this for a fluent API.
     */
    public DLionSparkOptions serverRoundTimeoutMillis(final long millis) {
        this.serverRoundTimeoutMillis = millis;
        return this;
    }

    public long serverRoundTimeoutMillis() {
        return serverRoundTimeoutMillis;
    }

    /**
     * @param port the UDP port the server (in task 0) receives votes on, results use the next one; 0 (default): two
     *             free ports that task 0's host picks for each attempt.
     * @return this for a fluent API.
     */
    public DLionSparkOptions votePort(final int port) {
        this.votePort = port;
        return this;
    }

    public int votePort() {
        return votePort;
    }

    /**
     * @param topology {@link Topology.Kind#SHARDED} (default): every task serves one slice of the parameters (its ports:
     *                 {@link #votePort(int)} + 2 × its partition, or free ones), the tasks learn each other's hosts and
     *                 ports by {@code allGather}, and every link carries the same whatever the number of tasks;
     *                 {@link Topology.Kind#STAR}: task 0 runs the one aggregation server. Both end with the same parameters.
     * @return this for a fluent API.
     */
    public DLionSparkOptions topology(final Topology.Kind topology) {
        this.topology = topology;
        return this;
    }

    public Topology.Kind topology() {
        return topology;
    }

    /**
     * @param seed shuffle the order of a task's batches before every epoch, with this seed (the same order again
     *             after a retry, so a resumed job sees the batches of the run that never stopped).
     * @return this for a fluent API.
     */
    public DLionSparkOptions shuffle(final long seed) {
        this.shuffle = true;
        this.seed = seed;
        return this;
    }

    /** @return true when a task shuffles its batches before every epoch (default false: partition order). */
    public boolean shuffle() {
        return shuffle;
    }

    public long seed() {
        return seed;
    }

    /**
     * @param factory makes every task's job listener (rounds, epochs, events); null for none.
     * @return this for a fluent API.
     */
    public DLionSparkOptions listener(final ListenerFactory factory) {
        this.listenerFactory = factory;
        return this;
    }

    public ListenerFactory listener() {
        return listenerFactory;
    }

    /**
     * @param port every task serves Prometheus metrics on {@code http://<executor>:port + worker/metrics} (its worker, its
     *             slice's server, its media driver, its JVM); 0: any free port, logged; -1 (default): none. Needs
     *             {@code dl4j-lion-monitor} on the executors' classpath.
     * @return this for a fluent API.
     */
    public DLionSparkOptions metricsPort(final int port) {
        this.metricsPort = port;
        return this;
    }

    /** @return the first task's metrics port, -1 for none. */
    public int metricsPort() {
        return metricsPort;
    }

    /**
     * @param url DL4J's training UI ({@code http://HOST:9000}, remote listener on) every task reports its worker's stats to,
     *            under DL4J's worker id {@code worker-<id>}; null (default): none. Needs {@code dl4j-lion-monitor}.
     * @return this for a fluent API.
     */
    public DLionSparkOptions ui(final String url) {
        this.uiUrl = url;
        return this;
    }

    /** @return the UI's URL, or null. */
    public String ui() {
        return uiUrl;
    }

    /**
     * @param millis the driver prints a progress line (round, rounds/s, loss, bytes) this often, fed by the tasks over
     *               UDP to the driver's host; 0: none (default {@value #PROGRESS_MILLIS_DEFAULT}).
     * @return this for a fluent API.
     */
    public DLionSparkOptions progressMillis(final long millis) {
        this.progressMillis = millis;
        return this;
    }

    /** @return the interval of the driver's progress line, 0 for none. */
    public long progressMillis() {
        return progressMillis;
    }

    /**
     * @param voters the quorum of a round: at the server's deadline ({@link #serverRoundTimeoutMillis(long)}) a round goes on
     *               with the tasks that voted when they are at least this many (a late task is left out of the round and
     *               applies its result like the others), else it is aborted and the stage fails. 0 (default): the
     *               servers' default, a majority ({@code tasks / 2 + 1}). A task that must rejoin ({@link #rejoinAttempts(int)}) needs the others to go
     *               on without it, so below the tasks; the tasks (the partitions) at most.
     * @return this for a fluent API.
     */
    public DLionSparkOptions minVoters(final int voters) {
        this.minVoters = voters;
        return this;
    }

    /** @return the quorum of a round, 0 for a majority of the tasks. */
    public int minVoters() {
        return minVoters;
    }

    /**
     * @param attempts how often a task whose round result was lost (it stalled past the servers' deadline and they went on,
     *                 so the rest of its round never comes; or a server told it to rejoin) tries to rejoin the running job
     *                 before it fails: it takes a live task's parameters over the network, relayed by slice 0's server,
     *                 and goes on with zero momentum; every attempt is logged. 0: rejoin is off, such a task fails at once
     *                 and Spark runs the stage again (from the checkpoints). Default {@value #REJOIN_ATTEMPTS_DEFAULT}.
     * @return this for a fluent API.
     */
    public DLionSparkOptions rejoinAttempts(final int attempts) {
        this.rejoinAttempts = attempts;
        return this;
    }

    /** @return the rejoin attempts of a task that lost a round, 0 for none. */
    public int rejoinAttempts() {
        return rejoinAttempts;
    }

    /**
     * @param decorator wraps every task's exchange (tests inject faults with it); null (default): none.
     * @return this for a fluent API.
     */
    DLionSparkOptions exchangeDecorator(final ExchangeDecorator decorator) {
        this.exchangeDecorator = decorator;
        return this;
    }

    ExchangeDecorator exchangeDecorator() {
        return exchangeDecorator;
    }
}
