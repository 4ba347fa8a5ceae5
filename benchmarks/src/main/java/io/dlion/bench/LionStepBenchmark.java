package io.dlion.bench;

import java.util.concurrent.TimeUnit;

import io.dlion.Lion;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.GradientUpdater;
import org.nd4j.linalg.learning.config.Adam;
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

/**
 * One optimizer step on the same flat FLOAT array: {@link Lion} (composed of in-place ND4J ops) against
 * DL4J's {@code AdamUpdater} (one fused native op). The gradient is refilled from a fixed random array
 * before every step (a copy, the same for both), so both see realistic values; subtract
 * {@link #copyOnly()} to get the step alone.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx4g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class LionStepBenchmark {

    @Param({"1000000", "10000000"})
    public int n;

    private INDArray source;
    private INDArray gradient;
    private GradientUpdater<?> lion;
    private GradientUpdater<?> adam;
    private int iteration;

    @Setup(Level.Trial)
    public void setUp() {
        Nd4j.getRandom().setSeed(1);
        source = Nd4j.randn(DataType.FLOAT, n);
        gradient = Nd4j.create(DataType.FLOAT, n);
        final Lion lionConfig = new Lion(1e-4);
        final Adam adamConfig = new Adam(1e-3);
        lion = lionConfig.instantiate(Nd4j.create(DataType.FLOAT, 1, lionConfig.stateSize(n)), true);
        adam = adamConfig.instantiate(Nd4j.create(DataType.FLOAT, 1, adamConfig.stateSize(n)), true);
    }

    @Benchmark
    public INDArray copyOnly() {
        gradient.assign(source);
        Nd4j.getExecutioner().commit();
        return gradient;
    }

    @Benchmark
    public INDArray lionStep() {
        gradient.assign(source);
        lion.applyUpdater(gradient, iteration++, 0);
        Nd4j.getExecutioner().commit();
        return gradient;
    }

    @Benchmark
    public INDArray adamStep() {
        gradient.assign(source);
        adam.applyUpdater(gradient, iteration++, 0);
        Nd4j.getExecutioner().commit();
        return gradient;
    }
}
