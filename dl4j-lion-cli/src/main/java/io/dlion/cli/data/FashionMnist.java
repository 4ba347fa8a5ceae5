package io.dlion.cli.data;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Reads Fashion-MNIST (or MNIST) from the IDX files of the distribution, gzipped or not, entirely offline.
 * On Debian the package {@code dataset-fashion-mnist} installs them in {@link #DEFAULT_DIR}.
 * <p>
 * Features are FLOAT in [0, 1], shape [n, 784]; labels are one-hot, shape [n, 10].
 */
public final class FashionMnist {

    /** Where {@code apt-get install dataset-fashion-mnist} puts the files. */
    public static final Path DEFAULT_DIR = Path.of("/usr/share/datasets/fashion-mnist");
    public static final int CLASSES = 10;
    public static final int PIXELS = 28 * 28;

    private static final int IMAGES_MAGIC = 0x00000803;
    private static final int LABELS_MAGIC = 0x00000801;

    private FashionMnist() {
    }

    /**
     * @param dir   directory holding {@code train-images-idx3-ubyte[.gz]} and the three other files.
     * @param train true for the 60k training split, false for the 10k test split.
     * @param limit read at most this many examples (&lt;= 0: all).
     * @return the examples in file order.
     * @throws IOException when a file is missing or malformed; the message says where to get them.
     */
    public static DataSet load(final Path dir, final boolean train, final int limit) throws IOException {
        final String prefix = train ? "train" : "t10k";
        final Path images = find(dir, prefix + "-images-idx3-ubyte");
        final Path labels = find(dir, prefix + "-labels-idx1-ubyte");
        try (DataInputStream img = open(images); DataInputStream lab = open(labels)) {
            checkMagic(img, IMAGES_MAGIC, images);
            checkMagic(lab, LABELS_MAGIC, labels);
            final int count = img.readInt();
            final int rows = img.readInt();
            final int cols = img.readInt();
            final int labelCount = lab.readInt();
            if (count != labelCount || rows * cols != PIXELS) {
                throw new IOException("inconsistent IDX headers: " + count + " images of " + rows + "x" + cols + ", " + labelCount + " labels");
            }
            final int n = limit > 0 ? Math.min(limit, count) : count;
            final byte[] pixels = new byte[n * PIXELS];
            img.readFully(pixels);
            final byte[] classes = new byte[n];
            lab.readFully(classes);
            final float[] features = new float[pixels.length];
            for (int i = 0; i < pixels.length; i++) {
                features[i] = (pixels[i] & 0xFF) / 255f;
            }
            final float[] oneHot = new float[n * CLASSES];
            for (int i = 0; i < n; i++) {
                final int c = classes[i] & 0xFF;
                if (c >= CLASSES) {
                    throw new IOException("label " + c + " out of range at example " + i + " of " + labels);
                }
                oneHot[i * CLASSES + c] = 1f;
            }
            final INDArray f = Nd4j.create(features, new long[] {n, PIXELS}, DataType.FLOAT);
            final INDArray l = Nd4j.create(oneHot, new long[] {n, CLASSES}, DataType.FLOAT);
            return new DataSet(f, l);
        } catch (final EOFException e) {
            throw new IOException("truncated IDX file in " + dir, e);
        }
    }

    private static Path find(final Path dir, final String name) throws IOException {
        for (final String candidate : new String[] {name + ".gz", name}) {
            final Path p = dir.resolve(candidate);
            if (Files.isRegularFile(p)) {
                return p;
            }
        }
        throw new IOException("Fashion-MNIST file " + name + "[.gz] not found in " + dir
            + " (on Debian/Ubuntu: apt-get install dataset-fashion-mnist; or download the four IDX files from"
            + " github.com/zalandoresearch/fashion-mnist and pass their directory)");
    }

    private static DataInputStream open(final Path p) throws IOException {
        final InputStream in = new BufferedInputStream(Files.newInputStream(p), 1 << 16);
        return new DataInputStream(p.toString().endsWith(".gz") ? new GZIPInputStream(in, 1 << 16) : in);
    }

    private static void checkMagic(final DataInputStream in, final int magic, final Path p) throws IOException {
        final int actual = in.readInt();
        if (actual != magic) {
            throw new IOException(p + " is not an IDX file of the expected kind: magic " + Integer.toHexString(actual));
        }
    }
}
