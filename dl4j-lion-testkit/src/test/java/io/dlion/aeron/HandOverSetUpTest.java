package io.dlion.aeron;

import java.util.List;
import java.util.concurrent.TimeUnit;

import io.dlion.Lion;
import io.dlion.aeron.client.AeronHandOver;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.job.DLionJob;
import io.dlion.testkit.Frames;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.lossfunctions.LossFunctions;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Network hand-over set-ups that could never hand over fail at once, naming what is missing, instead of a rejoin
 * timing out minutes later: an exchange without the hand-over as its side agent (the donor would never send), and a
 * result channel with an ephemeral port and no tag (the relay's frames would go to a port nobody listens on).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HandOverSetUpTest {
    private static final int JOB = 82;

    @Test
    void shouldRefuseAnUntaggedEphemeralResultChannel() {
        final String untagged = Channels.udpResultsSubscription("127.0.0.1", 3);
        try (AeronRuntime runtime = AeronRuntime.launch(new AeronRuntime.Context())) {
            final long start = System.nanoTime();
            final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> new AeronHandOver(
                new AeronHandOver.Context().aeron(runtime.aeron()).jobId(JOB).workers(3).workerId(2)
                    .slice(new SliceEndpoint(0, 0, -1, Channels.udpVotes("127.0.0.1", 40123, 3), 1701, untagged, 1702))));
            assertTrue(refused.getMessage().contains("no tags") && refused.getMessage().contains("Channels.udpResultsSubscription(host, streams,"),
                refused.getMessage());
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(1), "at once");
        }
    }

    @Test
    void shouldFailAtBuildWhenTheExchangeDoesNotRunTheHandOver() throws Exception {
        final MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder().seed(3).dataType(DataType.FLOAT)
            .updater(new Lion(0.01)).list()
            .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(4).nOut(2).activation(Activation.SOFTMAX).build())
            .build());
        net.init();
        try (LocalAeronJob job = LocalAeronJob.launch(new LocalAeronJob.Context().jobId(JOB).workers(2).paramCount(net.numParams())
            .secret(Frames.SECRET))) {
            AeronHandOver handOver = null;
            AeronVoteExchange exchange = null;
            try {
                handOver = new AeronHandOver(new AeronHandOver.Context().aeron(job.aeron()).jobId(JOB).workers(2).workerId(0)
                    .secret(Frames.SECRET).slice(job.slices().get(0)).streamId(job.context().handOverStreamId()));
                exchange = new AeronVoteExchange(new AeronVoteExchange.Context().aeron(job.aeron()).jobId(JOB).workerId(0).workers(2)
                    .paramCount(net.numParams()).rule(VoteRule.MAJORITY).secret(Frames.SECRET).slices(job.slices()));
                final DLionJob.Builder builder = DLionJob.builder(net, new ListDataSetIterator<>(List.of(new DataSet(Nd4j.rand(DataType.FLOAT, 2, 4),
                    Nd4j.zeros(DataType.FLOAT, 2, 2))), 1), exchange).handOver(handOver);
                final long start = System.nanoTime();
                final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, builder::build);
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(1), "at once");
                assertTrue(refused.getMessage().contains("AeronVoteExchange.Context.sideAgent must be this hand-over")
                    && refused.getMessage().contains("got none"), refused.getMessage());
            } finally {
                CloseHelper.closeAll(exchange, handOver);
            }
        }
    }
}
