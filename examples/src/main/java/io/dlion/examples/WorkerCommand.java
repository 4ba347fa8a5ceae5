package io.dlion.examples;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import io.dlion.aeron.client.RejoinRequiredException;
import io.dlion.dist.DLionCheckpoint;
import io.dlion.examples.train.Recovery;
import io.dlion.examples.train.RemoteTransport;
import io.dlion.examples.train.Sharing;
import io.dlion.examples.train.TrainConfig;
import io.dlion.examples.train.TrainConfigs;
import io.dlion.examples.train.Trainer;
import io.dlion.vote.VoteRule;
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

    @Mixin
    RunOptions opts = new RunOptions();

    @Option(names = "--server", required = true, description = "server host")
    String server;

    @Option(names = "--vote-port", description = "server vote port (default: ${DEFAULT-VALUE})")
    int votePort = 40123;

    @Option(names = "--control-port", description = "server result control port (default: ${DEFAULT-VALUE})")
    int controlPort = 40124;

    @Option(names = "--local-host", required = true, description = "this host's address the results arrive on")
    String localHost;

    @Option(names = "--aeron-dir", description = "standalone media driver directory (default: embedded driver)")
    String aeronDir;

    @Option(names = "--job", description = "job id, as given to the server (default: ${DEFAULT-VALUE})")
    int job = 1;

    @Option(names = "--worker-id", required = true, description = "this worker, 0..workers-1")
    int workerId;

    @Option(names = "--workers", required = true, description = "workers of the job")
    int workers;

    @Option(names = "--rule", description = "majority or average, as given to the server (default: ${DEFAULT-VALUE})")
    String rule = "majority";

    @Option(names = "--lr", description = "Lion learning rate (default: ${DEFAULT-VALUE})")
    double lr = 3e-4;

    @Option(names = "--weight-decay", description = "decoupled weight decay per layer (default: ${DEFAULT-VALUE})")
    double weightDecay;

    @Option(names = "--secret-file", description = "file with the job's shared secret (at least 16 bytes), as given to the server")
    Path secretFile;

    @Option(names = "--await-timeout-s", description = "longest a step waits for its round's result (e.g. while the server restarts)"
        + " before the worker fails (default: ${DEFAULT-VALUE})")
    long awaitTimeoutSeconds = 600;

    @Option(names = "--sync-dir", description = "directory shared by every worker: a donor writes a rejoining worker's parameters here")
    Path syncDir;

    @Option(names = "--rejoin", description = "this worker restarts in a running job: take a live donor's parameters (needs --sync-dir)")
    boolean rejoin;

    @Option(names = "--checkpoint-dir", description = "directory of this worker's checkpoint worker-<id>.zip (parameters, momentum, round)")
    Path checkpointDir;

    @Option(names = "--checkpoint-every", description = "write the checkpoint every this many rounds (default: ${DEFAULT-VALUE} = never)")
    int checkpointEvery;

    @Option(names = "--resume", description = "start from this worker's checkpoint in --checkpoint-dir (whole-job restart)")
    boolean resume;

    @Option(names = "--loss-rate", description = "fault injection: fraction of received UDP data frames dropped (default: ${DEFAULT-VALUE})")
    double lossRate;

    @Override
    public Integer call() throws Exception {
        final VoteRule voteRule;
        if ("majority".equals(rule)) {
            voteRule = VoteRule.MAJORITY;
        } else if ("average".equals(rule)) {
            voteRule = VoteRule.AVERAGE;
        } else {
            throw new IllegalArgumentException("--rule must be majority or average, got '" + rule + "'");
        }
        if (workerId < 0 || workerId >= workers) {
            throw new IllegalArgumentException("--worker-id must be in [0, " + workers + "), got " + workerId);
        }
        if (!(lossRate >= 0 && lossRate < 1)) {
            throw new IllegalArgumentException("--loss-rate must be in [0, 1), got " + lossRate);
        }
        if (awaitTimeoutSeconds < 1) {
            throw new IllegalArgumentException("--await-timeout-s must be >= 1, got " + awaitTimeoutSeconds);
        }
        final Recovery recovery = new Recovery(syncDir, rejoin, checkpointDir, checkpointEvery, resume).validate();
        final TrainConfig config = TrainConfigs.of(opts.dataset, opts.dataDir, opts.model, "lion",
            voteRule == VoteRule.MAJORITY ? Sharing.DLION_MAVO : Sharing.DLION_AVG, workers, "inproc", opts.epochs, opts.batch, lr, weightDecay, opts.seed,
            opts.trainLimit, opts.testLimit, awaitTimeoutSeconds, opts.out);
        final Trainer trainer = new Trainer(config, System.out);
        final long params = trainer.parameterCount();
        final long firstRound = resume ? DLionCheckpoint.read(recovery.checkpointOf(workerId)).round() : 0;
        final byte[] secret = secretFile == null ? null : Files.readAllBytes(secretFile);
        final RemoteTransport.Settings settings = new RemoteTransport.Settings(job, workers, params, voteRule, server, votePort, controlPort,
            localHost, aeronDir, secret, lossRate, firstRound, rejoin);
        try {
            trainer.runAs(new int[] {workerId}, () -> new RemoteTransport(settings), recovery);
        } catch (final Exception ex) {
            final RejoinRequiredException lost = rejoinRequired(ex);
            if (lost == null || syncDir == null) {
                throw ex;
            }
            // the server restarted while this worker was one round behind: take a live worker's parameters and go on
            System.out.println(lost.getMessage() + "; rejoining");
            final RemoteTransport.Settings again = new RemoteTransport.Settings(job, workers, params, voteRule, server, votePort,
                controlPort, localHost, aeronDir, secret, lossRate, 0, true);
            new Trainer(config, System.out).runAs(new int[] {workerId}, () -> new RemoteTransport(again),
                new Recovery(syncDir, true, checkpointDir, checkpointEvery, false));
        }
        return 0;
    }

    private static RejoinRequiredException rejoinRequired(final Throwable ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof RejoinRequiredException) {
                return (RejoinRequiredException) t;
            }
        }
        return null;
    }
}
