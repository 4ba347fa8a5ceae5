package io.dlion.cli.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.dataset.DataSet;

class FashionMnistTest {

    @Test
    void shouldReadGzippedIdxFilesWrittenByTheTest(@TempDir final Path dir) throws IOException {
        final int n = 3;
        final byte[] pixels = new byte[n * 784];
        for (int i = 0; i < pixels.length; i++) {
            pixels[i] = (byte) (i * 7);
        }
        writeIdx(dir.resolve("t10k-images-idx3-ubyte.gz"), 0x803, new int[] {n, 28, 28}, pixels, true);
        writeIdx(dir.resolve("t10k-labels-idx1-ubyte"), 0x801, new int[] {n}, new byte[] {9, 0, 4}, false);

        final DataSet data = FashionMnist.load(dir, false, 0);
        assertEquals(n, data.numExamples());
        assertEquals(((byte) (5 * 7) & 0xFF) / 255.0, data.getFeatures().getDouble(0, 5), 1e-7);
        assertEquals(((byte) (784 * 2 + 10) * 7 & 0xFF) / 255.0, data.getFeatures().getDouble(2, 10), 1e-7);
        assertEquals(1.0, data.getLabels().getDouble(0, 9));
        assertEquals(1.0, data.getLabels().getDouble(1, 0));
        assertEquals(1.0, data.getLabels().getDouble(2, 4));
        assertEquals(3.0, data.getLabels().sumNumber().doubleValue());

        assertEquals(2, FashionMnist.load(dir, false, 2).numExamples());
    }

    @Test
    void shouldSayWhereToGetMissingFiles(@TempDir final Path dir) {
        final IOException e = assertThrows(IOException.class, () -> FashionMnist.load(dir, true, 0));
        assertTrue(e.getMessage().contains("dataset-fashion-mnist"), e.getMessage());
    }

    @Test
    void shouldRejectForeignFiles(@TempDir final Path dir) throws IOException {
        writeIdx(dir.resolve("t10k-images-idx3-ubyte"), 0x999, new int[] {1, 28, 28}, new byte[784], false);
        writeIdx(dir.resolve("t10k-labels-idx1-ubyte"), 0x801, new int[] {1}, new byte[1], false);
        final IOException e = assertThrows(IOException.class, () -> FashionMnist.load(dir, false, 0));
        assertTrue(e.getMessage().contains("magic"), e.getMessage());
    }

    private static void writeIdx(final Path path, final int magic, final int[] dims, final byte[] body, final boolean gzip) throws IOException {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(magic);
            for (final int d : dims) {
                out.writeInt(d);
            }
            out.write(body);
        }
        try (OutputStream out = gzip ? new GZIPOutputStream(Files.newOutputStream(path)) : Files.newOutputStream(path)) {
            out.write(bytes.toByteArray());
        }
    }
}
