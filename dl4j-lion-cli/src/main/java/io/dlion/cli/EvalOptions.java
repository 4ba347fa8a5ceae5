package io.dlion.cli;

import io.dlion.cli.train.TrainConfig;
import io.dlion.cli.train.TrainConfigs;
import picocli.CommandLine.Option;

/** Test accuracy more often than once per epoch, for time-to-accuracy measurements (train, worker). */
final class EvalOptions {

    @Option(names = "--eval-every", paramLabel = "K", description = "also evaluate worker 0's model every K steps (a multiple of"
        + " --local-steps), printed as 'step S  test accuracy A' and written to OUT/evals.csv with the epochs' evaluations; the time it"
        + " takes is left out of the training time, and the parameters are not touched (default: ${DEFAULT-VALUE} = after each epoch"
        + " only)")
    int evalEvery;

    /**
     * @param config a configuration with its local steps set.
     * @return the configuration with this option, validated; errors name the option.
     */
    TrainConfig apply(final TrainConfig config) {
        return TrainConfigs.evalEvery(config, evalEvery);
    }
}
