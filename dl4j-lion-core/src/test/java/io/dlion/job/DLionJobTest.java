package io.dlion.job;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.dlion.Lion;
import io.dlion.dist.DLionCheckpoint;
import io.dlion.dist.JobRun;
import io.dlion.dist.LocalSteps;
import io.dlion.exchange.JoinNotice;
import io.dlion.exchange.InProcessVoteHub;
import io.dlion.vote.VoteRule;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.api.BaseTrainingListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.lossfunctions.LossFunctions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DLionJobTest {
    private static final int WORKERS = 2;
    private static final int ROUNDS = 5;

    @TempDir
    Path dir;

    static MultiLayerNetwork net() {
        final MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder().seed(3).dataType(DataType.DOUBLE)
            .updater(new Lion(0.01)).list()
            .layer(new DenseLayer.Builder().nIn(4).nOut(5).activation(Activation.TANH).build())
            .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(5).nOut(3).activation(Activation.SOFTMAX).build())
            .build());
        net.init();
        return net;
    }

    static ListDataSetIterator<DataSet> shard(final int worker) {
        final List<DataSet> batches = new ArrayList<>();
        final java.util.Random random = new java.util.Random(100 + worker);
        for (int b = 0; b < ROUNDS; b++) {
            final INDArray f = Nd4j.create(DataType.DOUBLE, 4, 4);
            final INDArray l = Nd4j.zeros(DataType.DOUBLE, 4, 3);
            for (int i = 0; i < 4; i++) {
                for (int j = 0; j < 4; j++) {
                    f.putScalar(i, j, random.nextGaussian());
                }
                l.putScalar(i, random.nextInt(3), 1);
            }
            batches.add(new DataSet(f, l));
        }
        return new ListDataSetIterator<>(batches, 1);
    }

    @Test
    void shouldTrainEpochsOfRoundsWithDl4jListenersAndCheckpoints() throws Exception {
        final InProcessVoteHub hub = new InProcessVoteHub(WORKERS, VoteRule.MAJORITY, 30_000);
        final AtomicInteger epochStarts = new AtomicInteger();
        final AtomicInteger epochEnds = new AtomicInteger();
        final AtomicInteger iterations = new AtomicInteger();
        final List<DLionJob> jobs = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            final MultiLayerNetwork net = net();
            if (i == 0) {
                net.setListeners(new BaseTrainingListener() {
                    @Override
                    public void onEpochStart(final Model model) {
                        epochStarts.incrementAndGet();
                    }

                    @Override
                    public void onEpochEnd(final Model model) {
                        epochEnds.incrementAndGet();
                    }

                    @Override
                    public void iterationDone(final Model model, final int iteration, final int epoch) {
                        iterations.incrementAndGet();
                    }
                });
            }
            jobs.add(DLionJob.builder(net, shard(i), hub.exchange(i)).epochs(3).checkpoints(dir, 5).build());
        }
        assertEquals(ROUNDS, jobs.get(0).roundsPerEpoch(), "counted from the shard");
        final ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
        try {
            final List<Future<Model>> done = new ArrayList<>();
            for (final DLionJob job : jobs) {
                done.add(pool.submit(job::fit));
            }
            final INDArray p0 = done.get(0).get(60, TimeUnit.SECONDS).params();
            final INDArray p1 = done.get(1).get(60, TimeUnit.SECONDS).params();
            assertEquals(p0, p1, "workers end bit-identical");
        } finally {
            pool.shutdownNow();
        }
        assertEquals(3 * ROUNDS, jobs.get(0).round());
        assertTrue(jobs.get(0).done());
        assertEquals(3, epochStarts.get());
        assertEquals(3, epochEnds.get());
        assertEquals(3 * ROUNDS, iterations.get());
        assertEquals(3, ((MultiLayerNetwork) jobs.get(0).model()).getEpochCount(), "the epoch count advances as in fit(iterator)");
        final Path checkpoint = DLionJob.checkpointOf(dir, 1);
        assertTrue(Files.exists(checkpoint));
        assertEquals(3 * ROUNDS, DLionCheckpoint.read(checkpoint).round(), "written every 5 rounds, last at the end");
        for (final DLionJob job : jobs) {
            job.close();
        }
    }

    private static List<INDArray> runLocal(final InProcessVoteHub hub, final Path ckpt, final int epochs, final boolean resume)
        throws Exception {
        final List<DLionJob> jobs = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            jobs.add(DLionJob.builder(net(), shard(i), hub.exchange(i)).epochs(epochs).localSteps(new LocalSteps().steps(2).outerWeightDecay(0.01))
                .checkpoints(ckpt, resume ? 0 : 2).resume(resume).build());
        }
        final ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
        try {
            final List<Future<Model>> done = new ArrayList<>();
            for (final DLionJob job : jobs) {
                done.add(pool.submit(job::fit));
            }
            final List<INDArray> out = new ArrayList<>();
            for (final Future<Model> f : done) {
                out.add(f.get(60, TimeUnit.SECONDS).params().dup());
            }
            return out;
        } finally {
            pool.shutdownNow();
            for (final DLionJob job : jobs) {
                job.close();
            }
        }
    }

    /**
     * H = 2, 2 epochs of 5 steps: 5 outer rounds, checkpoints every 2 (the last at round 4 = step 8, inside epoch 2); a
     * resume from it trains the last outer round and ends bit-identical to the run that never stopped (inner Lion state
     * in the model zip, outer momentum in the checkpoint). One epoch of 5 steps ends with a shorter outer step: the
     * workers still end bit-identical.
     */
    @Test
    void shouldResumeLocalStepsAtAnOuterBoundaryBitForBit() throws Exception {
        final Path ckpt = dir.resolve("local");
        final List<INDArray> whole = runLocal(new InProcessVoteHub(WORKERS, VoteRule.MAJORITY, 30_000), ckpt, 2, false);
        assertEquals(whole.get(0), whole.get(1), "workers bit-identical");
        assertEquals(4, DLionCheckpoint.read(DLionJob.checkpointOf(ckpt, 0)).round());
        assertEquals(2, DLionCheckpoint.read(DLionJob.checkpointOf(ckpt, 0)).localSteps());
        final List<INDArray> resumed = runLocal(new InProcessVoteHub(WORKERS, VoteRule.MAJORITY, 30_000), ckpt, 2, true);
        assertEquals(whole.get(0), resumed.get(0), "the resumed run ends where the whole run did");
        assertEquals(whole.get(1), resumed.get(1));

        final List<INDArray> odd = runLocal(new InProcessVoteHub(WORKERS, VoteRule.MAJORITY, 30_000), dir.resolve("odd"), 1, false);
        assertEquals(odd.get(0), odd.get(1), "a shorter last outer step keeps the workers bit-identical");

        final InProcessVoteHub hub = new InProcessVoteHub(WORKERS, VoteRule.MAJORITY, 30_000);
        final IllegalArgumentException wrongH = assertThrows(IllegalArgumentException.class, () -> DLionJob.builder(net(), shard(0),
            hub.exchange(0)).localSteps(new LocalSteps().steps(3)).checkpoints(ckpt, 0).resume(true).build());
        assertTrue(wrongH.getMessage().contains("localSteps=2") && wrongH.getMessage().contains("localSteps=3"), wrongH.getMessage());
    }

    @Test
    void shouldRefuseBadSettingsNamingThem() {
        final InProcessVoteHub hub = new InProcessVoteHub(1, VoteRule.MAJORITY, 1000);
        assertMessage("epochs", () -> DLionJob.builder(net(), shard(0), hub.exchange(0)).epochs(0).build());
        assertMessage("rejoin needs a handOver", () -> DLionJob.builder(net(), shard(0), hub.exchange(0)).rejoin(true).build());
        assertMessage("exclude each other", () -> DLionJob.builder(net(), shard(0), hub.exchange(0)).rejoin(true).resume(true)
            .checkpoints(dir, 0).handOver(new DirectoryHandOver(dir)).build());
        assertMessage("checkpoints need a directory", () -> DLionJob.builder(net(), shard(0), hub.exchange(0)).checkpoints(null, 3).build());
        assertMessage("rejoinAttempts must be >= 0", () -> DLionJob.builder(net(), shard(0), hub.exchange(0)).rejoinAttempts(-1).build());
        assertMessage("rejoin needs rejoinAttempts >= 1", () -> DLionJob.builder(net(), shard(0), hub.exchange(0)).rejoin(true)
            .rejoinAttempts(0).handOver(new DirectoryHandOver(dir)).build());
        assertMessage("localSteps must be >= 1", () -> DLionJob.builder(net(), shard(0), hub.exchange(0)).localSteps(new LocalSteps().steps(0))
            .build());
    }

    @Test
    void shouldRefuseACheckpointOrHandOverOfAnotherRunNamingBoth() throws Exception {
        final JobRun earlier = new JobRun(7, "run-earlier");
        final JobRun now = new JobRun(7, "run-now");
        final InProcessVoteHub hub = new InProcessVoteHub(1, VoteRule.MAJORITY, 1000);
        final DLionJob first = DLionJob.builder(net(), shard(0), hub.exchange(0)).run(earlier).checkpoints(dir, 1).build();
        first.fit();
        first.close();
        assertEquals(earlier, DLionCheckpoint.read(DLionJob.checkpointOf(dir, 0)).run(), "the checkpoint carries job and run id");

        final InProcessVoteHub again = new InProcessVoteHub(1, VoteRule.MAJORITY, 1000);
        final IllegalStateException resume = assertThrows(IllegalStateException.class,
            () -> DLionJob.builder(net(), shard(0), again.exchange(0)).run(now).checkpoints(dir, 0).resume(true).build());
        assertTrue(resume.getMessage().contains("run 'run-earlier'") && resume.getMessage().contains("run 'run-now'"), resume.getMessage());
        final DLionJob sameRun = DLionJob.builder(net(), shard(0), again.exchange(0)).run(earlier).checkpoints(dir, 0).resume(true).build();
        assertEquals(ROUNDS, sameRun.round(), "the same run resumes");

        // a stale hand-over file of the earlier run where the donor's would be: refused, and the wait ends at its timeout
        final Path sync = dir.resolve("sync");
        final DirectoryHandOver stale = new DirectoryHandOver(sync, earlier);
        final JoinNotice notice = new JoinNotice(0, ROUNDS, 0);
        stale.give(notice, sameRun.accumulator());
        final java.util.concurrent.TimeoutException refused = assertThrows(java.util.concurrent.TimeoutException.class,
            () -> new DirectoryHandOver(sync, now).take(notice, 300, () -> { }));
        assertTrue(refused.getMessage().contains("run 'run-earlier'") && refused.getMessage().contains("run 'run-now'"), refused.getMessage());
        assertEquals(earlier, new DirectoryHandOver(sync, earlier).take(notice, 300, () -> { }).run(), "the same run's file is taken");
        sameRun.close();
    }

    @Test
    void shouldSayWhichWorkersShardEndedEarly() throws Exception {
        final InProcessVoteHub hub = new InProcessVoteHub(1, VoteRule.MAJORITY, 1000);
        final DLionJob job = DLionJob.builder(net(), shard(0), hub.exchange(0)).roundsPerEpoch(ROUNDS + 1).build();
        final IllegalStateException e = assertThrows(IllegalStateException.class, job::fit);
        assertTrue(e.getMessage().contains("shard ended after " + ROUNDS), e.getMessage());
    }

    private static void assertMessage(final String part, final org.junit.jupiter.api.function.Executable build) {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, build);
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }
}
