package io.dlion.examples;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import io.dlion.Lion;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Channels;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.client.AeronHandOver;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.cli.data.FashionMnist;
import io.dlion.dist.JobRun;
import io.dlion.job.DLionJob;
import io.dlion.vote.VoteRule;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.lossfunctions.LossFunctions.LossFunction;

/**
 * One worker process with the network hand-over: nothing shared between the workers but the server. A killed worker
 * started again with {@code --rejoin} takes a live worker's parameters through the server, and a worker whose round
 * result is lost (its job sees {@code RejoinRequiredException}) rejoins by itself. Its own 784-300-100-10 network,
 * checkpoints every 25 rounds.
 * <pre>
 * ./dlion secret job.secret
 * ./dlion server --job 1 --workers 3 --params 266610 --udp 10.0.0.1:40123:40124 --secret-file job.secret
 * java -cp ... io.dlion.examples.NetworkRejoin SERVER MY_ADDRESS VOTE_PORT ID WORKERS EPOCHS TRAIN_LIMIT CKPT_DIR SECRET_FILE RUN_ID [--rejoin]
 * </pre>
 * It prints {@code params-sha256 worker=ID HASH} at the end: every worker prints the same hash.
 */
public final class NetworkRejoin {
    private NetworkRejoin() {
    }

    /**
     * @param args server host, this host's address, the server's vote port (its control port is the next one), this
     *             worker's id, the number of workers, epochs, training examples to use (0 = all), the checkpoint
     *             directory, the job's secret file, the run id (the same for every worker of a job start), and
     *             {@code --rejoin} for a restarted worker.
     * @throws Exception when training fails.
     */
    public static void main(final String[] args) throws Exception {
        final String server = args[0];
        final String myAddress = args[1];
        final int votePort = Integer.parseInt(args[2]);
        final int id = Integer.parseInt(args[3]);
        final int n = Integer.parseInt(args[4]);
        final int epochs = Integer.parseInt(args[5]);
        final int trainLimit = Integer.parseInt(args[6]);
        final Path checkpoints = Path.of(args[7]);
        final byte[] secret = Files.readAllBytes(Path.of(args[8]));
        final JobRun run = new JobRun(1, args[9]);
        final boolean rejoin = args.length > 10 && "--rejoin".equals(args[10]);

        final DataSet all = FashionMnist.load(FashionMnist.DEFAULT_DIR, true, trainLimit);
        final MultiLayerNetwork net = mlp();
        try (AeronRuntime aeron = AeronRuntime.launch(new AeronRuntime.Context())) {
            // the hand-over's subscription shares the exchange's result endpoint: one tagged channel string for both
            final SliceEndpoint slice = new SliceEndpoint(0, 0, -1, Channels.udpVotes(server, votePort, n), Configuration.VOTE_STREAM_ID_DEFAULT,
                Channels.udpResultsSubscription(myAddress, n, aeron.aeron().nextCorrelationId()), Configuration.RESULT_STREAM_ID_DEFAULT);
            try (AeronHandOver handOver = new AeronHandOver(new AeronHandOver.Context()
                     .aeron(aeron.aeron()).jobId(1).workerId(id).workers(n).run(run).secret(secret).slice(slice).join(rejoin));
                 AeronVoteExchange exchange = new AeronVoteExchange(new AeronVoteExchange.Context()
                     .aeron(aeron.aeron()).jobId(1).workerId(id).workers(n).paramCount(net.numParams()).rule(VoteRule.MAJORITY)
                     .secret(secret).join(rejoin).slices(List.of(slice))
                     .sideAgent(handOver));                         // the donor sends while it waits for a round
                 DLionJob job = DLionJob.builder(net, OneModelPerProcess.shard(all, id, n, 20), exchange).epochs(epochs)
                     .handOver(handOver).rejoin(rejoin).run(run).checkpoints(checkpoints, 25)
                     .listener(new DLionJob.Listener() {
                         @Override
                         public void onEvent(final String message) {
                             System.out.println("EVENT " + message);
                         }
                     })
                     .build()) {
                final Model trained = job.fit();
                System.out.println("params-sha256 worker=" + id + " " + OneModelPerProcess.sha256(trained.params()));
            }
        }
    }

    /** @return a 784-300-100-10 MLP with Lion, the same seed on every worker. */
    static MultiLayerNetwork mlp() {
        final MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder()
            .seed(42)
            .updater(new Lion(3e-4))
            .list()
            .layer(new DenseLayer.Builder().nIn(784).nOut(300).activation(Activation.RELU).build())
            .layer(new DenseLayer.Builder().nIn(300).nOut(100).activation(Activation.RELU).build())
            .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(100).nOut(10).activation(Activation.SOFTMAX).build())
            .build());
        net.init();
        return net;
    }
}
