package io.dlion.cli.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;

/**
 * The reader on small files in the binary format written here: 3 records per training file, 2 in the test file.
 * Record r of file f has label {@code (3f + r) % 10} and pixel byte {@code (7c + p + 11f + 13r) % 256} at channel c,
 * position p of the plane, so every value, channel and record is recognizable.
 */
class Cifar10Test {

    private static final int PLANE = 32 * 32;
    private static final int TEST_FILE_INDEX = 5;

    @TempDir
    Path dir;

    static int label(final int file, final int record) {
        return (3 * file + record) % 10;
    }

    static int pixel(final int file, final int record, final int channel, final int p) {
        return (7 * channel + p + 11 * file + 13 * record) % 256;
    }

    static byte[] records(final int file, final int count) {
        final byte[] bytes = new byte[count * Cifar10.RECORD_BYTES];
        for (int r = 0; r < count; r++) {
            final int base = r * Cifar10.RECORD_BYTES;
            bytes[base] = (byte) label(file, r);
            for (int c = 0; c < 3; c++) {
                for (int p = 0; p < PLANE; p++) {
                    bytes[base + 1 + c * PLANE + p] = (byte) pixel(file, r, c, p);
                }
            }
        }
        return bytes;
    }

    static void writeAll(final Path dir) throws IOException {
        for (int f = 0; f < 5; f++) {
            Files.write(dir.resolve(Cifar10.TRAIN_FILES.get(f)), records(f, 3));
        }
        Files.write(dir.resolve(Cifar10.TEST_FILE), records(TEST_FILE_INDEX, 2));
    }

    @Test
    void shouldReadTheTrainingFilesInOrderWithLabelsChannelsAndNormalization() throws IOException {
        writeAll(dir);
        final DataSet train = Cifar10.load(dir, true, 0);
        assertEquals(15, train.numExamples());
        assertArrayEquals(new long[] {15, 3072}, train.getFeatures().shape());
        assertArrayEquals(new long[] {15, 10}, train.getLabels().shape());
        assertEquals(DataType.FLOAT, train.getFeatures().dataType());
        for (int f = 0; f < 5; f++) {
            for (int r = 0; r < 3; r++) {
                assertExample(train, f * 3 + r, f, r);
            }
        }
    }

    @Test
    void shouldReadTheTestFile() throws IOException {
        writeAll(dir);
        final DataSet test = Cifar10.load(dir, false, 0);
        assertEquals(2, test.numExamples());
        assertExample(test, 0, TEST_FILE_INDEX, 0);
        assertExample(test, 1, TEST_FILE_INDEX, 1);
    }

    @Test
    void shouldStopAtTheLimitAcrossFiles() throws IOException {
        writeAll(dir);
        final DataSet some = Cifar10.load(dir, true, 7);
        assertEquals(7, some.numExamples());
        assertExample(some, 6, 2, 0);
        assertEquals(15, Cifar10.load(dir, true, 100).numExamples());
    }

    @Test
    void shouldFindTheFilesInTheArchiveFolder() throws IOException {
        final Path inner = Files.createDirectory(dir.resolve(Cifar10.ARCHIVE_FOLDER));
        writeAll(inner);
        assertEquals(2, Cifar10.load(dir, false, 0).numExamples());
    }

    @Test
    void shouldNormalizeWithTheUsualChannelStatistics() {
        assertEquals((1f - 0.4914f) / 0.2470f, Cifar10.normalize(0, 255), 1e-6);
        assertEquals((0f - 0.4822f) / 0.2435f, Cifar10.normalize(1, 0), 1e-6);
        assertEquals((128f / 255f - 0.4465f) / 0.2616f, Cifar10.normalize(2, 128), 1e-6);
        assertArrayEquals(new float[] {-0.4914f / 0.2470f, -0.4822f / 0.2435f, -0.4465f / 0.2616f}, Cifar10.normalizedBlack(), 1e-6f);
    }

    @Test
    void shouldExplainWhereToGetMissingFiles() throws IOException {
        writeAll(dir);
        Files.delete(dir.resolve("data_batch_3.bin"));
        final IOException e = assertThrows(IOException.class, () -> Cifar10.load(dir, true, 1));
        assertTrue(e.getMessage().contains("data_batch_3.bin"), e.getMessage());
        assertTrue(e.getMessage().contains("https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"), e.getMessage());
        assertTrue(e.getMessage().contains("data_batch_1.bin, data_batch_2.bin, data_batch_3.bin, data_batch_4.bin, data_batch_5.bin"), e.getMessage());
        final IOException empty = assertThrows(IOException.class, () -> Cifar10.load(dir.resolve("nowhere"), false, 0));
        assertTrue(empty.getMessage().contains("test_batch.bin"), empty.getMessage());
    }

    @Test
    void shouldRejectTruncatedFilesNamingThem() throws IOException {
        writeAll(dir);
        final byte[] bytes = records(4, 2);
        Files.write(dir.resolve("data_batch_5.bin"), Arrays.copyOf(bytes, bytes.length - 1));
        final IOException e = assertThrows(IOException.class, () -> Cifar10.load(dir, true, 0));
        assertTrue(e.getMessage().contains("data_batch_5.bin"), e.getMessage());
        assertTrue(e.getMessage().contains("3073"), e.getMessage());
        Files.write(dir.resolve(Cifar10.TEST_FILE), new byte[0]);
        assertThrows(IOException.class, () -> Cifar10.load(dir, false, 0));
    }

    @Test
    void shouldRejectLabelsOutOfRange() throws IOException {
        writeAll(dir);
        final byte[] bytes = records(TEST_FILE_INDEX, 2);
        bytes[Cifar10.RECORD_BYTES] = 10;
        Files.write(dir.resolve(Cifar10.TEST_FILE), bytes);
        final IOException e = assertThrows(IOException.class, () -> Cifar10.load(dir, false, 0));
        assertTrue(e.getMessage().contains("record 1"), e.getMessage());
    }

    private static void assertExample(final DataSet data, final int row, final int file, final int record) {
        final INDArray labels = data.getLabels().getRow(row);
        for (int k = 0; k < 10; k++) {
            assertEquals(k == label(file, record) ? 1f : 0f, labels.getFloat(k), "label of row " + row);
        }
        final INDArray features = data.getFeatures().getRow(row);
        for (int c = 0; c < 3; c++) {
            for (int p = 0; p < PLANE; p += 97) {
                final float expected = (pixel(file, record, c, p) / 255f - Cifar10.MEAN.get(c)) / Cifar10.STD.get(c);
                assertEquals(expected, features.getFloat(c * PLANE + p), 1e-6f, "row " + row + " channel " + c + " pixel " + p);
            }
        }
    }
}
