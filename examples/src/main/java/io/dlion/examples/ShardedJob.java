package io.dlion.examples;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.GZIPInputStream;

import io.dlion.Lion;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.Topology;
import io.dlion.aeron.client.AeronHandOver;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.server.SliceServers;
import io.dlion.dist.JobRun;
import io.dlion.job.DLionJob;
import io.dlion.vote.VoteRule;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.lossfunctions.LossFunctions.LossFunction;

/**
 * A sharded job of worker processes, built from the library alone (no command line, no server of its own): every rank
 * serves one slice of the parameters, and when a rank dies the next live rank takes its slice over. A rank killed and
 * started again with {@code --rejoin} finds every slice's server, takes a live rank's parameters through slice 0's
 * server, and serves again once a later death moves a slice to it (its own first). Every rank prints
 * {@code params-sha256 worker=RANK HASH} at the end: all print the same.
 * <pre>
 * ./dlion secret job.secret
 * # on each of the hosts H0..H3, rank r:
 * java @jvm.args -cp ... io.dlion.examples.ShardedJob r H0,H1,H2,H3 40123 EPOCHS TRAIN_LIMIT job.secret RUN_ID [--rejoin]
 * </pre>
 * Rank r serves slice r on its host, votes on port {@code 40123 + 2r}, results controlled from the next port
 * ({@link Topology#sharded(List, int)}). Fashion-MNIST is read from {@value #DATA_DIR} (the idx files, gzipped).
 */
public final class ShardedJob {
    /** Where Debian's {@code dataset-fashion-mnist} puts the files. */
    static final String DATA_DIR = "/usr/share/datasets/fashion-mnist";
    private static final int BATCH = 50;

    private ShardedJob() {
    }

    /**
     * @param args this rank, the hosts of every rank (comma-separated, by rank), the base port, epochs, training examples
     *             to use (0 = all), the job's secret file, the run id (the same for every rank of a job start), and
     *             {@code --rejoin} for a restarted rank.
     * @throws Exception when training fails.
     */
    public static void main(final String[] args) throws Exception {
        final int rank = Integer.parseInt(args[0]);
        final List<String> hosts = Arrays.asList(args[1].split(","));
        final int basePort = Integer.parseInt(args[2]);
        final int epochs = Integer.parseInt(args[3]);
        final int trainLimit = Integer.parseInt(args[4]);
        final byte[] secret = Files.readAllBytes(Path.of(args[5]));
        final JobRun run = new JobRun(1, args[6]);
        final boolean rejoin = args.length > 7 && "--rejoin".equals(args[7]);
        final int n = hosts.size();

        final MultiLayerNetwork net = mlp();
        final DataSetIterator myShard = shard(fashionMnist(Path.of(DATA_DIR), trainLimit), rank, n, BATCH);
        final Topology topology = Topology.sharded(hosts, basePort);
        final long params = net.numParams();
        try (AeronRuntime aeron = AeronRuntime.launch(new AeronRuntime.Context())) {
            // slice 0's result channel tagged: the hand-over's subscription to slice 0's relay shares its endpoint
            final List<SliceEndpoint> slices = topology.endpoints(params, topology.chunkWords(params, Configuration.chunkWords()), n,
                topology.host(rank), aeron.aeron().nextCorrelationId());
            try (AeronHandOver handOver = new AeronHandOver(new AeronHandOver.Context()
                     .aeron(aeron.aeron()).jobId(1).workerId(rank).workers(n).run(run).secret(secret).slice(slices.get(0)).join(rejoin));
                 AeronVoteExchange exchange = new AeronVoteExchange(new AeronVoteExchange.Context()
                     .aeron(aeron.aeron()).jobId(1).workerId(rank).workers(n).paramCount(params).rule(VoteRule.MAJORITY)
                     .secret(secret).join(rejoin).slices(slices)
                     .topology(topology)                        // serve this rank's slice, take over a dead rank's
                     .sliceServers(new SliceServers.Context().roundTimeoutNs(3_000_000_000L).listener(ShardedJob::serving))
                     .sideAgent(handOver));                     // a donor sends while it waits for a round
                 DLionJob job = DLionJob.builder(net, myShard, exchange).epochs(epochs)
                     .handOver(handOver).rejoin(rejoin).run(run)
                     .listener(new DLionJob.Listener() {
                         @Override
                         public void onEpochEnd(final DLionJob j, final int epoch) {
                             System.out.println("epoch " + epoch + " done at round " + j.round());
                         }

                         @Override
                         public void onEvent(final String message) {
                             System.out.println("EVENT " + message);
                         }
                     })
                     .build()) {
                final Model trained = job.fit();
                System.out.println("params-sha256 worker=" + rank + " " + sha256(trained.params()));
            }
        }
    }

