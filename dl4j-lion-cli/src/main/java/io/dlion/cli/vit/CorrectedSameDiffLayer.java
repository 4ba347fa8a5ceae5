package io.dlion.cli.vit;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

import org.deeplearning4j.nn.api.Layer;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.gradient.Gradient;
import org.deeplearning4j.nn.workspace.LayerWorkspaceMgr;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.nd4j.autodiff.samediff.SDVariable;
import org.nd4j.autodiff.samediff.SameDiff;
import org.nd4j.autodiff.util.SameDiffUtils;
import org.nd4j.common.primitives.Pair;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.memory.MemoryWorkspace;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.ops.impl.layers.ExternalErrorsFunction;
import org.nd4j.linalg.factory.Nd4j;

/**
 * DL4J's runtime {@code SameDiffLayer} with correct gradients.
 * <p>
 * In DL4J 1.0.0-M2.1 every custom {@code SameDiffLayer} returns twice the true gradient, for its parameters and for
 * its input: {@code ExternalErrorsFunction.doDiff} registers the placeholder holding dL/dOutput as the output's
 * gradient and also returns it, and {@code DifferentialFunction.diff} then adds the returned value to the registered
 * one, so the graph backpropagates {@code 2·dL/dOutput}. Stacked layers compound it (2^k for the k-th SameDiff layer
 * from the top). This class measures the factor once per JVM on a four-weight graph built the way DL4J builds a
 * layer's graph ({@link #externalErrorsFactor()}: out = in ⊙ w, all ones, so dL/dw must be 1), and divides the incoming epsilon by it — a power of two, so
 * the correction is exact — leaving DL4J untouched if a later version fixes the bug (factor 1).
 */
final class CorrectedSameDiffLayer extends org.deeplearning4j.nn.layers.samediff.SameDiffLayer {

    private static volatile double factor;

    CorrectedSameDiffLayer(final NeuralNetConfiguration conf, final DataType dataType) {
        super(conf, dataType);
    }

    /** Builds and initialises the runtime layer, as {@code SameDiffLayer.instantiate} does. */
    static Layer instantiate(final NeuralNetConfiguration conf, final Collection<TrainingListener> listeners,
                             final int layerIndex, final INDArray paramsView, final boolean initializeParams,
                             final DataType dataType) {
        final CorrectedSameDiffLayer layer = new CorrectedSameDiffLayer(conf, dataType);
        layer.setIndex(layerIndex);
        layer.setParamsViewArray(paramsView);
        final Map<String, INDArray> params = conf.getLayer().initializer().init(conf, paramsView, initializeParams);
        layer.setParamTable(params);
        layer.setConf(conf);
        return layer;
    }

    @Override
    public Pair<Gradient, INDArray> backpropGradient(final INDArray epsilon, final LayerWorkspaceMgr workspaceMgr) {
        final double f = externalErrorsFactor();
        return super.backpropGradient(f == 1.0 ? epsilon : epsilon.mul(1.0 / f), workspaceMgr);
    }

    /**
     * @return the factor by which this DL4J version's SameDiff layers scale dL/dOutput: 2 in 1.0.0-M2.1, 1 once fixed.
     * @throws IllegalStateException if it is neither.
     */
    static double externalErrorsFactor() {
        double f = factor;
        if (f == 0.0) {
            f = measureFactor();
            factor = f;
        }
        return f;
    }

    @SuppressWarnings("try")
    private static double measureFactor() {
        try (MemoryWorkspace ws = Nd4j.getWorkspaceManager().scopeOutOfWorkspaces()) {
            final SameDiff sd = SameDiff.create();
            final SDVariable in = sd.placeHolder(INPUT_KEY, DataType.DOUBLE, -1, 2);
            final SDVariable w = sd.var("w", Nd4j.ones(DataType.DOUBLE, 2, 2));
            final SDVariable out = in.mul(w);
            final ExternalErrorsFunction fn = SameDiffUtils.externalErrors(sd, null, out);
            fn.outputVariable();
            sd.createGradFunction(INPUT_KEY);
            final Map<String, INDArray> placeholders = new HashMap<>();
            placeholders.put(INPUT_KEY, Nd4j.ones(DataType.DOUBLE, 2, 2));
            placeholders.put(fn.getGradPlaceholderName(), Nd4j.ones(DataType.DOUBLE, 2, 2));
            final double measured = sd.calculateGradients(placeholders, "w").get("w").getDouble(0);
            if (measured != 1.0 && measured != 2.0) {
                throw new IllegalStateException("unexpected SameDiff external-errors gradient factor " + measured
                    + "; this DL4J version's SameDiffLayer backprop is not supported");
            }
            return measured;
        }
    }
}
