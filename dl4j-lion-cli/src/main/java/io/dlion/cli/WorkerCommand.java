package io.dlion.cli;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.Configuration;
import io.dlion.aeron.SliceOwners;
import io.dlion.aeron.Topology;
import io.dlion.aeron.server.SliceServers;
import io.dlion.cli.train.DenseTransport;
import io.dlion.cli.train.Monitor;
import io.dlion.cli.train.Recovery;
import io.dlion.cli.train.RemoteTransport;
import io.dlion.cli.train.Sharing;
import io.dlion.cli.train.TrainConfig;
import io.dlion.cli.train.TrainConfigs;
import io.dlion.cli.train.Trainer;
import io.dlion.dist.DLionCheckpoint;
import io.dlion.dist.JobRun;
import io.dlion.job.Placement;
import io.dlion.monitor.ServerProbe;
import io.dlion.vote.VoteRule;
import org.nd4j.linalg.factory.Nd4j;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ./dlion worker}: one D-Lion worker process (e.g. one per GPU host) training shard {@code --worker-id} of
 * {@code --workers} against an aggregation server started with {@code ./dlion server} on another host.
 */
@Command(name = "worker", mixinStandardHelpOptions = true, sortOptions = false,
    description = "One D-Lion training worker over Aeron UDP to a remote './dlion server'.")
public final class WorkerCommand implements Callable<Integer> {
    /** The server's vote port when neither --vote-port nor MASTER_PORT gives one (the server's --udp default too). */
    static final int DEFAULT_VOTE_PORT = 40123;

    @Mixin
    RunOptions opts = new RunOptions();

    @Mixin
    MonitorOptions monitor = new MonitorOptions();

    @Mixin
    LocalStepsOptions local = new LocalStepsOptions();

    @Mixin
    EvalOptions eval = new EvalOptions();

    @Option(names = "--server", description = "server host (default: the scheduler's: MASTER_ADDR, the first host of SLURM_JOB_NODELIST)")
    String serverFlag;

    @Option(names = "--vote-port", description = "server vote port (default: MASTER_PORT, else 40123); with --topology sharded the vote"
        + " port of slice 0: slice r votes on VOTE_PORT + 2r and controls its results from VOTE_PORT + 2r + 1")
    Integer votePortFlag;

    @Option(names = "--topology", description = "star: one aggregation server (--server, or rank 0's with --with-server); sharded:"
        + " every worker serves one slice of the parameters in its own process, rank r on the r-th of --hosts (default: sharded when"
        + " every rank's host is known, from --hosts, DLION_HOSTS or Slurm, and none of --server, --control-port, --with-server,"
        + " --resume is given; else star)", converter = OptionTypes.TopologyKind.class)
    Topology.Kind topologyKind;

    @Option(names = "--hosts", split = ",", paramLabel = "HOST", description = "with --topology sharded: every worker's address, by rank"
        + " (default: DLION_HOSTS, or Slurm's SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE)")
    List<String> hosts;

    @Option(names = "--control-port", description = "server result control port (default: the vote port + 1)")
    Integer controlPortFlag;

    @Option(names = "--local-host", description = "this host's address the results arrive on (default: the address of the route to the"
        + " server)")
    String localHostFlag;

    @Option(names = "--aeron-dir", description = "standalone media driver directory (default: embedded driver)")
    String aeronDir;

    @Option(names = "--job", description = "job id, as given to the server (default: ${DEFAULT-VALUE})")
    int job = 1;

    @Option(names = "--worker-id", description = "this worker, 0..workers-1 (default: the scheduler's rank: SLURM_PROCID, RANK,"
        + " OMPI_COMM_WORLD_RANK, JOB_COMPLETION_INDEX)")
    Integer workerIdFlag;

    @Option(names = "--workers", description = "workers of the job (default: the scheduler's: SLURM_NTASKS, WORLD_SIZE, OMPI_COMM_WORLD_SIZE)")
    Integer workersFlag;

    /** The environment the scheduler set; a test gives its own. */
    Map<String, String> env = System.getenv();

    private Topology topology;
    private String localHost;
    private int workerId;
    private int workers;
    private int localRank = -1;
    private byte[] secret;

