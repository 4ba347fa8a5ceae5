package io.dlion.bench.codec;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

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
import org.openjdk.jmh.annotations.Warmup;

import io.dlion.vote.VoteAggregator;

/**
 * Server-side aggregation on one thread: majority vote (MaVo) and counting (Avg) of N random packed vote
 * vectors, whole vector in one call. Throughput in parameters x voters per second = params * voters / time.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms6g", "-Xmx6g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@State(Scope.Benchmark)
public class VoteAggregationBenchmark {

    @Param({"4", "8", "16", "32"})
    public int voters;

    @Param({"10000000", "100000000"})
    public long params;

    private long[][] votes;
    private long[] sign;
    private long[] tie;
    private long[][] planes;
    private int words;

    @Setup(Level.Trial)
    public void setUp() {
        words = (int) ((params + 63) >>> 6);
        final SplittableRandom random = new SplittableRandom(voters);
        votes = new long[voters][words];
        for (final long[] v : votes) {
            for (int w = 0; w < words; w++) {
                v[w] = random.nextLong();
            }
        }
        sign = new long[words];
        tie = new long[words];
        planes = new long[VoteAggregator.planes(voters)][words];
    }

    @Benchmark
    public int majority() {
        return VoteAggregator.majority(votes, voters, 0, words, sign, tie);
    }

    @Benchmark
    public long[][] average() {
        VoteAggregator.count(votes, voters, 0, words, planes);
        return planes;
    }
}
