package io.dlion.cli.data;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Reads CIFAR-10 from the files of its binary distribution
 * (<a href="https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz">cifar-10-binary.tar.gz</a>), offline.
 * <p>
 * Training split: {@code data_batch_1.bin} … {@code data_batch_5.bin} (10,000 images each); test split:
 * {@code test_batch.bin}. Each file is a sequence of 3073-byte records: one label byte (0–9), then the 32x32
 * image as 1024 red, 1024 green and 1024 blue bytes, each plane row-major.
 * <p>
 * Features are FLOAT, shape {@code [n, 3072]}, in that same channel-major (CHW) order, normalized per channel:
 * {@code (byte / 255 - MEAN[c]) / STD[c]} with the usual training-set statistics {@link #MEAN} =
 * (0.4914, 0.4822, 0.4465) and {@link #STD} = (0.2470, 0.2435, 0.2616). Labels are one-hot, shape {@code [n, 10]}.
 * Images keep file order (training files in order 1 to 5); shuffle and augment with {@link Cifar10Iterator}.
 */
public final class Cifar10 {

    /** Where the binary distribution can be downloaded. */
    public static final String DOWNLOAD_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz";
    /** The folder the archive unpacks to; {@link #load} also looks inside it. */
    public static final String ARCHIVE_FOLDER = "cifar-10-batches-bin";
    /** Training files, in the order they are read. */
    public static final List<String> TRAIN_FILES = List.of(
        "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin");
    /** Test file. */
    public static final String TEST_FILE = "test_batch.bin";

    /** Number of classes. */
    public static final int CLASSES = 10;
    /** Image height and width. */
    public static final int SIDE = 32;
    /** Colour channels (R, G, B). */
    public static final int CHANNELS = 3;
    /** Values per image: 3 x 32 x 32. */
    public static final int PIXELS = CHANNELS * SIDE * SIDE;
    /** Bytes per record: the label byte and the image. */
    public static final int RECORD_BYTES = 1 + PIXELS;
    /** Class names, by label. */
    public static final List<String> LABELS = List.of(
        "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck");

    private static final float[] MEAN_VALUES = {0.4914f, 0.4822f, 0.4465f};
    private static final float[] STD_VALUES = {0.2470f, 0.2435f, 0.2616f};

    /** Per-channel mean (R, G, B) of the training images on the [0, 1] scale. */
    public static final List<Float> MEAN = List.of(MEAN_VALUES[0], MEAN_VALUES[1], MEAN_VALUES[2]);
    /** Per-channel standard deviation (R, G, B) of the training images on the [0, 1] scale. */
    public static final List<Float> STD = List.of(STD_VALUES[0], STD_VALUES[1], STD_VALUES[2]);

    private Cifar10() {
    }

    /**
     * @param dir   directory holding the {@code .bin} files, or its parent holding {@value #ARCHIVE_FOLDER}.
     * @param train true for the 50k training split, false for the 10k test split.
     * @param limit read at most this many examples (&lt;= 0: all).
     * @return the examples in file order.
     * @throws IOException when a file of the split is missing (the message names the expected files and where to
     *                     get them), truncated (size not a multiple of {@value #RECORD_BYTES}), or holds a label
     *                     outside 0–9.
     */
    public static DataSet load(final Path dir, final boolean train, final int limit) throws IOException {
        final List<Path> files = files(dir, train);
        long available = 0;
        for (final Path f : files) {
            available += Files.size(f) / RECORD_BYTES;
        }
        final int n = (int) (limit > 0 ? Math.min(limit, available) : available);
        final float[] features = new float[Math.multiplyExact(n, PIXELS)];
        final float[] oneHot = new float[n * CLASSES];
        final float[] table = normalizationTable();
        final byte[] record = new byte[RECORD_BYTES];
        int i = 0;
        for (final Path f : files) {
            if (i == n) {
                break;
            }
            try (InputStream in = new BufferedInputStream(Files.newInputStream(f), 1 << 16)) {
                for (int r = 0; i < n && readRecord(in, record); r++, i++) {
                    final int label = record[0] & 0xFF;
                    if (label >= CLASSES) {
                        throw new IOException("label " + label + " out of range 0-9 in record " + r + " of " + f);
                    }
                    oneHot[i * CLASSES + label] = 1f;
                    final int base = i * PIXELS;
                    for (int p = 0; p < PIXELS; p++) {
                        features[base + p] = table[(p / (SIDE * SIDE)) * 256 + (record[1 + p] & 0xFF)];
                    }
                }
            }
        }
        final INDArray f = Nd4j.create(features, new long[] {n, PIXELS}, DataType.FLOAT);
        final INDArray l = Nd4j.create(oneHot, new long[] {n, CLASSES}, DataType.FLOAT);
        return new DataSet(f, l);
    }

    /**
     * @param channel 0 (R), 1 (G) or 2 (B).
     * @param pixel   raw byte value 0–255.
     * @return the normalized feature value {@code (pixel / 255 - MEAN[c]) / STD[c]}, as {@link #load} computes it.
     */
    public static float normalize(final int channel, final int pixel) {
        return (pixel / 255f - MEAN_VALUES[channel]) / STD_VALUES[channel];
    }

    /**
     * @return the normalized value of a black pixel per channel, {@code -MEAN[c] / STD[c]}: what zero padding in
     *     pixel space becomes after normalization (the fill of {@link Cifar10Augment#standard(long)}).
     */
    public static float[] normalizedBlack() {
        final float[] black = new float[CHANNELS];
        for (int c = 0; c < CHANNELS; c++) {
            black[c] = normalize(c, 0);
        }
        return black;
    }

    /**
     * The files of one split, checked: all must exist and hold whole records.
     *
     * @param dir   directory holding the {@code .bin} files, or its parent holding {@value #ARCHIVE_FOLDER}.
     * @param train true for the training split.
     * @return the files in reading order.
     * @throws IOException naming the missing or truncated file.
     */
    public static List<Path> files(final Path dir, final boolean train) throws IOException {
        final List<String> names = train ? TRAIN_FILES : List.of(TEST_FILE);
        Path base = dir;
        if (!Files.isRegularFile(dir.resolve(names.get(0))) && Files.isDirectory(dir.resolve(ARCHIVE_FOLDER))) {
            base = dir.resolve(ARCHIVE_FOLDER);
        }
        final List<Path> out = new ArrayList<>(names.size());
        for (final String name : names) {
            final Path p = base.resolve(name);
            if (!Files.isRegularFile(p)) {
                throw new IOException("CIFAR-10 file " + name + " not found in " + base + ": the " + (train ? "training" : "test")
                    + " split needs " + String.join(", ", names) + " of the binary distribution. Download "
                    + DOWNLOAD_URL + ", unpack it (tar xzf cifar-10-binary.tar.gz) and pass the " + ARCHIVE_FOLDER
                    + " directory or its parent");
            }
            final long size = Files.size(p);
            if (size == 0 || size % RECORD_BYTES != 0) {
                throw new IOException("CIFAR-10 file " + p + " is truncated or not a CIFAR-10 binary batch: " + size
                    + " bytes is not a positive multiple of the " + RECORD_BYTES + "-byte record");
            }
            out.add(p);
        }
        return out;
    }

    private static float[] normalizationTable() {
        final float[] table = new float[CHANNELS * 256];
        for (int c = 0; c < CHANNELS; c++) {
            for (int v = 0; v < 256; v++) {
                table[c * 256 + v] = normalize(c, v);
            }
        }
        return table;
    }

    private static boolean readRecord(final InputStream in, final byte[] record) throws IOException {
        final int read = in.readNBytes(record, 0, record.length);
        if (read == 0) {
            return false;
        }
        if (read != record.length) {
            throw new IOException("CIFAR-10 file ended inside a record (" + read + " of " + RECORD_BYTES + " bytes)");
        }
        return true;
    }
}