    @Option(names = "--rule", converter = OptionTypes.Rule.class, description = "majority (mavo) or average (avg), as given to the server"
        + " (default: majority)")
    VoteRule rule = VoteRule.MAJORITY;

    @Option(names = "--sharing", converter = OptionTypes.SharingName.class, description = "dlion-mavo, dlion-avg, dense-lion or dense-adamw"
        + " (the dense data-parallel baselines, against './dlion server --sharing dense') (default: dlion-mavo or dlion-avg, from --rule)")
    Sharing sharing;

    @Option(names = "--lr", description = "learning rate (default: 3e-4 for Lion, 1e-3 for AdamW)")
    double lr = Double.NaN;

    @Option(names = "--weight-decay", description = "decoupled weight decay per layer (default: ${DEFAULT-VALUE})")
    double weightDecay;

    @Option(names = "--secret-file", description = "file with the job's shared secret, as given to the server (owner-only permissions;"
        + " './dlion secret FILE' writes one); required unless --insecure")
    Path secretFile;

    @Option(names = "--insecure", description = "run without a secret (warns): anyone who reaches the ports can impersonate the server"
        + " or take over this worker's id")
    boolean insecure;

    @Option(names = "--frame-mac", description = "tag every vote and result frame with an HMAC-SHA256 of the job's secret, against an"
        + " attacker on the path; as the server's --frame-mac (needs --secret-file)")
    boolean frameMac;

    @Option(names = "--await-timeout-s", description = "longest a step waits for its round's result (e.g. while the server restarts)"
        + " before the worker fails (default: ${DEFAULT-VALUE})")
    long awaitTimeoutSeconds = Configuration.LINGER_S_DEFAULT;

    @Option(names = "--sync-dir", description = "directory shared by every worker: a donor writes a rejoining worker's parameters here"
        + " (default: none, the parameters go over the network, relayed by the server)")
    Path syncDir;

    @Option(names = "--rejoin", description = "this worker restarts in a running job: take a live donor's parameters")
    boolean rejoin;

    @Option(names = "--run-id", description = "id of this start of the job, the same on every worker: checkpoints and hand-overs carry it"
        + " and another run's are refused (default: DLION_RUN_ID, SLURM_JOB_ID, TORCHELASTIC_RUN_ID; a resume passes the run id of"
        + " its checkpoints)")
    String runIdFlag;

    @Option(names = "--checkpoint-dir", description = "directory of this worker's checkpoint worker-<id>.zip (parameters, momentum, round)")
    Path checkpointDir;

    @Option(names = "--checkpoint-every", description = "write the checkpoint every this many rounds (default: ${DEFAULT-VALUE} = never)")
    int checkpointEvery;

    @Option(names = "--resume", description = "start from this worker's checkpoint in --checkpoint-dir (whole-job restart)")
    boolean resume;

    @Option(names = "--with-server", description = "the worker of rank 0 also runs the aggregation server in its process, listening on"
        + " the vote port and control port of every host (the others connect to it as to './dlion server'); other ranks ignore it")
    boolean withServer;

    @Option(names = "--round-timeout-ms", description = "the round deadline of the servers this worker runs (--with-server, --topology"
        + " sharded) (default: " + Configuration.ROUND_TIMEOUT_MS_DEFAULT + ")")
    Long roundTimeoutMs;

    @Option(names = "--min-voters", description = "with --with-server: the server's quorum (default: a majority of the workers)")
    Integer minVoters;

    @Option(names = "--silence-ms", description = "--topology sharded: a slice server silent this long, its vote publication"
        + " disconnected, is dead and its slice moves (the embedded driver's publication connection timeout follows it)"
        + " (default: 5000)")
    Long silenceMs;

    @Option(names = "--loss-rate", description = "fault injection: fraction of received UDP data frames dropped (default: ${DEFAULT-VALUE})")
    double lossRate;

    @Option(names = "--history", description = "append every round this worker applies (round, result digest, voters), its joins and"
        + " each epoch's parameter digest to this file, one line per event, for a chaos run's checker (default: none)")
    Path history;

