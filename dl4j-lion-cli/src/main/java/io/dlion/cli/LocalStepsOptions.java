package io.dlion.cli;

import io.dlion.cli.train.TrainConfig;
import io.dlion.cli.train.TrainConfigs;
import io.dlion.dist.LocalSteps;
import picocli.CommandLine.Option;

/** Local steps between votes, the data split over the workers and a validation split (train, worker, sweep). */
final class LocalStepsOptions {

    @Option(names = "--local-steps", description = "D-Lion: H local Lion steps per vote; the vote is on the pseudo-gradient of the H steps,"
        + " with an outer momentum; 1 = per-step D-Lion (default: ${DEFAULT-VALUE})")
    int localSteps = LocalSteps.STEPS_DEFAULT;

    @Option(names = "--outer-lr-scale", description = "with --local-steps H > 1: the outer sign step is this times H times --lr"
        + " (default: ${DEFAULT-VALUE})")
    double outerLrScale = LocalSteps.OUTER_LR_SCALE_DEFAULT;

    @Option(names = "--outer-beta1", description = "with --local-steps H > 1: the outer vote's beta1 (default: ${DEFAULT-VALUE})")
    double outerBeta1 = LocalSteps.OUTER_BETA1_DEFAULT;

    @Option(names = "--outer-beta2", description = "with --local-steps H > 1: the outer momentum's beta2 (default: ${DEFAULT-VALUE})")
    double outerBeta2 = LocalSteps.OUTER_BETA2_DEFAULT;

    @Option(names = "--partition", description = "how the training data is split over the workers: iid, dirichlet:ALPHA (label skew)"
        + " or classes:K (K classes per worker), drawn from --seed (default: ${DEFAULT-VALUE})")
    String partition = "iid";

    @Option(names = "--validation", description = "hold out the last K training examples and report accuracy on them instead of the"
        + " test set, for tuning (default: 0, the test set)")
    int validation;

    /**
     * @param config a configuration from {@link TrainConfigs#of}.
     * @return the configuration with these options, validated; errors name the option.
     */
    TrainConfig apply(final TrainConfig config) {
        return TrainConfigs.localSteps(config, settings(), partition, validation);
    }

    /** @return the local-step settings; errors name the option. */
    LocalSteps settings() {
        require(localSteps >= 1, "--local-steps must be >= 1, got " + localSteps);
        require(outerLrScale > 0 && Double.isFinite(outerLrScale), "--outer-lr-scale must be > 0, got " + outerLrScale);
        require(outerBeta1 >= 0 && outerBeta1 < 1, "--outer-beta1 must be in [0, 1), got " + outerBeta1);
        require(outerBeta2 >= 0 && outerBeta2 < 1, "--outer-beta2 must be in [0, 1), got " + outerBeta2);
        return new LocalSteps().steps(localSteps).outerLrScale(outerLrScale).outerBeta1(outerBeta1).outerBeta2(outerBeta2);
    }

    private static void require(final boolean ok, final String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
