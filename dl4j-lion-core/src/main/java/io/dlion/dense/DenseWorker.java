package io.dlion.dense;

import java.util.concurrent.TimeoutException;

import io.dlion.exchange.MeanExchange;
import io.dlion.exchange.RoundTimes;
import org.bytedeco.javacpp.FloatPointer;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.api.BaseTrainingListener;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.concurrency.AffinityManager;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The worker side of dense data-parallel training, the baseline Distributed Lion is measured against (the paper's
 * G-Lion / G-AdamW): a DL4J {@code TrainingListener} that, between the backward pass and the updater, replaces the
 * model's gradient by the mean of every worker's gradient.
 * <pre>
 *   round t:  g_i   = backward(batch_i)                         (DL4J, the model's flat gradient view)
 *             gbar  = (1/N) * sum_i g_i                          (exchange: fp32 up, fp32 down, summed in double)
 *             theta = theta - updater(gbar)                      (the model's own updater: Lion, AdamW, ...)
 * </pre>
 * DL4J calls {@code onBackwardPass} after the gradient is complete and before {@code BaseMultiLayerUpdater.update}
 * (which divides by the minibatch, applies L1/L2, the updater and weight decay), so the updater, its state and the
 * step are DL4J's own: every worker applies the same updater to the same mean from the same parameters and state, and
 * parameters stay bit-identical on all workers. With N identical batches the mean is exactly the gradient (N·g and
 * N·g/N are exact in double), so N workers equal a single model bit for bit.
 * <p>
 * Attach it to a model with {@link #attach}; then {@code model.fit(batch)} once per round, on one thread. Each round
 * records its {@link RoundTimes}: compute (from the end of the previous round to the backward pass), pack (the
 * gradient copied out), wait (submit and await), apply (the mean copied in, the updater and the step, until
 * {@code iterationDone}). A round allocates nothing: the gradient is read and the mean written through one cached
 * pointer into the model's flat gradient view.
 */
public final class DenseWorker extends BaseTrainingListener {
    private final MeanExchange exchange;
    private final long roundTimeoutMillis;
    private final RoundTimes times = new RoundTimes();
    private final float[] gradient;
    private INDArray boundView;
    private FloatPointer pointer;
    private long round;
    private boolean pending;
    private long applyStartNs;

    private DenseWorker(final MeanExchange exchange, final long roundTimeoutMillis) {
        if (exchange.paramCount() > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("dense sharing holds the gradient in one float[]: at most 2^31 - 9 parameters, got "
                + exchange.paramCount());
        }
        this.exchange = exchange;
        this.roundTimeoutMillis = roundTimeoutMillis;
        this.gradient = new float[(int) exchange.paramCount()];
    }

    /**
     * Bind a model to an exchange: adds the worker to the model's listeners.
     *
     * @param model              a MultiLayerNetwork or ComputationGraph with FLOAT parameters and any updater.
     * @param exchange           this worker's end of the mean; its parameter count must be the model's.
     * @param roundTimeoutMillis how long a round waits for the mean at most.
     * @param firstRound         the round submitted first (0 for a new job).
     * @return the worker.
     * @throws IllegalArgumentException when the model, its data type or its size does not fit the exchange.
     */
    public static DenseWorker attach(final Model model, final MeanExchange exchange, final long roundTimeoutMillis, final long firstRound) {
        if (!(model instanceof MultiLayerNetwork) && !(model instanceof ComputationGraph)) {
            throw new IllegalArgumentException("dense sharing trains a MultiLayerNetwork or a ComputationGraph, got " + model.getClass().getName());
        }
        if (model.numParams() != exchange.paramCount()) {
            throw new IllegalArgumentException("the model has " + model.numParams() + " parameters, the exchange " + exchange.paramCount());
        }
        if (model.params().dataType() != DataType.FLOAT) {
            throw new IllegalArgumentException("dense sharing sends fp32 gradients: the model's data type must be FLOAT, got "
                + model.params().dataType());
        }
        if (roundTimeoutMillis < 1) {
            throw new IllegalArgumentException("roundTimeoutMillis must be >= 1, got " + roundTimeoutMillis);
        }
        if (firstRound < 0) {
            throw new IllegalArgumentException("firstRound must be >= 0, got " + firstRound);
        }
        final DenseWorker worker = new DenseWorker(exchange, roundTimeoutMillis);
        worker.round = firstRound;
        if (model instanceof MultiLayerNetwork) {
            ((MultiLayerNetwork) model).addListeners(worker);
        } else {
            ((ComputationGraph) model).addListeners(worker);
        }
        return worker;
    }

    /** @return the next round this worker submits. */
    public long round() {
        return round;
    }

    /** @return the per-phase times of this worker's rounds (read after its rounds, or on its own thread). */
    public RoundTimes times() {
        return times;
    }

    /** @return the exchange. */
    public MeanExchange exchange() {
        return exchange;
    }

    @Override
    public void onBackwardPass(final Model model) {
        final long start = System.nanoTime();
        times.packStarted(start);
        final INDArray view = gradientView(model);
        Nd4j.getExecutioner().commit();
        Nd4j.getAffinityManager().ensureLocation(view, AffinityManager.Location.HOST);
        pointer.position(0).get(gradient, 0, gradient.length);
        final long packed = System.nanoTime();
        times.record(RoundTimes.Phase.PACK, packed - start);
        exchange.submit(round, gradient);
        final float[] mean;
        try {
            mean = exchange.await(round, roundTimeoutMillis);
        } catch (final TimeoutException e) {
            throw new IllegalStateException("dense worker " + exchange.workerId() + ": no mean for round " + round + " within "
                + roundTimeoutMillis + " ms", e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for round " + round, e);
        }
        applyStartNs = System.nanoTime();
        times.record(RoundTimes.Phase.WAIT, applyStartNs - packed);
        pointer.position(0).put(mean, 0, mean.length);
        Nd4j.getAffinityManager().tagLocation(view, AffinityManager.Location.HOST);
        pending = true;
    }

    @Override
    public void iterationDone(final Model model, final int iteration, final int epoch) {
        if (!pending) {
            return;
        }
        final long now = System.nanoTime();
        times.record(RoundTimes.Phase.APPLY, now - applyStartNs);
        times.roundDone(now);
        pending = false;
        round++;
    }

    private INDArray gradientView(final Model model) {
        final INDArray view = model instanceof MultiLayerNetwork
            ? ((MultiLayerNetwork) model).getGradientsViewArray() : ((ComputationGraph) model).getGradientsViewArray();
        if (view != boundView) {
            if (view.length() != gradient.length || view.dataType() != DataType.FLOAT || !view.isVector() || view.elementWiseStride() != 1) {
                throw new IllegalStateException("the model's gradient view must be a contiguous FLOAT vector of " + gradient.length
                    + " values, got " + view.shapeInfoToString());
            }
            boundView = view;
            // the data buffer's address already includes the view's offset (ND4J keeps offsets in its buffers)
            pointer = new FloatPointer(view.data().addressPointer());
        }
        return view;
    }
}