    private static void serving(final AggregationServer server, final boolean takenOver) {
        System.out.println((takenOver ? "takes over slice " : "serves slice ") + server.context().slice() + " " + server.layout());
    }

    /** @return a 784-64-10 MLP with Lion, the same seed on every rank. */
    static MultiLayerNetwork mlp() {
        final MultiLayerNetwork net = new MultiLayerNetwork(new NeuralNetConfiguration.Builder()
            .seed(42)
            .updater(new Lion(3e-4))
            .list()
            .layer(new DenseLayer.Builder().nIn(784).nOut(64).activation(Activation.RELU).build())
            .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(64).nOut(10).activation(Activation.SOFTMAX).build())
            .build());
        net.init();
        return net;
    }

    /**
     * @param all   the training set.
     * @param rank  this rank.
     * @param n     ranks.
     * @param batch examples per step.
     * @return rank {@code rank}'s batches: examples rank, rank + n, ..., the same number on every rank.
     */
    static DataSetIterator shard(final DataSet all, final int rank, final int n, final int batch) {
        final int perRank = all.numExamples() / n / batch * batch;
        final List<DataSet> mine = new ArrayList<>();
        for (int k = 0; k < perRank; k++) {
            mine.add(all.get(rank + k * n));
        }
        return new ListDataSetIterator<>(DataSet.merge(mine).batchBy(batch), 1);
    }

    /**
     * The training set from the gzipped idx files: pixels scaled to [0, 1], labels one-hot.
     *
     * @param dir   the directory with {@code train-images-idx3-ubyte.gz} and {@code train-labels-idx1-ubyte.gz}.
     * @param limit the first examples to use, 0 for all.
     * @return the examples.
     * @throws IOException when a file is missing or not an idx file.
     */
    static DataSet fashionMnist(final Path dir, final int limit) throws IOException {
        try (DataInputStream images = idx(dir.resolve("train-images-idx3-ubyte.gz"), 2051);
             DataInputStream labels = idx(dir.resolve("train-labels-idx1-ubyte.gz"), 2049)) {
            final int count = images.readInt();
            final int rows = images.readInt();
            final int cols = images.readInt();
            if (labels.readInt() != count) {
                throw new IOException("images and labels in " + dir + " differ in count");
            }
            final int m = limit > 0 ? Math.min(limit, count) : count;
            final float[] pixels = new float[m * rows * cols];
            final float[] oneHot = new float[m * 10];
            final byte[] image = new byte[rows * cols];
            for (int i = 0; i < m; i++) {
                images.readFully(image);
                for (int p = 0; p < image.length; p++) {
                    pixels[i * image.length + p] = (image[p] & 0xFF) / 255f;
                }
                oneHot[i * 10 + labels.readUnsignedByte()] = 1f;
            }
            return new DataSet(Nd4j.create(pixels, new long[] {m, (long) rows * cols}), Nd4j.create(oneHot, new long[] {m, 10}));
        }
    }

    private static DataInputStream idx(final Path file, final int magic) throws IOException {
        final InputStream in = new GZIPInputStream(Files.newInputStream(file), 1 << 16);
        final DataInputStream data = new DataInputStream(in);
        if (data.readInt() != magic) {
            data.close();
            throw new IOException(file + " is not an idx file with magic " + magic);
        }
        return data;
    }

    /**
     * @param params the parameters.
     * @return SHA-256 of their values.
     * @throws Exception when SHA-256 is missing.
     */
    static String sha256(final INDArray params) throws Exception {
        Nd4j.getExecutioner().commit();
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(params.dup().data().asBytes()));
    }
}
