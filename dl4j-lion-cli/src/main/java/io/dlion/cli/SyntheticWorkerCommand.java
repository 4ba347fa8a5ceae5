package io.dlion.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.ShardEndpoint;
import io.dlion.aeron.Topology;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.client.WorkerCounters;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.vote.RoundResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code dlion vote-worker}: a worker that votes seeded random signs ({@link SyntheticVotes}) for a number of
 * rounds and prints one line per round: {@code round R voters V digest D millis T}. Any process can recompute
 * the votes of every worker from the seed, so a run over real processes can be checked bit for bit.
 */
@Command(name = "vote-worker", mixinStandardHelpOptions = true, description = "Synthetic Distributed Lion worker: seeded random votes, result digests.")
public final class SyntheticWorkerCommand implements Callable<Integer> {
    @Option(names = "--job", required = true, description = "Job id.")
    int job;

    @Option(names = "--worker-id", required = true, description = "This worker, 0..workers-1.")
    int workerId;

    @Option(names = "--workers", required = true, description = "Number of workers.")
    int workers;

    @Option(names = "--params", required = true, description = "Parameter count.")
    long params;

    @Option(names = "--rule", defaultValue = "majority", description = "majority or average (default: ${DEFAULT-VALUE}).")
    String rule;

    @Option(names = "--rounds", defaultValue = "3", description = "Rounds to run (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the votes (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--timeout-ms", defaultValue = "30000", description = "Round timeout (default: ${DEFAULT-VALUE}).")
    long timeoutMs;

    @Option(names = "--round-pause-ms", defaultValue = "0", description = "Sleep between rounds, standing in for a training step (default: ${DEFAULT-VALUE}).")
    long roundPauseMs;

    @Option(names = "--connect-timeout-ms", defaultValue = "20000", description = "Connect timeout (default: ${DEFAULT-VALUE}).")
    long connectTimeoutMs;

    @Option(names = "--round-timeout-ms", defaultValue = "30000", description = "With --topology sharded: the round deadline of the slice server"
        + " this worker runs (default: ${DEFAULT-VALUE}).")
    long roundTimeoutMs;

    @Mixin
    TransportOptions transport;

    @Override
    public Integer call() throws Exception {
        final List<long[]> votes = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            votes.add(SyntheticVotes.vote(seed, r, workerId, params));
        }
        final byte[] secret = transport.secret("worker");
        final Topology topology = transport.topology(workers);
        final int chunkWords = topology == null ? transport.chunkWords : topology.chunkWords(params, transport.chunkWords);
        try (AeronRuntime runtime = transport.launch();
            InProcessServer slice = topology == null ? null : new InProcessServer(runtime, false, topology, workerId, new AggregationServer.Context()
                .jobId(job).workers(workers).paramCount(params).rule(ServerCommand.parseRule(rule)).chunkWords(chunkWords)
                .roundTimeoutNs(TimeUnit.MILLISECONDS.toNanos(roundTimeoutMs)).secret(secret).frameMac(transport.frameMac(secret)));
            AeronVoteExchange exchange = new AeronVoteExchange(new AeronVoteExchange.Context()
                .aeron(runtime.aeron()).jobId(job).workerId(workerId).workers(workers).paramCount(params)
                .rule(ServerCommand.parseRule(rule)).chunkWords(chunkWords)
                .connectTimeoutNs(TimeUnit.MILLISECONDS.toNanos(connectTimeoutMs)).secret(connecting(secret))
                .frameMac(transport.frameMac(secret))
                .shards(topology != null ? topology.endpoints(params, chunkWords, workers, transport.localHost)
                    : List.of(new ShardEndpoint(0, 0, -1, transport.voteChannel(workers), transport.voteStream,
                        transport.workerResultChannel(workers), transport.resultStream))))) {
            System.out.println("results at " + (exchange.resultEndpoint(0) == null ? "ipc" : exchange.resultEndpoint(0)));
            System.out.flush();
            for (int r = 0; r < rounds; r++) {
                final long start = System.nanoTime();
                exchange.submit(r, votes.get(r), params);
                final RoundResult result = exchange.await(r, timeoutMs);
                final long micros = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start);
                System.out.println("round " + r + " voters " + result.voters() + " digest " + Long.toHexString(SyntheticVotes.digest(result))
                    + " micros " + micros);
                System.out.flush();
                if (roundPauseMs > 0) {
                    Thread.sleep(roundPauseMs);
                }
            }
            if (slice != null) {
                slice.awaitOthersDone(timeoutMs);   // the others may still read this slice's last result
            }
            final long up = exchange.counters().bytesUp();
            final long down = exchange.counters().bytesDown();
            System.out.println("bytesUp " + up + " bytesDown " + down);
            if (slice != null) {
                // what crosses this host's link: every slice's votes but its own, and its slice's result to every other
                // worker; in, every other worker's votes for its slice and the other slices' results
                final long in = slice.counters().bytesIn().get();
                final long out = slice.counters().bytesOut().get();
                System.out.println("payload sent " + (up - in / workers + (workers - 1) * out) + " received "
                    + (in - in / workers + down - out));
            }
            final WorkerCounters counters = exchange.workerCounters();
            System.out.println("counters rejected-results=" + counters.rejectedResults().get() + " stale-results=" + counters.staleResults().get()
                + " unproven-frames=" + counters.unprovenFrames().get() + " refused-images=" + counters.refusedImages().get());
            System.out.println("driver " + runtime.traffic());
        }
        return 0;
    }

    /** Says that the worker is up and about to say HELLO (a test starts its server once every worker is). */
    private byte[] connecting(final byte[] secret) {
        System.out.println("worker " + workerId + " connecting");
        System.out.flush();
        return secret;
    }

    /**
     * @param args command line, see {@code --help}.
     */
}
