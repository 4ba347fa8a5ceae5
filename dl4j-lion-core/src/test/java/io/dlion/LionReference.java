package io.dlion;

/**
 * Plain DOUBLE reference of one Lion step, written straight from the paper's pseudo-code
 * (Chen et al. 2023, Program 1), independent of the ND4J composition under test.
 */
final class LionReference {
    private LionReference() {
    }

    /**
     * One step. Returns the update (DL4J convention: params -= update) and updates m in place.
     *
     * @param cOut receives c = beta1*m + (1-beta1)*g, so tests can tell near-zero c apart.
     */
    static double[] step(final double[] g, final double[] m, final double lr, final double beta1, final double beta2, final double[] cOut) {
        final double[] update = new double[g.length];
        for (int i = 0; i < g.length; i++) {
            final double c = beta1 * m[i] + (1 - beta1) * g[i];
            cOut[i] = c;
            update[i] = lr * Math.signum(c);
            m[i] = beta2 * m[i] + (1 - beta2) * g[i];
        }
        return update;
    }
}
