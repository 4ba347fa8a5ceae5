package io.dlion.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import io.dlion.aeron.Topology;
import io.dlion.exchange.VoteExchange;
import io.dlion.job.DLionJob;
import io.dlion.testkit.LostRoundExchange;
import org.apache.spark.api.java.JavaSparkContext;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.nd4j.linalg.dataset.DataSet;

/**
 * A barrier task whose round result is lost rejoins inside the stage, with real Spark ({@code local[3]}, one stage
 * attempt: a failed task fails the job at once), real ND4J and Aeron over UDP loopback. Task 2 stalls in round
 * {@value #LOST_ROUND} past the servers' deadline, so they go on without it (a majority votes), and then finds that
 * round's result lost ({@link LostRoundExchange}, as its exchange does when a later round's frame comes first): it
 * rejoins with a live task's parameters through the hand-over relayed by slice 0's server, logs the attempt, and every
 * task ends with the same parameters, in both topologies. A task that cannot rejoin fails the job, saying why.
 */
class SparkRejoinTest {
    private static final int WORKERS = 3;
    private static final int BATCH = 32;
    private static final int ROUNDS_PER_EPOCH = 30;
    private static final int EPOCHS = 2;
    private static final long LOST_ROUND = 5;
    private static final long SERVER_DEADLINE_MS = 2_000;
    /** Past the deadline: the servers leave task 2 out of the round and the others go on. */
    private static final long STALL_MS = SERVER_DEADLINE_MS + 600;
    /** Every round takes at least this long, so the others run at most STALL - DEADLINE / PACE rounds ahead of the stalled task. */
    private static final long PACE_MS = 25;
    private static final Queue<String> EVENTS = new ConcurrentLinkedQueue<>();

    private static JavaSparkContext sc;
    private static List<DataSet> batches;

    @BeforeAll
    static void startSpark() throws Exception {
        // one attempt of the barrier stage: a failed task fails the job with its message instead of a retried stage
        sc = new JavaSparkContext(SparkTestSupport.localConf("local[" + WORKERS + "]", "dlion-spark-rejoin")
            .set("spark.stage.maxConsecutiveAttempts", "1"));
        batches = SparkTestSupport.trainBatches(WORKERS * ROUNDS_PER_EPOCH * BATCH, BATCH);
    }

    @AfterAll
    static void stopSpark() {
        if (sc != null) {
            sc.stop();
        }
    }

    @BeforeEach
    void clearEvents() {
        EVENTS.clear();
    }

    @ParameterizedTest
    @EnumSource(value = Topology.Kind.class, names = {"STAR", "SHARDED"})
    @Timeout(240)
    void shouldRejoinATaskThatLostARoundInsideTheStageAndEndBitIdentical(final Topology.Kind topology) {
        final DLionSparkTrainer<MultiLayerNetwork> trainer = new DLionSparkTrainer<>(sc, SparkTestSupport.mlp(64), options(topology)
            .exchangeDecorator(new LoseRound(2, LOST_ROUND, STALL_MS)));

        final MultiLayerNetwork trained = trainer.fit(sc.parallelize(batches, WORKERS));

        final List<TaskReport> reports = trainer.reports();
        assertEquals(WORKERS, reports.size());
        for (final TaskReport r : reports) {
            assertEquals(0, r.stageAttempt(), "no task failed, no stage ran again: " + r + " " + EVENTS);
            assertEquals((long) EPOCHS * ROUNDS_PER_EPOCH, r.rounds(), r.toString());
            assertEquals(reports.get(0).paramsSha256(), r.paramsSha256(), "bit-identical parameters on every task: " + reports);
        }
        assertEquals(reports.get(0).paramsSha256(), BarrierTraining.sha256(trained.params()), "the driver's network is the tasks'");
        assertTrue(EVENTS.stream().anyMatch(e -> e.startsWith("worker 2: rejoin attempt 1 of 3: ") && e.contains("round " + LOST_ROUND)),
            EVENTS.toString());
        assertTrue(EVENTS.stream().anyMatch(e -> e.startsWith("worker 2 took worker ")), EVENTS.toString());
        assertEquals(1, EVENTS.stream().filter(e -> e.contains("rejoin attempt")).count(), "one attempt was enough: " + EVENTS);
    }

    @Test
    @Timeout(240)
    void shouldFailATaskThatLostARoundWhenRejoinIsOffSayingWhy() {
        final DLionSparkTrainer<MultiLayerNetwork> trainer = new DLionSparkTrainer<>(sc, SparkTestSupport.mlp(64), options(Topology.Kind.STAR)
            .rejoinAttempts(0).exchangeDecorator(new LoseRound(2, LOST_ROUND, 0)));

        final Exception failed = assertThrows(Exception.class, () -> trainer.fit(sc.parallelize(batches, WORKERS)));

        final String why = messages(failed);
        assertTrue(why.contains("worker 2 cannot rejoin the job: rejoin is off (rejoinAttempts=0)"), why);
        assertTrue(why.contains("round " + LOST_ROUND + "'s result never arrived"), why);
        assertTrue(EVENTS.stream().noneMatch(e -> e.contains("rejoin attempt")), EVENTS.toString());
    }

