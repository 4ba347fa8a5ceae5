package io.dlion.bench.codec;

import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
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
import org.openjdk.jmh.annotations.Warmup;

import io.dlion.codec.DeltaApplier;
import io.dlion.codec.SignPacker;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoterSet;
import io.dlion.vote.VoteAggregator;

/**
 * Worker-side codec against a plain copy of the same FLOAT vector: {@code copyAssign} (into a preallocated
 * array, the strict baseline), {@code copyDup} (a new array each time), {@code pack} (sign bits to the host,
 * NaN/Inf check included), {@code applyMajority} (odd N, 1 plane) and {@code applyAverage} (N = 8, 4 planes).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx4g", "-Dorg.bytedeco.javacpp.maxbytes=12G", "-Dorg.bytedeco.javacpp.maxphysicalbytes=16G"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@State(Scope.Benchmark)
public class SignCodecBenchmark {

    @Param({"10000000", "100000000"})
    public long params;

    private INDArray c;
    private INDArray copy;
    private INDArray update;
    private SignPacker packer;
    private DeltaApplier applier;
    private long[] words;
    private long round;
    private RoundResult majority;
    private RoundResult average;

    @Setup(Level.Trial)
    public void setUp() {
        c = Nd4j.randn(DataType.FLOAT, params);
        copy = Nd4j.create(DataType.FLOAT, params);
        update = Nd4j.create(DataType.FLOAT, params);
        packer = new SignPacker(params, DataType.FLOAT);
        applier = new DeltaApplier();
        words = new long[packer.words()];
        final Random random = new Random(1);
        final long[][] votes = new long[8][words.length];
        for (final long[] v : votes) {
            for (int w = 0; w < v.length; w++) {
                v[w] = random.nextLong();
            }
            v[v.length - 1] &= lastMask(params);
        }
        final long[] sign = new long[words.length];
        VoteAggregator.majority(votes, 7, 0, words.length, sign, null);
        majority = RoundResult.majority(0, params, 7, VoterSet.all(7), sign, null);
        final long[][] planes = new long[VoteAggregator.planes(8)][words.length];
        VoteAggregator.count(votes, 8, 0, words.length, planes);
        average = RoundResult.average(0, params, 8, VoterSet.all(8), planes);
    }

    private static long lastMask(final long n) {
        final int valid = (int) (n - ((n - 1) >>> 6 << 6));
        return valid == 64 ? -1L : Long.reverseBytes(-1L << (64 - valid));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        packer.close();
        applier.close();
    }

    @Benchmark
    public INDArray copyAssign() {
        return copy.assign(c);
    }

    @Benchmark
    public void copyDup() {
        c.dup().close();
    }

    @Benchmark
    public long[] pack() {
        packer.pack(c, round++, words);
        return words;
    }

    @Benchmark
    public INDArray applyMajority() {
        applier.addScaled(majority, update, 0, params, 1e-4);
        return update;
    }

    @Benchmark
    public INDArray applyAverage() {
        applier.addScaled(average, update, 0, params, 1e-4);
        return update;
    }
}
