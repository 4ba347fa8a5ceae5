package io.dlion.examples;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import io.dlion.Lion;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.Channels;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.SliceEndpoint;
import io.dlion.cli.data.FashionMnist;
import io.dlion.exchange.VoteExchange;
import io.dlion.job.DLionJob;
import io.dlion.job.DirectoryHandOver;
import io.dlion.vote.VoteRule;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.listeners.ScoreIterationListener;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.lossfunctions.LossFunctions.LossFunction;

/**
 * One D-Lion worker per process, votes over Aeron UDP to an aggregation server ({@code ./dlion server}) on another
 * host: a user's own two-layer network, its shard of Fashion-MNIST, the library's training job with rejoin and a
 * directory hand-over. Start the server, then one process per worker; kill one and start it again with
 * {@code --rejoin}: it takes a live worker's parameters and all end bit-identical.
 * <pre>
 * ./dlion secret job.secret      # once; the same file for the server and every worker
 * ./dlion server --job 1 --workers 3 --params 203530 --udp 10.0.0.1:40123:40124 --secret-file job.secret
 * java -cp ... io.dlion.examples.OneModelPerProcess SERVER MY_ADDRESS VOTE_PORT ID WORKERS EPOCHS TRAIN_LIMIT SYNC_DIR SECRET_FILE [--rejoin]
 * </pre>
 */
public final class OneModelPerProcess {
    private OneModelPerProcess() {
    }

    /**
     * @param args server host, this host's address, the server's vote port (its control port is the next one), this
     *             worker's id, the number of workers, epochs, training examples to use (0 = all), the hand-over
     *             directory every worker can reach, the job's secret file, and {@code --rejoin} for a restarted worker.
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
        final Path syncDir = Path.of(args[7]);
        final byte[] secret = Files.readAllBytes(Path.of(args[8]));
        final boolean rejoin = args.length > 9 && "--rejoin".equals(args[9]);

        final DataSet all = FashionMnist.load(FashionMnist.DEFAULT_DIR, true, trainLimit);
        final MultiLayerNetwork net = twoLayerNetwork();
        net.setListeners(new ScoreIterationListener(50));              // DL4J's own listeners keep working
        final Model trained = train(net, shard(all, id, n, 20), server, myAddress, votePort, id, n, epochs, syncDir, secret, rejoin);
        System.out.println("params-sha256 worker=" + id + " " + sha256(trained.params()));
    }

    /**
     * The loop every worker runs (docs/guide.md, "one model per process").
     *
     * @param net       the model, initialised with the same seed on every worker.
     * @param myShard   this worker's batches.
     * @param server    the server's host.
     * @param myAddress this host's address, where the results arrive.
     * @param votePort  the server's vote port; its control port is {@code votePort + 1}.
     * @param id        this worker, 0..n-1.
     * @param n         workers.
     * @param epochs    epochs.
     * @param syncDir   a directory every worker reaches, for the hand-over to a worker that rejoins.
     * @param secret    the job's secret, the bytes of the server's {@code --secret-file}.
     * @param rejoin    this worker was restarted and rejoins the running job.
     * @return the trained model.
     * @throws Exception when training fails.
     */
    static Model train(final MultiLayerNetwork net, final DataSetIterator myShard, final String server, final String myAddress,
        final int votePort, final int id, final int n, final int epochs, final Path syncDir, final byte[] secret, final boolean rejoin)
        throws Exception {
        // README:begin
        try (AeronRuntime aeron = AeronRuntime.launch(new AeronRuntime.Context());
             VoteExchange exchange = new AeronVoteExchange(new AeronVoteExchange.Context()
                 .aeron(aeron.aeron()).jobId(1).workerId(id).workers(n).paramCount(net.numParams()).rule(VoteRule.MAJORITY)
                 .secret(secret)                                      // the job's secret: HELLOs and the server's answers are signed
                 .join(rejoin)                                        // a restarted worker joins the running job
                 .slices(List.of(new SliceEndpoint(0, 0, -1, Channels.udpVotes(server, votePort, n), Configuration.VOTE_STREAM_ID_DEFAULT,
                     Channels.udpResultsSubscription(myAddress, n), Configuration.RESULT_STREAM_ID_DEFAULT))));
             DLionJob job = DLionJob.builder(net, myShard, exchange).epochs(epochs)
                 .handOver(new DirectoryHandOver(syncDir)).rejoin(rejoin) // a live donor's parameters for a restarted worker
                 .build()) {
            return job.fit();                                         // epochs over the shard; DL4J listeners work as usual
        }
        // README:end
    }

    /** @return the user's own model: 784-256-10 with Lion, the same seed on every worker. */
    static MultiLayerNetwork twoLayerNetwork() {
        final MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder()
            .seed(42)
            .updater(new Lion(3e-4))
            .list()
            .layer(new DenseLayer.Builder().nIn(784).nOut(256).activation(Activation.RELU).build())
            .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(256).nOut(10).activation(Activation.SOFTMAX).build())
            .build());
        net.init();
        return net;
    }

    /**
     * @param all   the training set.
     * @param id    this worker.
     * @param n     workers.
     * @param batch examples per worker step.
     * @return worker {@code id}'s batches: examples id, id + n, id + 2n, ..., in batches, the same number on every worker.
     */
    static DataSetIterator shard(final DataSet all, final int id, final int n, final int batch) {
        final int perWorker = all.numExamples() / n / batch * batch;
        final List<DataSet> mine = new ArrayList<>();
        for (int k = 0; k < perWorker; k++) {
            mine.add(all.get(id + k * n));
        }
        return new ListDataSetIterator<>(DataSet.merge(mine).batchBy(batch), 1);
    }

    /**
     * @param params the parameters.
     * @return SHA-256 of their values, as {@code ./dlion train} prints it.
     * @throws Exception when SHA-256 is missing.
     */
    static String sha256(final INDArray params) throws Exception {
        Nd4j.getExecutioner().commit();
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(params.dup().data().asBytes()));
    }
}
