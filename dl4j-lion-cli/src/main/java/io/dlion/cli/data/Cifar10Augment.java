package io.dlion.cli.data;

import java.util.Arrays;
import java.util.SplittableRandom;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The standard CIFAR-10 training augmentation, per example: a random {@code side x side} crop of the image padded
 * by {@code padding} pixels on every side, then a horizontal flip with probability 1/2 — torchvision's
 * {@code RandomCrop(32, padding=4)} followed by {@code RandomHorizontalFlip()}.
 * <p>
 * Works on a batch of flat channel-major images {@code [batch, channels*side*side]} as {@link Cifar10#load}
 * returns them (plain Java on the batch's floats: this is data loading, not the model). Padding is zero in pixel
 * space, i.e. black; since the features are already normalized, the pad takes the per-channel value
 * {@code fill[c]} ({@link Cifar10#normalizedBlack()} for {@link #standard(long)}). With offsets
 * {@code dy, dx} drawn uniformly from {@code [0, 2·padding]}:
 * <pre>
 * out[c][y][x] = in[c][y + dy - padding][x' + dx - padding]   (fill[c] outside the image)
 * x' = flip ? side - 1 - x : x
 * </pre>
 * Seeded: the same seed and the same sequence of batch sizes give the same crops and flips. Not thread-safe.
 */
public final class Cifar10Augment {

    /** Padding of the standard augmentation. */
    public static final int DEFAULT_PADDING = 4;

    private final int channels;
    private final int side;
    private final int padding;
    private final float[] fill;
    private final SplittableRandom random;

    /**
     * @param channels channels per image.
     * @param side     image height and width.
     * @param padding  pixels of padding on each side before cropping (0: flips only).
     * @param fill     pad value per channel (length {@code channels}).
     * @param seed     random seed.
     */
    public Cifar10Augment(final int channels, final int side, final int padding, final float[] fill, final long seed) {
        if (channels <= 0 || side <= 0) {
            throw new IllegalArgumentException("channels and side must be positive: " + channels + ", " + side);
        }
        if (padding < 0 || padding >= side) {
            throw new IllegalArgumentException("padding must be in [0, side): " + padding);
        }
        if (fill == null || fill.length != channels) {
            throw new IllegalArgumentException("fill must have one value per channel (" + channels + "): "
                + Arrays.toString(fill));
        }
        this.channels = channels;
        this.side = side;
        this.padding = padding;
        this.fill = fill.clone();
        this.random = new SplittableRandom(seed);
    }

    /**
     * Random crop 32x32 from the image padded with black by 4, and random horizontal flip, for {@link Cifar10}'s
     * normalized features.
     *
     * @param seed random seed.
     * @return a new augmenter.
     */
    public static Cifar10Augment standard(final long seed) {
        return new Cifar10Augment(Cifar10.CHANNELS, Cifar10.SIDE, DEFAULT_PADDING, Cifar10.normalizedBlack(), seed);
    }

    /**
     * @param features {@code [batch, channels*side*side]} images, channel-major; not modified.
     * @return a new FLOAT array of the same shape with every image cropped and possibly flipped.
     */
    public INDArray apply(final INDArray features) {
        final int pixels = channels * side * side;
        if (features.rank() != 2 || features.size(1) != pixels) {
            throw new IllegalArgumentException("expected features [batch, " + pixels + "], got "
                + Arrays.toString(features.shape()));
        }
        final int batch = (int) features.size(0);
        final float[] src = features.castTo(DataType.FLOAT).dup('c').data().asFloat();
        final float[] dst = new float[src.length];
        final int span = 2 * padding + 1;
        for (int i = 0; i < batch; i++) {
            final int dy = random.nextInt(span);
            final int dx = random.nextInt(span);
            final boolean flip = random.nextBoolean();
            cropFlip(src, dst, i * pixels, dy, dx, flip);
        }
        return Nd4j.create(dst, new long[] {batch, pixels}, DataType.FLOAT);
    }

    /**
     * One image: {@code dst[offset..]} = crop at ({@code dy}, {@code dx}) of {@code src[offset..]} padded, then
     * flipped if {@code flip}.
     */
    void cropFlip(final float[] src, final float[] dst, final int offset, final int dy, final int dx, final boolean flip) {
        final int plane = side * side;
        for (int c = 0; c < channels; c++) {
            final int planeBase = offset + c * plane;
            for (int y = 0; y < side; y++) {
                final int sy = y + dy - padding;
                final int rowOut = planeBase + y * side;
                if (sy < 0 || sy >= side) {
                    Arrays.fill(dst, rowOut, rowOut + side, fill[c]);
                    continue;
                }
                final int rowIn = planeBase + sy * side;
                for (int x = 0; x < side; x++) {
                    final int sx = (flip ? side - 1 - x : x) + dx - padding;
                    dst[rowOut + x] = sx < 0 || sx >= side ? fill[c] : src[rowIn + sx];
                }
            }
        }
    }
}