    /**
     * The last round's result is lost: the other tasks are done, so no live task trains on to hand its parameters over,
     * and every attempt waits its round timeout in vain.
     */
    @Test
    @Timeout(240)
    void shouldFailATaskThatCannotRejoinAfterItsAttemptsSayingWhy() {
        final long last = (long) EPOCHS * ROUNDS_PER_EPOCH - 1;
        final DLionSparkTrainer<MultiLayerNetwork> trainer = new DLionSparkTrainer<>(sc, SparkTestSupport.mlp(64), options(Topology.Kind.STAR)
            .rejoinAttempts(2).roundTimeoutMillis(3_000).exchangeDecorator(new LoseRound(2, last, 0)));

        final Exception failed = assertThrows(Exception.class, () -> trainer.fit(sc.parallelize(batches, WORKERS)));

        final String why = messages(failed);
        assertTrue(why.contains("worker 2 could not rejoin the job in 2 attempts"), why);
        assertTrue(why.contains("round " + last + "'s result never arrived"), why);
        assertTrue(EVENTS.stream().anyMatch(e -> e.startsWith("worker 2: rejoin attempt 1 of 2: ")), EVENTS.toString());
        assertTrue(EVENTS.stream().anyMatch(e -> e.startsWith("worker 2: rejoin attempt 2 of 2: ")), EVENTS.toString());
    }

    /**
     * With every task in the quorum the job cannot go on without the stalled task: the servers wait for it past the deadline
     * while its process lives (it votes round 5 late, 0.6 s past the deadline), but it loses that round's result and leaves
     * to rejoin, so round 6, whose quorum is every task, is aborted and the job fails instead of going on. (Before the
     * servers waited for live tasks below the quorum, round 5 itself was aborted at its deadline.)
     */
    @Test
    @Timeout(240)
    void shouldFailTheStageWhenTheQuorumIsEveryTaskAndOneStalls() {
        final DLionSparkTrainer<MultiLayerNetwork> trainer = new DLionSparkTrainer<>(sc, SparkTestSupport.mlp(64), options(Topology.Kind.STAR)
            .minVoters(WORKERS).exchangeDecorator(new LoseRound(2, LOST_ROUND, STALL_MS)));

        final Exception failed = assertThrows(Exception.class, () -> trainer.fit(sc.parallelize(batches, WORKERS)));

        final String why = messages(failed);
        assertTrue((why.contains("round " + LOST_ROUND + " aborted") || why.contains("round " + (LOST_ROUND + 1) + " aborted"))
            && why.contains("fewer than the job's quorum (minVoters)"), why);
    }

    @Test
    void shouldRejectAWrongQuorumOrRejoinAttemptsNamingThem() {
        final IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
            () -> new DLionSparkOptions().batchSizePerWorker(8).minVoters(-1).conclude());
        assertTrue(negative.getMessage().contains("minVoters"), negative.getMessage());
        final DLionSparkTrainer<MultiLayerNetwork> tooMany = new DLionSparkTrainer<>(sc, SparkTestSupport.mlp(8),
            new DLionSparkOptions().batchSizePerWorker(8).minVoters(WORKERS + 1));
        final IllegalArgumentException above = assertThrows(IllegalArgumentException.class, () -> tooMany.fit(sc.parallelize(batches, WORKERS)));
        assertTrue(above.getMessage().contains("minVoters") && above.getMessage().contains(String.valueOf(WORKERS)), above.getMessage());
        final IllegalArgumentException attempts = assertThrows(IllegalArgumentException.class,
            () -> new DLionSparkOptions().batchSizePerWorker(8).rejoinAttempts(-1).conclude());
        assertTrue(attempts.getMessage().contains("rejoinAttempts"), attempts.getMessage());
    }

    private static DLionSparkOptions options(final Topology.Kind topology) {
        return new DLionSparkOptions().epochs(EPOCHS).batchSizePerWorker(BATCH).topology(topology).progressMillis(0)
            .roundTimeoutMillis(60_000).serverRoundTimeoutMillis(SERVER_DEADLINE_MS).listener(new Paced());
    }

    private static String messages(final Throwable failed) {
        final StringBuilder sb = new StringBuilder();
        for (Throwable t = failed; t != null; t = t.getCause()) {
            sb.append(t.getMessage()).append('\n');
        }
        return sb.toString();
    }

    /** Task {@code worker}'s exchange loses round {@code round}'s result in the stage's first attempt. */
    private static final class LoseRound implements DLionSparkOptions.ExchangeDecorator {
        private static final long serialVersionUID = 1L;
        private final int worker;
        private final long round;
        private final long stallMillis;

        LoseRound(final int worker, final long round, final long stallMillis) {
            this.worker = worker;
            this.round = round;
            this.stallMillis = stallMillis;
        }

        @Override
        public VoteExchange wrap(final VoteExchange exchange, final int id, final int stageAttempt) {
            return id == worker && stageAttempt == 0 ? new LostRoundExchange(exchange, round, stallMillis) : exchange;
        }
    }

    /** Every task's rounds take at least {@link #PACE_MS}; every task's events are collected. */
    private static final class Paced implements DLionSparkOptions.ListenerFactory {
        private static final long serialVersionUID = 1L;

        @Override
        public DLionJob.Listener create(final int worker, final int stageAttempt) {
            return new DLionJob.Listener() {
                @Override
                public void onRound(final DLionJob job, final double score) {
                    try {
                        Thread.sleep(PACE_MS);
                    } catch (final InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }

                @Override
                public void onEvent(final String message) {
                    EVENTS.add(message);
                }
            };
        }
    }
}
