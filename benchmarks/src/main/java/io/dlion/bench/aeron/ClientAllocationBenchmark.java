package io.dlion.bench.aeron;

import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

import io.dlion.aeron.LocalAeronJob;
import io.dlion.exchange.VoteExchange;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.vote.VoteRule;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Heap allocated per round by the Aeron worker client. One operation is one complete round of every worker of a
 * {@link LocalAeronJob} over IPC on an embedded media driver: worker 0 submits and awaits on the benchmark thread,
 * every other worker on a thread of its own (started together, no allocation in the hand-off), and the server's
 * agent runs on its thread. Run with JMH's GC profiler and read {@code gc.alloc.rate.norm}: bytes per round allocated
 * by every thread of the JVM (the workers' client code, the server's agent, the driver). The secondary results
 * {@code worker0Bytes / worker0Rounds} are worker 0's share alone (see {@link WorkerAllocation}).
 * <pre>
 *   ./dlion bench ClientAllocationBenchmark -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Threads(1)
public class ClientAllocationBenchmark {
    private static final long ROUND_TIMEOUT_MS = 60_000;

    @Param({"10000000"})
    public long params;

    @Param({"2", "3"})
    public int workers;

    @Param({"MAJORITY", "AVERAGE"})
    public VoteRule rule;

    private LocalAeronJob job;
    private VoteExchange[] exchanges;
    private long[][] votes;
    private Thread[] helpers;
    private final AtomicLong released = new AtomicLong(-1);
    private AtomicLongArray finished;
    private final AtomicReference<Throwable> helperError = new AtomicReference<>();
    private volatile boolean running;
    private final IdleStrategy idle = new BackoffIdleStrategy(100, 10, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MICROSECONDS.toNanos(100));
    private long round;

    @Setup(Level.Trial)
    public void setUp() {
        job = LocalAeronJob.launch(new LocalAeronJob.Context().jobId(1).workers(workers).paramCount(params).rule(rule)
            .transport(LocalAeronJob.Transport.IPC));
        exchanges = new VoteExchange[workers];
        votes = new long[workers][];
        finished = new AtomicLongArray(workers);
        for (int w = 0; w < workers; w++) {
            exchanges[w] = job.exchange(w);
            votes[w] = SyntheticVotes.vote(7, 0, w, params);
            finished.set(w, -1);
        }
        running = true;
        helpers = new Thread[workers];
        for (int w = 1; w < workers; w++) {
            final int worker = w;
            helpers[w] = new Thread(() -> runHelper(worker), "worker-" + w);
            helpers[w].setDaemon(true);
            helpers[w].start();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        running = false;
        for (int w = 1; w < workers; w++) {
            helpers[w].join(TimeUnit.SECONDS.toMillis(10));
        }
        job.close();
    }

    /**
     * Worker 0's allocation, reported next to the GC profiler's figures as two counters summed over the measured
     * iterations: {@code worker0Bytes} (allocated by the benchmark thread, {@code ThreadMXBean}) and
     * {@code worker0Rounds}; their ratio is one worker's bytes per round. Read once per iteration, so that measuring
     * allocates nothing per round.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class WorkerAllocation {
        private static final com.sun.management.ThreadMXBean THREADS = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

        /** Bytes the benchmark thread (worker 0) allocated in the iteration. */
        public long worker0Bytes;
        /** Rounds in the iteration. */
        public long worker0Rounds;
        private long start;

        @Setup(Level.Iteration)
        public void start() {
            worker0Bytes = 0;
            worker0Rounds = 0;
            start = THREADS.getCurrentThreadAllocatedBytes();
        }

        @TearDown(Level.Iteration)
        public void stop() {
            worker0Bytes = THREADS.getCurrentThreadAllocatedBytes() - start;
        }
    }

    /**
     * @param allocation worker 0's allocation counter.
     * @return the voter mask of worker 0's result, so that nothing is optimised away.
     */
    @Benchmark
    public long round(final WorkerAllocation allocation) throws TimeoutException, InterruptedException {
        final long r = round++;
        released.set(r);
        exchanges[0].submit(r, votes[0], params);
        final long mask = exchanges[0].await(r, ROUND_TIMEOUT_MS).voterSet().word(0);
        idle.reset();
        for (int w = 1; w < workers; w++) {
            while (finished.get(w) != r) {
                if (helperError.get() != null) {
                    throw new IllegalStateException("worker " + w + " failed", helperError.get());
                }
                idle.idle();
            }
        }
        allocation.worker0Rounds++;
        return mask;
    }

    private void runHelper(final int worker) {
        final IdleStrategy wait = new BackoffIdleStrategy(100, 10, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MICROSECONDS.toNanos(100));
        long next = 0;
        try {
            while (running) {
                if (released.get() < next) {
                    wait.idle();
                    continue;
                }
                wait.reset();
                exchanges[worker].submit(next, votes[worker], params);
                exchanges[worker].await(next, ROUND_TIMEOUT_MS);
                finished.set(worker, next);
                next++;
            }
        } catch (final TimeoutException | RuntimeException ex) {
            helperError.set(ex);
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
            helperError.set(ex);
        }
    }
}
