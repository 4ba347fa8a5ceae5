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
    DL4J_THRESHOLD("dl4j-threshold");

    private final String cliName;

    Sharing(final String cliName) {
        this.cliName = cliName;
    }

    public String cliName() {
        return cliName;
    }

    /** @return the value for a command-line name, or an exception naming the valid ones. */
    public static Sharing parse(final String name) {
        for (final Sharing s : values()) {
            if (s.cliName.equals(name)) {
                return s;
            }
        }
        throw new IllegalArgumentException("--sharing must be one of none, dlion-mavo, dlion-avg, dl4j-threshold, got '" + name + "'");
    }
}
