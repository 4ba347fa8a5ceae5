package io.dlion.cli.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** Crop and flip against a naive reference that really pads the image, crops and mirrors it. */
class Cifar10AugmentTest {

    private static final int CHANNELS = 2;
    private static final int SIDE = 5;
    private static final int PADDING = 2;
    private static final float[] FILL = {-7f, -9f};

    /** Pads to (side + 2·padding)², takes the side x side window at (dy, dx), mirrors columns if flip. */
    static float[] reference(final float[] image, final int dy, final int dx, final boolean flip) {
        final int padded = SIDE + 2 * PADDING;
        final float[][][] big = new float[CHANNELS][padded][padded];
        for (int c = 0; c < CHANNELS; c++) {
            for (int y = 0; y < padded; y++) {
                for (int x = 0; x < padded; x++) {
                    big[c][y][x] = FILL[c];
                }
            }
            for (int y = 0; y < SIDE; y++) {
                for (int x = 0; x < SIDE; x++) {
                    big[c][y + PADDING][x + PADDING] = image[c * SIDE * SIDE + y * SIDE + x];
                }
            }
        }
        final float[] out = new float[CHANNELS * SIDE * SIDE];
        for (int c = 0; c < CHANNELS; c++) {
            for (int y = 0; y < SIDE; y++) {
                for (int x = 0; x < SIDE; x++) {
                    final float v = big[c][y + dy][x + dx];
                    final int xo = flip ? SIDE - 1 - x : x;
                    out[c * SIDE * SIDE + y * SIDE + xo] = v;
                }
            }
        }
        return out;
    }

    private static float[] image(final int seed) {
        final float[] img = new float[CHANNELS * SIDE * SIDE];
        for (int i = 0; i < img.length; i++) {
            img[i] = 100 * seed + i;
        }
        return img;
    }

    private static Cifar10Augment augment(final long seed) {
        return new Cifar10Augment(CHANNELS, SIDE, PADDING, FILL, seed);
    }

    @Test
    void shouldCropAndFlipLikeTheNaiveReferenceForEveryOffset() {
        final float[] img = image(1);
        final Cifar10Augment a = augment(0);
        for (int dy = 0; dy <= 2 * PADDING; dy++) {
            for (int dx = 0; dx <= 2 * PADDING; dx++) {
                for (final boolean flip : new boolean[] {false, true}) {
                    final float[] out = new float[img.length];
                    a.cropFlip(img, out, 0, dy, dx, flip);
                    assertArrayEquals(reference(img, dy, dx, flip), out, "dy=" + dy + " dx=" + dx + " flip=" + flip);
                }
            }
        }
    }

    @Test
    void shouldKeepTheImageAtTheCentreOffsetWithoutFlip() {
        final float[] img = image(2);
        final float[] out = new float[img.length];
        augment(0).cropFlip(img, out, 0, PADDING, PADDING, false);
        assertArrayEquals(img, out);
    }

    @Test
    void shouldGiveEveryImageOneOfTheReferenceCandidatesAndUseThemAll() {
        final int batch = 400;
        final float[] all = new float[batch * CHANNELS * SIDE * SIDE];
        final float[] img = image(3);
        for (int i = 0; i < batch; i++) {
            System.arraycopy(img, 0, all, i * img.length, img.length);
        }
        final INDArray in = Nd4j.create(all, new long[] {batch, img.length}, DataType.FLOAT);
        final INDArray out = augment(42).apply(in);
        assertArrayEquals(in.shape(), out.shape());
        final Set<String> seen = new HashSet<>();
        for (int i = 0; i < batch; i++) {
            final float[] row = out.getRow(i).toFloatVector();
            String match = null;
            for (int dy = 0; dy <= 2 * PADDING && match == null; dy++) {
                for (int dx = 0; dx <= 2 * PADDING && match == null; dx++) {
                    for (final boolean flip : new boolean[] {false, true}) {
                        if (Arrays.equals(reference(img, dy, dx, flip), row)) {
                            match = dy + "," + dx + "," + flip;
                            break;
                        }
                    }
                }
            }
            assertTrue(match != null, "row " + i + " is no crop/flip of the input");
            seen.add(match);
        }
        assertEquals(2 * (2 * PADDING + 1) * (2 * PADDING + 1), seen.size(), "400 draws should hit all 50 crops");
        assertArrayEquals(all, in.data().asFloat(), "input modified");
    }

    @Test
    void shouldRepeatForTheSameSeedAndDifferForAnother() {
        final INDArray in = Nd4j.rand(DataType.FLOAT, 16, CHANNELS * SIDE * SIDE);
        assertEquals(augment(5).apply(in), augment(5).apply(in));
        assertNotEquals(augment(5).apply(in), augment(6).apply(in));
    }

    @Test
    void shouldPadCifarImagesWithNormalizedBlack() {
        final Cifar10Augment standard = Cifar10Augment.standard(1);
        final float[] img = new float[Cifar10.PIXELS];
        Arrays.fill(img, 5f);
        final float[] out = new float[img.length];
        standard.cropFlip(img, out, 0, 0, 0, false);
        final float[] black = Cifar10.normalizedBlack();
        for (int c = 0; c < 3; c++) {
            assertEquals(black[c], out[c * 1024], "corner of channel " + c);
            assertEquals(black[c], out[c * 1024 + 3 * 32 + 3], "last padded pixel of channel " + c);
            assertEquals(5f, out[c * 1024 + 4 * 32 + 4], "first image pixel of channel " + c);
        }
    }

    @Test
    void shouldRejectBadGeometry() {
        assertThrows(IllegalArgumentException.class, () -> new Cifar10Augment(2, 5, 5, FILL, 0));
        assertThrows(IllegalArgumentException.class, () -> new Cifar10Augment(3, 5, 1, FILL, 0));
        assertThrows(IllegalArgumentException.class, () -> augment(0).apply(Nd4j.rand(DataType.FLOAT, 2, 49)));
    }
}