    /**
     * Every check of the options, without training.
     *
     * @return the training configuration the options give.
     */
    TrainConfig config() {
        place();
        if (workerId < 0 || workerId >= workers) {
            throw new IllegalArgumentException("--worker-id must be in [0, " + workers + "), got " + workerId);
        }
        if (!(lossRate >= 0 && lossRate < 1)) {
            throw new IllegalArgumentException("--loss-rate must be in [0, 1), got " + lossRate);
        }
        if (!withServer && !sharded() && (roundTimeoutMs != null || minVoters != null)) {
            throw new IllegalArgumentException("--round-timeout-ms and --min-voters are the in-process server's: they need --with-server"
                + " or --topology sharded");
        }
        if (roundTimeoutMs != null && roundTimeoutMs < 1) {
            throw new IllegalArgumentException("--round-timeout-ms must be >= 1, got " + roundTimeoutMs);
        }
        if (silenceMs != null && (!sharded() || sharing().isDense())) {
            throw new IllegalArgumentException("--silence-ms is the sharded vote exchange's: it needs --topology sharded and a vote sharing");
        }
        if (silenceMs != null && silenceMs < 1000) {
            throw new IllegalArgumentException("--silence-ms must be >= 1000 (a live server answers a HELLO every second), got " + silenceMs);
        }
        if (silenceMs != null && aeronDir != null) {
            throw new IllegalArgumentException("--silence-ms sets the embedded driver's publication connection timeout: with --aeron-dir,"
                + " set aeron.publication.connection.timeout on the standalone driver and leave --silence-ms out");
        }
        if (minVoters != null && (minVoters < 1 || minVoters > workers)) {
            throw new IllegalArgumentException("--min-voters must be in [1, " + workers + "], got " + minVoters);
        }
        if (awaitTimeoutSeconds < 1) {
            throw new IllegalArgumentException("--await-timeout-s must be >= 1, got " + awaitTimeoutSeconds);
        }
        recovery().validate();
        secret = JobSecret.forUdp(secretFile, insecure, "worker");
        JobSecret.checkFrameMac(frameMac, secret);
        final Sharing s = sharing();
        if (s.isDense() && (syncDir != null || rejoin || checkpointDir != null || resume || lossRate > 0 || withServer || frameMac)) {
            throw new IllegalArgumentException("--sharing " + s.cliName() + " (the dense baseline) supports none of --sync-dir, --rejoin,"
                + " --checkpoint-dir, --resume, --loss-rate, --with-server, --frame-mac");
        }
        if (sharded() && (resume || withServer)) {
            throw new IllegalArgumentException("--topology sharded supports neither --resume nor --with-server: every worker serves a slice,"
                + " and a dead worker's slice moves to the next live rank");
        }
        final TrainConfig config = local.apply(TrainConfigs.of(opts.dataset, opts.dataDir, opts.model, s.impliedOptimizer(), s, workers,
            s.isDense() ? "aeron-udp" : "inproc", opts.epochs, opts.batch, lr, weightDecay, opts.seed, opts.trainLimit, opts.testLimit,
            awaitTimeoutSeconds, opts.out));
        eval.apply(config);
        if (history != null && s.isDense()) {
            throw new IllegalArgumentException("--history records D-Lion rounds: --sharing " + s.cliName() + " has none");
        }
        config.history = history;
        return config;
    }

    /** @return --sharing, or the D-Lion sharing --rule names. */
    private Sharing sharing() {
        if (sharing == null) {
            return voteRule() == VoteRule.MAJORITY ? Sharing.DLION_MAVO : Sharing.DLION_AVG;
        }
        final Sharing s = sharing;
        if (!s.isDLion() && !s.isDense()) {
            throw new IllegalArgumentException("--sharing must be dlion-mavo, dlion-avg, dense-lion or dense-adamw for a worker, got '"
                + s.cliName() + "'");
        }
        if (s.isDLion() && s != (voteRule() == VoteRule.MAJORITY ? Sharing.DLION_MAVO : Sharing.DLION_AVG) && rule != VoteRule.MAJORITY) {
            throw new IllegalArgumentException("--sharing " + s.cliName() + " conflicts with --rule " + rule);
        }
        return s;
    }

