package io.dlion.codec;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The whole-word loops of {@link HostSignPacker} and {@link HostDeltaApplier} written with the JDK's Vector API
 * ({@code jdk.incubator.vector}), used only when the JVM runs with {@code --add-modules jdk.incubator.vector}
 * ({@link KernelThreads#VECTOR_API}); the callers fall back to plain loops otherwise, with the same results.
 * <p>
 * Vectors are read from and written to the off-heap buffers directly, one species-width group of a 64-parameter
 * word at a time. A group's lanes meet the packed layout through a vector of lane masks: lane k of group g holds
 * {@code 1 << place(g L + k)} (within the word's low or high 32 bits for FLOAT). Packing ORs the masks of the lanes
 * whose value gives bit 1 (a compare) into the word; applying turns a broadcast word ANDed with the masks into a
 * lane mask (one plane) or shifts each lane's bit down ({@code code = sum of 2^p bit_p}, several planes), then adds
 * {@code (code - offset) * alpha} to the update, each step one IEEE operation per lane: the same values as the
 * plain loops and the device path.
 */
final class VectorCodec {

    private VectorCodec() {
    }

    /** Holds the species and lane masks; loaded on the first kernel call. */
    private static final class Lanes {
        static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
        static final VectorSpecies<Integer> INTS = IntVector.SPECIES_PREFERRED;
        static final VectorSpecies<Double> DOUBLES = DoubleVector.SPECIES_PREFERRED;
        static final VectorSpecies<Long> LONGS = LongVector.SPECIES_PREFERRED;
        static final int FLOAT_GROUPS = 64 / FLOATS.length();
        /**
         * With 8 or 16 lanes, groups 2i and 2i + 1 lie in the same 32-bit half of a word, L bits apart: one lane
         * shifted right by its place holds both its parameters' bits (bits 0 and L), so their codes (below 2^8) are
         * built together, in bits [0, L) and [L, 2L), when they have at most L planes.
         */
        static final boolean PAIRED = FLOATS.length() == 8 || FLOATS.length() == 16;
        static final int PAIR_BITS = 1 | 1 << FLOATS.length();
        static final int LOW_CODE = (1 << FLOATS.length()) - 1;
        static final int DOUBLE_GROUPS = 64 / DOUBLES.length();
        static final IntVector[] FLOAT_MASKS = new IntVector[FLOAT_GROUPS];
        /** Lane k of group g: the place of parameter {@code g L + k} within its 32-bit half of the word. */
        static final IntVector[] FLOAT_PLACES = new IntVector[FLOAT_GROUPS];
        static final LongVector[] DOUBLE_MASKS = new LongVector[DOUBLE_GROUPS];

        static {
            final int fl = FLOATS.length();
            final int[] ints = new int[fl];
            final int[] places = new int[fl];
            for (int g = 0; g < FLOAT_GROUPS; g++) {
                for (int k = 0; k < fl; k++) {
                    places[k] = place(g * fl + k) & 31;
                    ints[k] = 1 << places[k];
                }
                FLOAT_MASKS[g] = IntVector.fromArray(INTS, ints, 0);
                FLOAT_PLACES[g] = IntVector.fromArray(INTS, places, 0);
            }
            final int dl = DOUBLES.length();
            final long[] longs = new long[dl];
            for (int g = 0; g < DOUBLE_GROUPS; g++) {
                for (int k = 0; k < dl; k++) {
                    longs[k] = 1L << place(g * dl + k);
                }
                DOUBLE_MASKS[g] = LongVector.fromArray(LONGS, longs, 0);
            }
        }
    }

    /**
     * Pack the whole words {@code [w0, w1)} of a FLOAT vector whose parameter 0 is at byte {@code base} of
     * {@code bytes} (native order, little-endian).
     *
     * @return true when a NaN or an infinity was seen.
     */
    static boolean packFloats(final ByteBuffer bytes, final int base, final long[] words, final int w0, final int w1, final boolean odd) {
        final int lanes = Lanes.FLOATS.length();
        final IntVector zeroInts = IntVector.zero(Lanes.INTS);
        FloatVector nonFinite = FloatVector.zero(Lanes.FLOATS);
        for (int w = w0; w < w1; w++) {
            long word = 0;
            final int at = base + (w << 8);
            for (int g = 0; g < Lanes.FLOAT_GROUPS; g++) {
                final FloatVector v = FloatVector.fromByteBuffer(Lanes.FLOATS, bytes, at + ((g * lanes) << 2), ByteOrder.LITTLE_ENDIAN);
                nonFinite = nonFinite.add(v.mul(0f));
                final VectorMask<Integer> m = (odd ? v.compare(VectorOperators.GT, 0f) : v.compare(VectorOperators.GE, 0f)).cast(Lanes.INTS);
                final int bits = zeroInts.blend(Lanes.FLOAT_MASKS[g], m).reduceLanes(VectorOperators.OR);
                word |= (bits & 0xFFFFFFFFL) << (g * lanes < 32 ? 0 : 32);
            }
            words[w] = word;
        }
        return nonFinite.compare(VectorOperators.NE, nonFinite).anyTrue();
    }

    /** {@link #packFloats} for DOUBLE. */
    static boolean packDoubles(final ByteBuffer bytes, final int base, final long[] words, final int w0, final int w1, final boolean odd) {
        final int lanes = Lanes.DOUBLES.length();
        final LongVector zeroLongs = LongVector.zero(Lanes.LONGS);
        DoubleVector nonFinite = DoubleVector.zero(Lanes.DOUBLES);
        for (int w = w0; w < w1; w++) {
            long word = 0;
            final int at = base + (w << 9);
            for (int g = 0; g < Lanes.DOUBLE_GROUPS; g++) {
                final DoubleVector v = DoubleVector.fromByteBuffer(Lanes.DOUBLES, bytes, at + ((g * lanes) << 3), ByteOrder.LITTLE_ENDIAN);
                nonFinite = nonFinite.add(v.mul(0.0));
                final VectorMask<Long> m = (odd ? v.compare(VectorOperators.GT, 0.0) : v.compare(VectorOperators.GE, 0.0)).cast(Lanes.LONGS);
                word |= zeroLongs.blend(Lanes.DOUBLE_MASKS[g], m).reduceLanes(VectorOperators.OR);
            }
            words[w] = word;
        }
        return nonFinite.compare(VectorOperators.NE, nonFinite).anyTrue();
    }

    /**
     * {@code update[j] += (code(j) - offset) * alpha} for the whole words {@code [w0, w1)} of a FLOAT update whose
     * parameter 0 is at byte {@code base} of {@code bytes}, with the code's bit planes of {@code HostDeltaApplier.planeWords}
     * ({@code x} receives a word's planes, at least {@code planes} words). With one plane, {@code delta0} and {@code delta1} are the two deltas.
     */
    static void applyFloats(final ByteBuffer bytes, final int base, final int mode, final long[] sign, final long[] tie,
        final long[][] countPlanes, final int planes, final long[] x, final int w0, final int w1, final float delta0,
        final float delta1, final float alpha, final float offset) {
        final int lanes = Lanes.FLOATS.length();
        final FloatVector d0 = FloatVector.broadcast(Lanes.FLOATS, delta0);
        final FloatVector d1 = FloatVector.broadcast(Lanes.FLOATS, delta1);
        final IntVector zero = IntVector.zero(Lanes.INTS);
        for (int w = w0; w < w1; w++) {
            HostDeltaApplier.planeWords(mode, sign, tie, countPlanes, planes, w, x);
            final int at = base + (w << 8);
            for (int g = 0; g < Lanes.FLOAT_GROUPS; g++) {
                final int offsetBytes = at + ((g * lanes) << 2);
                final int shift = g * lanes < 32 ? 0 : 32;
                if (planes == 1) {
                    final FloatVector delta = d0.blend(d1, intMask(x[0], shift, g).cast(Lanes.FLOATS));
                    FloatVector.fromByteBuffer(Lanes.FLOATS, bytes, offsetBytes, ByteOrder.LITTLE_ENDIAN).add(delta)
                        .intoByteBuffer(bytes, offsetBytes, ByteOrder.LITTLE_ENDIAN);
                } else if (Lanes.PAIRED && planes <= Lanes.FLOATS.length()) {
                    IntVector codes = zero;
                    for (int p = 0; p < planes; p++) {
                        codes = codes.or(IntVector.broadcast(Lanes.INTS, (int) (x[p] >>> shift)).lanewise(VectorOperators.LSHR, Lanes.FLOAT_PLACES[g])
                            .and(Lanes.PAIR_BITS).lanewise(VectorOperators.LSHL, p));
                    }
                    addCodes(bytes, offsetBytes, codes.and(Lanes.LOW_CODE), alpha, offset);
                    addCodes(bytes, offsetBytes + (lanes << 2), codes.lanewise(VectorOperators.LSHR, lanes), alpha, offset);
                    g++;
                } else {
                    IntVector code = zero;
                    for (int p = 0; p < planes; p++) {
                        code = code.or(IntVector.broadcast(Lanes.INTS, (int) (x[p] >>> shift)).lanewise(VectorOperators.LSHR, Lanes.FLOAT_PLACES[g])
                            .and(1).lanewise(VectorOperators.LSHL, p));
                    }
                    addCodes(bytes, offsetBytes, code, alpha, offset);
                }
            }
        }
    }

    /** {@link #applyFloats} for DOUBLE. */
    static void applyDoubles(final ByteBuffer bytes, final int base, final int mode, final long[] sign, final long[] tie,
        final long[][] countPlanes, final int planes, final long[] x, final int w0, final int w1, final double delta0,
        final double delta1, final double alpha, final double offset) {
        final int lanes = Lanes.DOUBLES.length();
        final DoubleVector d0 = DoubleVector.broadcast(Lanes.DOUBLES, delta0);
        final DoubleVector d1 = DoubleVector.broadcast(Lanes.DOUBLES, delta1);
        final DoubleVector zero = DoubleVector.zero(Lanes.DOUBLES);
        for (int w = w0; w < w1; w++) {
            HostDeltaApplier.planeWords(mode, sign, tie, countPlanes, planes, w, x);
            final int at = base + (w << 9);
            for (int g = 0; g < Lanes.DOUBLE_GROUPS; g++) {
                final int offsetBytes = at + ((g * lanes) << 3);
                final DoubleVector delta;
                if (planes == 1) {
                    delta = d0.blend(d1, doubleMask(x[0], g));
                } else {
                    DoubleVector code = zero;
                    for (int p = 0; p < planes; p++) {
                        code = code.add(1 << p, doubleMask(x[p], g));
                    }
                    delta = code.sub(offset).mul(alpha);
                }
                DoubleVector.fromByteBuffer(Lanes.DOUBLES, bytes, offsetBytes, ByteOrder.LITTLE_ENDIAN).add(delta)
                    .intoByteBuffer(bytes, offsetBytes, ByteOrder.LITTLE_ENDIAN);
            }
        }
    }

    /** The lanes' {@code update += (code - offset) * alpha} at byte {@code at}. */
    private static void addCodes(final ByteBuffer bytes, final int at, final IntVector code, final float alpha, final float offset) {
        final FloatVector delta = ((FloatVector) code.convert(VectorOperators.I2F, 0)).sub(offset).mul(alpha);
        FloatVector.fromByteBuffer(Lanes.FLOATS, bytes, at, ByteOrder.LITTLE_ENDIAN).add(delta).intoByteBuffer(bytes, at, ByteOrder.LITTLE_ENDIAN);
    }

    private static VectorMask<Integer> intMask(final long word, final int shift, final int group) {
        return IntVector.broadcast(Lanes.INTS, (int) (word >>> shift)).and(Lanes.FLOAT_MASKS[group]).compare(VectorOperators.NE, 0);
    }

    private static VectorMask<Double> doubleMask(final long word, final int group) {
        return LongVector.broadcast(Lanes.LONGS, word).and(Lanes.DOUBLE_MASKS[group])
            .compare(VectorOperators.NE, 0).cast(Lanes.DOUBLES);
    }

    /** Bit of parameter {@code j & 63} in its word of the packed layout. */
    private static int place(final int j) {
        return 8 * ((j >>> 3) & 7) + 7 - (j & 7);
    }
}
