package io.dlion.cli;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import com.sun.management.ThreadMXBean;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.Topology;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.server.Payload;
import io.dlion.aeron.client.AeronMeanExchange;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.client.WorkerCounters;
import io.dlion.aeron.wire.GradientChunkFlyweight;
import io.dlion.exchange.ExchangeCounters;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code dlion vote-worker}: a worker that votes seeded random signs ({@link SyntheticVotes}), or with
 * {@code --sharing dense} sends seeded fp32 gradients for their mean, for a number of rounds and prints one line per
 * round: {@code round R voters V digest D micros T cpuMicros C}. T is the round's wall time, from {@code submit} to the
 * complete result, and C the CPU time (user + system) of the process's threads in that time, every one counted: the
 * exchange, the slice server, the media driver. The digest is taken after the clocks stop. Any process can recompute
 * the votes of every worker from the seed, so a run over real processes can be checked bit for bit. A worker that
 * serves a slice closes its exchange when its rounds are done and then keeps its slice's server up until the others
 * have read the last result and left (at most {@code --timeout-ms}).
 */
@Command(name = "vote-worker", mixinStandardHelpOptions = true, description = "Synthetic Distributed Lion worker: seeded random votes, result digests.")
public final class SyntheticWorkerCommand implements Callable<Integer> {
    private static final ThreadMXBean THREADS = (ThreadMXBean) ManagementFactory.getThreadMXBean();

    @Option(names = "--job", required = true, description = "Job id.")
    int job;

    @Option(names = "--worker-id", required = true, description = "This worker, 0..workers-1.")
    int workerId;

    @Option(names = "--workers", required = true, description = "Number of workers.")
    int workers;

    @Option(names = "--params", required = true, description = "Parameter count.")
    long params;

    @Option(names = "--rule", defaultValue = "majority", converter = OptionTypes.Rule.class,
        description = "majority (mavo) or average (avg) (default: ${DEFAULT-VALUE}).")
    VoteRule rule;

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

    @Option(names = "--round-timeout-ms", defaultValue = "" + Configuration.ROUND_TIMEOUT_MS_DEFAULT,
        description = "With --topology sharded: the round deadline of the slice server"
        + " this worker runs (default: ${DEFAULT-VALUE}).")
    long roundTimeoutMs;

    @Mixin
    TransportOptions transport;

    @Option(names = "--sharing", defaultValue = "dlion", converter = OptionTypes.PayloadName.class,
        description = "dlion: seeded sign votes; dense: seeded fp32 gradients, averaged"
        + " (the dense data-parallel baseline; './dlion server --sharing dense' for the star) (default: dlion).")
    Payload sharing;

    @Override
    public Integer call() throws Exception {
        final boolean dense = sharing == Payload.FP32;
        final byte[] secret = transport.secret("worker");
        if (dense && transport.frameMac) {
            throw new IllegalArgumentException("--frame-mac is not supported by --sharing dense (the dense baseline)");
        }
        final Topology topology = transport.topology(workers);
        final int chunkWords = topology == null ? transport.chunkWords
            : topology.chunkWords(params, dense ? GradientChunkFlyweight.CHUNK_WORDS : transport.chunkWords);
        // this process serves its own slice: the worker reaches it by IPC
        final List<SliceEndpoint> slices = topology != null ? topology.servedHere(topology.endpoints(params, chunkWords, workers, transport.localHost),
            dense ? -1 : workerId)
            : List.of(new SliceEndpoint(0, 0, -1, transport.voteChannel(workers), transport.voteStream, transport.workerResultChannel(workers),
                transport.resultStream));
        try (AeronRuntime runtime = transport.launch();
            InProcessServer slice = topology == null ? null : new InProcessServer(runtime, false, topology, workerId, dense,
                new AggregationServer.Context().jobId(job).workers(workers).paramCount(params).rule(rule)
                    .chunkWords(chunkWords).roundTimeoutNs(TimeUnit.MILLISECONDS.toNanos(roundTimeoutMs)).secret(secret)
                    .frameMac(transport.frameMac(secret)), false)) {
            if (dense) {
                try (AeronMeanExchange exchange = new AeronMeanExchange(new AeronMeanExchange.Context()
                    .aeron(runtime.aeron()).jobId(job).workerId(workerId).workers(workers).paramCount(params)
                    .connectTimeoutNs(TimeUnit.MILLISECONDS.toNanos(connectTimeoutMs)).secret(connecting(secret)).slices(slices))) {
                    runDense(exchange);
                    printTraffic(exchange.counters(), exchange.workerCounters(), slice, runtime);
                }
                awaitOthers(slice);
            } else {
                try (AeronVoteExchange exchange = new AeronVoteExchange(new AeronVoteExchange.Context()
                    .aeron(runtime.aeron()).jobId(job).workerId(workerId).workers(workers).paramCount(params)
                    .rule(rule).chunkWords(chunkWords)
                    .connectTimeoutNs(TimeUnit.MILLISECONDS.toNanos(connectTimeoutMs)).secret(connecting(secret))
                    .frameMac(transport.frameMac(secret)).slices(slices))) {
                    System.out.println("results at " + (exchange.resultEndpoint(0) == null ? "ipc" : exchange.resultEndpoint(0)));
                    System.out.flush();
                    runVotes(exchange);
                    printTraffic(exchange.counters(), exchange.workerCounters(), slice, runtime);
                }
                awaitOthers(slice);
            }
        }
        return 0;
    }