    /** Flags first, then the scheduler's variables (a conflict between two of them is an error naming both). */
    private void place() {
        final Placement placement = Placement.fromEnvironment(env);
        workers = placement.workersOr(workersFlag);
        workerId = placement.rankOr(workerIdFlag);
        final int votePort = votePortFlag != null ? votePortFlag : placement.serverPort() > 0 ? placement.serverPort() : DEFAULT_VOTE_PORT;
        if (topologyKind() == Topology.Kind.SHARDED) {
            if (serverFlag != null || controlPortFlag != null) {
                throw new IllegalArgumentException("--topology sharded has no server: --server and --control-port do not apply");
            }
            final List<String> rankHosts = hosts != null ? hosts : Placement.rankHosts(env, workers);
            if (rankHosts == null || rankHosts.size() != workers) {
                throw new IllegalArgumentException("--topology sharded needs --hosts with one address per worker (" + workers + "), got "
                    + (rankHosts == null ? "none (nor " + Placement.HOSTS_VARIABLE + ", nor SLURM_JOB_NODELIST with SLURM_TASKS_PER_NODE)"
                    : rankHosts.size() + ": " + rankHosts));
            }
            topology = Topology.sharded(rankHosts, votePort);
            localHost = localHostFlag != null ? localHostFlag : rankHosts.get(workerId);
        } else {
            if (hosts != null) {
                throw new IllegalArgumentException("--hosts is for --topology sharded");
            }
            final String server = placement.serverHostOr(serverFlag);
            topology = Topology.star(server, votePort, controlPortFlag != null ? controlPortFlag : votePort + 1);
            localHost = localHostFlag != null ? localHostFlag : routeTo(server, votePort);
        }
        localRank = placement.localRank();
        if (!placement.sources().isEmpty()) {
            System.out.println("worker " + workerId + " of " + workers + ", " + topology + " (scheduler variables: " + placement.sources() + ")");
        }
    }

    /**
     * A job of worker processes is sharded by default (every rank serves a slice), when every rank's host is known and no
     * server is named; with a server named, no host list, or a whole job resumed from its checkpoints, it is the star.
     */
    private Topology.Kind topologyKind() {
        if (topologyKind != null) {
            return topologyKind;
        }
        if (serverFlag != null || controlPortFlag != null || withServer || resume) {
            return Topology.Kind.STAR;
        }
        return hosts != null || Placement.rankHosts(env, workers) != null ? Topology.Kind.SHARDED : Topology.Kind.STAR;
    }

    /** @return who serves which slice, once {@link #config()} placed this worker. */
    Topology topology() {
        return topology;
    }

    private boolean sharded() {
        return topology != null && topology.kind() == Topology.Kind.SHARDED;
    }

    /** @return this host's address on the route to the server (a UDP socket's local address once connected; nothing is sent). */
    static String routeTo(final String host, final int port) {
        try (DatagramSocket socket = new DatagramSocket()) {
            socket.connect(new InetSocketAddress(host, port));
            return socket.getLocalAddress().getHostAddress();
        } catch (final IOException | RuntimeException e) {
            throw new IllegalArgumentException("--local-host is not given and no route to the server " + host + " was found: " + e.getMessage(), e);
        }
    }

    private VoteRule voteRule() {
        return rule;
    }

    private Recovery recovery() {
        return new Recovery(syncDir, rejoin, checkpointDir, checkpointEvery, resume, new JobRun(job, runId()));
    }

