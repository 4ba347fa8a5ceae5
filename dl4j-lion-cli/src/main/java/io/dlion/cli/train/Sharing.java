package io.dlion.cli.train;

/** How the workers of a training run share what they learn. */
public enum Sharing {
    /** One model, no exchange: the global-batch baseline. */
    NONE("none"),
    /** Distributed Lion, majority vote of the 1-bit signs. */
    DLION_MAVO("dlion-mavo"),
    /** Distributed Lion, average of the 1-bit signs. */
    DLION_AVG("dlion-avg"),
    /** DL4J's own ParallelWrapper gradient sharing with threshold encoding (EncodedGradientsAccumulator). */
    DL4J_THRESHOLD("dl4j-threshold"),
    /** Dense data-parallel baseline (the paper's G-Lion): fp32 gradients averaged through the server, Lion on the mean. */
    DENSE_LION("dense-lion"),
    /** Dense data-parallel baseline (the paper's G-AdamW): fp32 gradients averaged through the server, AdamW on the mean. */
    DENSE_ADAMW("dense-adamw");

    private final String cliName;

    Sharing(final String cliName) {
        this.cliName = cliName;
    }

    public String cliName() {
        return cliName;
    }

    /** @return true for D-Lion (sign votes through the aggregation server). */
    public boolean isDLion() {
        return this == DLION_MAVO || this == DLION_AVG;
    }

    /** @return true for the dense data-parallel baseline (fp32 gradients averaged through the server). */
    public boolean isDense() {
        return this == DENSE_LION || this == DENSE_ADAMW;
    }

    /** @return the optimizer the sharing applies ({@code lion} or {@code adamw}), or null when any may be chosen. */
    public String impliedOptimizer() {
        switch (this) {
            case DLION_MAVO:
            case DLION_AVG:
            case DENSE_LION:
                return "lion";
            case DENSE_ADAMW:
                return "adamw";
            default:
                return null;
        }
    }

    /** @return the value for a command-line name, or an exception naming the valid ones. */
    public static Sharing parse(final String name) {
        for (final Sharing s : values()) {
            if (s.cliName.equals(name)) {
                return s;
            }
        }
        throw new IllegalArgumentException("--sharing must be one of none, dlion-mavo, dlion-avg, dl4j-threshold, dense-lion, dense-adamw, got '"
            + name + "'");
    }
}
