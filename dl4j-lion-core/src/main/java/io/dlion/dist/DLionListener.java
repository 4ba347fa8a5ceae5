package io.dlion.dist;

import java.util.List;

import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.optimize.api.BaseTrainingListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports what D-Lion's exchange did in DL4J's listener output: every {@code frequency} iterations, per
 * worker, the voters of the last round, the tie rate, this worker's alignment with the result, the bytes
 * on the wire so far and the time spent in the round; at the end of each epoch a summary of all workers.
 * <pre>{@code net.setListeners(new ScoreIterationListener(50), new DLionListener(accumulator, 50)); }</pre>
 */
public final class DLionListener extends BaseTrainingListener {
    private static final Logger LOG = LoggerFactory.getLogger(DLionListener.class);

    private final DLionAccumulator accumulator;
    private final int frequency;

    /**
     * @param accumulator the D-Lion accumulator the model trains with.
     * @param frequency   report every this many iterations, &gt;= 1.
     */
    public DLionListener(final DLionAccumulator accumulator, final int frequency) {
        if (frequency < 1) {
            throw new IllegalArgumentException("frequency must be >= 1, got " + frequency);
        }
        this.accumulator = accumulator;
        this.frequency = frequency;
    }

    @Override
    public void iterationDone(final Model model, final int iteration, final int epoch) {
        if (iteration % frequency != 0) {
            return;
        }
        final DLionStats s = accumulator.currentStats();
        LOG.info("D-Lion worker {} round {}: voters {}, ties {}%, alignment {}, up {} B, down {} B, round {} ms",
            s.workerId(), s.rounds(), s.lastVoters(), String.format("%.2f", 100 * s.lastTieRate()),
            String.format("%.3f", s.lastAlignment()), s.bytesUp(), s.bytesDown(), String.format("%.2f", s.lastRoundNanos() / 1e6));
    }

    @Override
    public void onEpochEnd(final Model model) {
        LOG.info(summary(accumulator.stats()));
    }

    /** @return one line summing up every worker's totals. */
    public static String summary(final List<DLionStats> stats) {
        long up = 0;
        long down = 0;
        long rounds = 0;
        long skipped = 0;
        double wait = 0;
        for (final DLionStats s : stats) {
            up += s.bytesUp();
            down += s.bytesDown();
            rounds = Math.max(rounds, s.rounds());
            skipped += s.skippedSteps();
            wait += s.waitNanos() / 1e9;
        }
        return String.format("D-Lion: %d workers, %d rounds, %d bytes up, %d bytes down, %.1f s waiting for votes, %d steps dropped",
            stats.size(), rounds, up, down, wait, skipped);
    }
}