    /** Variables a run id is taken from when --run-id is not given, in order. */
    static final List<String> RUN_ID_VARIABLES = List.of("DLION_RUN_ID", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID");

    /** @return --run-id, else the first of {@link #RUN_ID_VARIABLES} set, else "" (none). */
    String runId() {
        if (runIdFlag != null) {
            if (runIdFlag.isBlank()) {
                throw new IllegalArgumentException("--run-id must not be blank");
            }
            return runIdFlag;
        }
        for (final String name : RUN_ID_VARIABLES) {
            final String value = env.get(name);
            if (value != null && !value.isBlank()) {
                return value;
            }
        }
        return "";
    }

    @Override
    public Integer call() throws Exception {
        final TrainConfig config = config();
        try (Monitor m = monitor.open("dlion-job-" + job)) {
            config.monitor = m;
            return run(config);
        }
    }

    @SuppressWarnings("try") // the probes are held for their close order: before the server they read
    private int run(final TrainConfig config) throws Exception {
        final VoteRule voteRule = sharing() == Sharing.DLION_AVG ? VoteRule.AVERAGE : VoteRule.MAJORITY;
        final Recovery recovery = recovery().validate();
        if (localRank >= 0 && Nd4j.getAffinityManager().getNumberOfDevices() > 1) {
            // one process per GPU: the local rank picks the device (ND4J binds devices per thread)
            config.device = localRank % Nd4j.getAffinityManager().getNumberOfDevices();
            Nd4j.getAffinityManager().unsafeSetDevice(config.device);
        }
        final Trainer trainer = new Trainer(config, System.out);
        final long params = trainer.parameterCount();
        final long firstRound = resume ? DLionCheckpoint.read(recovery.checkpointOf(workerId)).round() : 0;
        if (recovery.run().runId().isEmpty()) {
            System.out.println("worker " + workerId + ": no run id (--run-id, " + String.join(", ", RUN_ID_VARIABLES) + "): checkpoints and"
                + " hand-overs of an earlier start of job " + job + " without a run id cannot be told apart from this one's");
        }
        final boolean network = syncDir == null;
        final RemoteTransport.Settings settings = new RemoteTransport.Settings(job, workers, params, voteRule, topology, localHost, aeronDir,
            secret, frameMac, lossRate, firstRound, rejoin, recovery.run(), network, silenceMs == null ? 0 : TimeUnit.MILLISECONDS.toNanos(silenceMs));
        final boolean dense = sharing().isDense();
        final long roundTimeout = roundTimeoutMs == null ? Configuration.ROUND_TIMEOUT_MS_DEFAULT : roundTimeoutMs;
        final int quorum = minVoters == null ? 0 : minVoters;
        if (sharded() && !dense) {
            // the library serves: this rank's slice (none after a restart: it moved when the rank died), the slice of a dead
            // rank the failover rule moves here, and the servers stay up at the end until the others have read the results
            final SliceServers.Context serving = new SliceServers.Context().roundTimeoutNs(TimeUnit.MILLISECONDS.toNanos(roundTimeout))
                .minVoters(quorum).lingerNs(TimeUnit.SECONDS.toNanos(awaitTimeoutSeconds))
                .silenceNs(silenceMs == null ? SliceOwners.DEFAULT_SILENCE_NS : TimeUnit.MILLISECONDS.toNanos(silenceMs))
                .listener(new ServedSlices(topology, config.monitor, System.out));
            trainer.runAs(new int[] {workerId}, () -> new RemoteTransport(settings, null, serving), recovery);
        } else if ((withServer && workerId == 0) || sharded()) {
            try (InProcessServer hosted = new InProcessServer(settings, sharded() ? workerId : 0, roundTimeout, quorum, dense);
                 Monitor.Probes probes = config.monitor.probes()) {
                config.monitor.server(sharded() ? workerId : 0, ServerProbe.Readings.of(hosted.server()));
                if (dense) {
                    trainer.runDenseAs(new int[] {workerId}, () -> DenseTransport.remote(settings, hosted.runtime()));
                } else {
                    trainer.runAs(new int[] {workerId}, () -> new RemoteTransport(settings, hosted.runtime()), recovery);
                }
                hosted.awaitOthersDone(TimeUnit.SECONDS.toMillis(awaitTimeoutSeconds));
            }
        } else if (dense) {
            trainer.runDenseAs(new int[] {workerId}, () -> DenseTransport.remote(settings, null));
        } else {
            // a round result lost mid-job (RejoinRequiredException) is the job's to handle: it rejoins with its hand-over
            trainer.runAs(new int[] {workerId}, () -> new RemoteTransport(settings, null), recovery);
        }
        return 0;
    }
}