    private void runVotes(final AeronVoteExchange exchange) throws Exception {
        final List<long[]> votes = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            votes.add(SyntheticVotes.vote(seed, r, workerId, params));
        }
        final long cpuFirst = cpuNanos();
        long cpuRounds = 0;
        for (int r = 0; r < rounds; r++) {
            final long cpu = cpuNanos();
            final long start = System.nanoTime();
            exchange.submit(r, votes.get(r), params);
            final RoundResult result = exchange.await(r, timeoutMs);
            final long wall = System.nanoTime() - start;
            final long cpuUsed = cpuNanos() - cpu;
            cpuRounds += cpuUsed;
            printRound(r, result.voters(), SyntheticVotes.digest(result), wall, cpuUsed);
        }
        printCpu(cpuNanos() - cpuFirst, cpuRounds);
    }

    /** The dense baseline's rounds: the gradient of a round is made before the round's clock starts (one array, reused). */
    private void runDense(final AeronMeanExchange exchange) throws Exception {
        if (params > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("--params must be at most 2^31 - 9 with --sharing dense, got " + params);
        }
        final float[] gradient = new float[(int) params];
        final long cpuFirst = cpuNanos();
        long cpuRounds = 0;
        for (int r = 0; r < rounds; r++) {
            SyntheticVotes.gradient(seed, r, workerId, gradient);
            final long cpu = cpuNanos();
            final long start = System.nanoTime();
            exchange.submit(r, gradient);
            final float[] mean = exchange.await(r, timeoutMs);
            final long wall = System.nanoTime() - start;
            final long cpuUsed = cpuNanos() - cpu;
            cpuRounds += cpuUsed;
            printRound(r, workers, SyntheticVotes.digest(mean), wall, cpuUsed);
        }
        printCpu(cpuNanos() - cpuFirst, cpuRounds);
    }

    /**
     * @return CPU time (user + system) of this process's live threads so far: the exchange, the slice server, the embedded
     *     media driver (the process's own CPU clock ticks in 10 ms steps here, too coarse for a round).
     */
    private static long cpuNanos() {
        long sum = 0;
        for (final long nanos : THREADS.getThreadCpuTime(THREADS.getAllThreadIds())) {
            sum += Math.max(0, nanos);
        }
        return sum;
    }

    /**
     * The CPU of the run's rounds and of the time between them (the harness's digests and gradients, and during
     * {@code --round-pause-ms} what the media driver's and the slice server's idle strategies burn while the worker
     * "trains").
     */
    private static void printCpu(final long all, final long inRounds) {
        System.out.println("cpuMicros rounds and between " + TimeUnit.NANOSECONDS.toMicros(all) + " in rounds "
            + TimeUnit.NANOSECONDS.toMicros(inRounds));
    }

    private void printRound(final int round, final int voters, final long digest, final long wallNs, final long cpuNs)
        throws InterruptedException {
        System.out.println("round " + round + " voters " + voters + " digest " + Long.toHexString(digest) + " micros "
            + TimeUnit.NANOSECONDS.toMicros(wallNs) + " cpuMicros " + TimeUnit.NANOSECONDS.toMicros(cpuNs));
        System.out.flush();
        if (roundPauseMs > 0) {
            Thread.sleep(roundPauseMs);
        }
    }

    private void awaitOthers(final InProcessServer slice) throws InterruptedException {
        if (slice != null) {
            slice.awaitOthersDone(timeoutMs);   // the others may still read this slice's last result
        }
    }

    private void printTraffic(final ExchangeCounters exchanged, final WorkerCounters counters, final InProcessServer slice,
        final AeronRuntime runtime) {
        final long up = exchanged.bytesUp();
        final long down = exchanged.bytesDown();
        System.out.println("bytesUp " + up + " bytesDown " + down);
        if (slice != null) {
            // what crosses this host's link: every slice's chunks but its own, and its slice's result to every other
            // worker; in, every other worker's chunks for its slice and the other slices' results
            final long in = slice.counters().bytesIn().get();
            final long out = slice.counters().bytesOut().get();
            System.out.println("payload sent " + (up - in / workers + (workers - 1) * out) + " received "
                + (in - in / workers + down - out));
        }
        System.out.println("counters rejected-results=" + counters.rejectedResults().get() + " stale-results=" + counters.staleResults().get()
            + " unproven-frames=" + counters.unprovenFrames().get() + " refused-images=" + counters.refusedImages().get());
        System.out.println("driver " + runtime.traffic());
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
