package io.dlion.aeron;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.Lion;
import io.dlion.aeron.client.AeronHandOver;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.dist.JobRun;
import io.dlion.exchange.VoteExchange;
import io.dlion.job.DLionJob;
import io.dlion.testkit.Frames;
import io.dlion.testkit.LostRoundExchange;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.lossfunctions.LossFunctions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A worker whose round result is lost in the middle of {@code fit} ({@link io.dlion.aeron.client.RejoinRequiredException})
 * rejoins by itself: its {@link DLionJob} makes its exchange join anew, takes a live worker's parameters through the
 * network hand-over (relayed by the real server) and goes on, in the next epoch here; all three workers end
 * bit-identical. The loss is injected by wrapping worker 2's real exchange ({@link LostRoundExchange}): its await of one
 * round throws, as the exchange does when a later round's frame overtakes an incomplete result.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DLionJobRejoinTest {
    private static final int JOB = 81;
    private static final int WORKERS = 3;
    private static final int ROUNDS_PER_EPOCH = 8;
    private static final long LOST_ROUND = 7;
    private static final JobRun RUN = new JobRun(JOB, "dlion-job-rejoin-test");

    private final ExecutorService threads = Executors.newFixedThreadPool(WORKERS);

    @AfterEach
    void tearDown() throws InterruptedException {
        threads.shutdownNow();
        threads.awaitTermination(10, TimeUnit.SECONDS);
    }

    @Test
    void shouldRejoinByItselfWhenARoundResultIsLostAndEndBitIdentical() throws Exception {
        rejoinAndCheck(1, LOST_ROUND);
    }

    /**
     * With local steps (H = 2): rounds are outer steps, 8 in the 16 steps; the lost result is of outer round 3, the
     * rejoining worker takes the donor's parameters at an outer boundary (momenta zero) and all end bit-identical.
     */
    @Test
    void shouldRejoinAtAnOuterBoundaryWithLocalSteps() throws Exception {
        rejoinAndCheck(2, 3);
    }

    private void rejoinAndCheck(final int localSteps, final long lostRound) throws Exception {
        final long params = net().numParams();
        try (LocalAeronJob job = LocalAeronJob.launch(new LocalAeronJob.Context().jobId(JOB).workers(WORKERS).paramCount(params)
            .minVoters(2).secret(Frames.SECRET).roundTimeoutNs(TimeUnit.SECONDS.toNanos(20)))) {
            final List<String> events = Collections.synchronizedList(new ArrayList<>());
            final List<Future<INDArray>> running = new ArrayList<>();
            for (int i = 0; i < WORKERS; i++) {
                final int id = i;
                running.add(threads.submit(() -> train(job, id, events, localSteps, lostRound)));
            }
            final List<INDArray> trained = new ArrayList<>();
            for (final Future<INDArray> f : running) {
                trained.add(f.get(150, TimeUnit.SECONDS));
            }
            for (int i = 1; i < WORKERS; i++) {
                assertEquals(trained.get(0), trained.get(i), "worker " + i + " ends with worker 0's parameters: " + events);
            }
            assertTrue(events.stream().anyMatch(e -> e.startsWith("worker 2: rejoin attempt 1 of 3: ") && e.contains("round " + lostRound)), events.toString());
            assertTrue(events.stream().anyMatch(e -> e.startsWith("worker 2 took worker ")), events.toString());
            assertEquals(1, events.stream().filter(e -> e.contains("rejoin attempt")).count(), "one attempt was enough: " + events);
        }
    }

    private static INDArray train(final LocalAeronJob job, final int id, final List<String> events, final int localSteps, final long lostRound)
        throws Exception {
        final MultiLayerNetwork net = net();
        AeronHandOver handOver = null;
        AeronVoteExchange exchange = null;
        try {
            handOver = new AeronHandOver(new AeronHandOver.Context().aeron(job.aeron()).jobId(JOB).workers(WORKERS).workerId(id).run(RUN)
                .secret(Frames.SECRET).slice(job.slices().get(0)).streamId(job.context().handOverStreamId()));
            exchange = new AeronVoteExchange(new AeronVoteExchange.Context().aeron(job.aeron()).jobId(JOB).workerId(id).workers(WORKERS)
                .paramCount(net.numParams()).rule(VoteRule.MAJORITY).secret(Frames.SECRET).slices(job.slices()).sideAgent(handOver));
            final VoteExchange used = id == 2 ? new LostRoundExchange(exchange, lostRound, 0) : exchange;
            try (DLionJob dlion = DLionJob.builder(net, shard(id), used).epochs(2).roundsPerEpoch(ROUNDS_PER_EPOCH).run(RUN)
                .roundTimeoutMillis(60_000).handOver(handOver).localSteps(new io.dlion.dist.LocalSteps().steps(localSteps)).listener(new DLionJob.Listener() {
                    @Override
                    public void onEvent(final String message) {
                        events.add(message);
                    }
                }).build()) {
                dlion.fit();
                assertEquals(2L * ROUNDS_PER_EPOCH / localSteps, dlion.round());
                return dlion.model().params().dup();
            }
        } finally {
            CloseHelper.closeAll(exchange, handOver);
        }
    }

    private static MultiLayerNetwork net() {
        final MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder().seed(11).dataType(DataType.FLOAT)
            .updater(new Lion(0.01)).list()
            .layer(new DenseLayer.Builder().nIn(20).nOut(32).activation(Activation.TANH).build())
            .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(32).nOut(3).activation(Activation.SOFTMAX).build())
            .build());
        net.init();
        return net;
    }

    private static ListDataSetIterator<DataSet> shard(final int worker) {
        final List<DataSet> batches = new ArrayList<>();
        for (int b = 0; b < ROUNDS_PER_EPOCH; b++) {
            Nd4j.getRandom().setSeed(1000L * worker + b);
            final INDArray labels = Nd4j.zeros(DataType.FLOAT, 4, 3);
            for (int r = 0; r < 4; r++) {
                labels.putScalar(r, (r + b + worker) % 3, 1f);
            }
            batches.add(new DataSet(Nd4j.rand(DataType.FLOAT, 4, 20), labels));
        }
        return new ListDataSetIterator<>(batches, 1);
    }
}
