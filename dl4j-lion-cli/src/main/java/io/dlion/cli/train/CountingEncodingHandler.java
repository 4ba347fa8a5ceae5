package io.dlion.cli.train;

import java.util.concurrent.atomic.AtomicLong;

import org.deeplearning4j.optimize.solvers.accumulation.EncodingHandler;
import org.deeplearning4j.optimize.solvers.accumulation.encoding.ResidualPostProcessor;
import org.deeplearning4j.optimize.solvers.accumulation.encoding.ThresholdAlgorithm;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * DL4J's own threshold/bitmap encoding handler, counting the bytes of every encoded message it produces.
 * In DL4J's gradient sharing every worker's message goes to every other worker, so with N workers one
 * message of b bytes is b bytes up (its sender) and (N - 1) * b bytes down (the others).
 */
final class CountingEncodingHandler extends EncodingHandler {
    private static final long serialVersionUID = 1L;

    private final int workers;
    private final AtomicLong bytesUp = new AtomicLong();
    private final AtomicLong bytesDown = new AtomicLong();
    private final AtomicLong messages = new AtomicLong();

    CountingEncodingHandler(final ThresholdAlgorithm algorithm, final ResidualPostProcessor postProcessor, final int boundary, final int workers) {
        super(algorithm, postProcessor, boundary, false);
        this.workers = workers;
    }

    @Override
    public INDArray encodeUpdates(final int iteration, final int epoch, final INDArray updates) {
        final INDArray message = super.encodeUpdates(iteration, epoch, updates);
        if (message != null) {
            final long bytes = message.length() * message.dataType().width();
            bytesUp.addAndGet(bytes);
            bytesDown.addAndGet(bytes * (workers - 1));
            messages.incrementAndGet();
        }
        return message;
    }

    long bytesUp() {
        return bytesUp.get();
    }

    long bytesDown() {
        return bytesDown.get();
    }

    long messages() {
        return messages.get();
    }
}
