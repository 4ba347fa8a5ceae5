package io.dlion.codec;

import io.dlion.testing.TestBits;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.dlion.vote.RoundResult;
import io.dlion.vote.VoterSet;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoteRule;

class DownlinkEncodingTest {

    private static final long[] LENGTHS = {0, 1, 7, 8, 63, 64, 65, 319, 320, 321, 100_000};

    static Stream<Integer> voterCounts() {
        return Stream.concat(IntStream.rangeClosed(1, 33).boxed(), Stream.of(48, 64, 65, 255, 256, 1024));
    }

    /** An empty chunk is 0 bytes, also at the end of a vector whose last word is partly used (2 words and 3 parameters). */
    @ParameterizedTest
    @MethodSource("voterCounts")
    void shouldEncodeAnEmptyChunkAsNothing(final int voters) {
        final long params = 2 * 64 + 3;
        final int words = 3;
        for (final DownlinkEncoding encoding : new DownlinkEncoding[] {DownlinkEncoding.of(VoteRule.MAJORITY, voters),
            DownlinkEncoding.of(VoteRule.AVERAGE, voters)}) {
            assertEquals(0, encoding.encodedLength(params, words, words), encoding + " at the end");
            assertEquals(0, encoding.encodedLength(params, 0, 0), encoding + " at the start");
        }
    }

    @ParameterizedTest
    @MethodSource("voterCounts")
    void shouldRoundTripMajorityAndAverageWithExactSizes(final int voters) {
        final Random random = new Random(voters);
        for (final long n : LENGTHS) {
            if (n == 100_000 && voters % 8 != 0 && voters > 2) {
                continue;
            }
            final int words = TestBits.words(n);
            final long[][] votes = new long[voters][];
            for (int v = 0; v < voters; v++) {
                votes[v] = TestBits.random(random, n);
            }
            final long[] sign = new long[words];
            final long[] tie = new long[words];
            VoteAggregator.majority(votes, voters, 0, words, sign, tie);
            final DownlinkEncoding majority = DownlinkEncoding.of(VoteRule.MAJORITY, voters);
            final long[][] majorityPlanes = (voters & 1) == 1 ? new long[][] {sign} : new long[][] {sign, tie};
            assertSame((voters & 1) == 1 ? SignEncoding.INSTANCE : TernaryEncoding.INSTANCE, majority);
            final long majorityBytes = roundTrip(majority, majorityPlanes, n);
            if ((voters & 1) == 1) {
                assertEquals((n + 7) / 8, majorityBytes, "1 bit/param, n=" + n);
                assertEquals(1.0, majority.bitsPerParameter());
            } else {
                final long words3 = (n + 63) / 64;
                assertEquals(8 * (5 * (words3 / 3) + 2 * (words3 % 3)), majorityBytes, "5 bits per 3 params, n=" + n);
                assertEquals(5.0 / 3, majority.bitsPerParameter());
                assertTrue(8.0 * majorityBytes <= 5.0 / 3 * 64 * words3 + 128, "ternary size n=" + n);
            }

            final int planes = VoteAggregator.planes(voters);
            final long[][] counts = new long[planes][words];
            VoteAggregator.count(votes, voters, 0, words, counts);
            final DownlinkEncoding average = DownlinkEncoding.of(VoteRule.AVERAGE, voters);
            final long averageBytes = roundTrip(average, counts, n);
            final int expectedBits = (int) Math.ceil(Math.log(voters + 1) / Math.log(2) - 1e-12);
            assertEquals(expectedBits, average.bitsPerParameter(), "ceil(log2(N+1)) for N=" + voters);
            assertEquals(expectedBits * ((n + 7) / 8), averageBytes, "count size n=" + n);
        }
    }

    @Test
    void shouldMeasureExactBitsPerParameterOnAMultipleOf40() {
        final long n = 40 * 1000;
        assertEquals(1.0, 8.0 * SignEncoding.INSTANCE.encodedLength(n) / n);
        assertEquals(5.0 / 3, 8.0 * TernaryEncoding.INSTANCE.encodedLength(192L * 1000) / (192 * 1000), 1e-12);
        assertEquals(4.0, 8.0 * new CountEncoding(8).encodedLength(n) / n);
        assertEquals(6.0, 8.0 * new CountEncoding(32).encodedLength(n) / n);
        assertEquals(7.0, 8.0 * new CountEncoding(64).encodedLength(n) / n);
    }

    @Test
    void shouldEncodeAndDecodeChunksIndependently() {
        final Random random = new Random(11);
        final long n = 64 * 5 * 7 + 29;
        final int words = TestBits.words(n);
        final long[] sign = new long[words];
        final long[] tie = TestBits.random(random, n);
        final long[] s = TestBits.random(random, n);
        for (int w = 0; w < words; w++) {
            sign[w] = s[w] & ~tie[w];
        }
        final long[][] counts = {TestBits.random(random, n), TestBits.random(random, n), TestBits.random(random, n)};
        final DownlinkEncoding[] encodings = {SignEncoding.INSTANCE, TernaryEncoding.INSTANCE, new CountEncoding(7)};
        final long[][][] inputs = {{sign}, {sign, tie}, counts};
        for (int e = 0; e < encodings.length; e++) {
            final DownlinkEncoding encoding = encodings[e];
            final int[] bounds = {0, 5, 10, 25, words};
            final long[][] out = new long[encoding.planes()][words];
            int total = 0;
            for (int i = bounds.length - 2; i >= 0; i--) {
                final int length = encoding.encodedLength(n, bounds[i], bounds[i + 1]);
                final ByteBuffer frame = ByteBuffer.allocate(length + 3);
                assertEquals(length, encoding.encode(inputs[e], n, bounds[i], bounds[i + 1], frame, 3));
                assertEquals(length, encoding.decode(frame, 3, n, bounds[i], bounds[i + 1], out));
                total += length;
            }
            for (int p = 0; p < encoding.planes(); p++) {
                assertArrayEquals(inputs[e][p], out[p], encoding + " plane " + p);
            }
            final long whole = encoding.encodedLength(n);
            // byte rounding at each chunk's end; for ternary a chunk's last 1 or 2 words take 2 words each instead of 5/3
            final long slack = encoding == TernaryEncoding.INSTANCE ? 16L * (bounds.length - 1) : encoding.planes() * 4L;
            assertTrue(total >= whole && total <= whole + slack, encoding + " chunk sizes " + total + " vs " + whole);
        }
    }

    @Test
    void shouldEncodeTritsAsDocumented() {
        final long n = 3 * 64;
        final long[] sign = new long[3];
        final long[] tie = new long[3];
        tie[2] = 0b110;       // bit 1: trits 2 and 1 ties; bit 2: trit 2 a tie
        tie[1] = 0b010;
        sign[1] = 0b100;      // bit 2: trit 1 = +1
        sign[0] = 0b111;      // trit 0 = +1 in bits 0..2
        sign[2] = 0b001;      // bit 0: trit 2 = +1
        final ByteBuffer buffer = ByteBuffer.allocate(40).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        assertEquals(40, TernaryEncoding.INSTANCE.encode(new long[][] {sign, tie}, n, 0, 3, buffer, 0));
        // bit 0: no tie: E = s2 = 1, (H1, L1) = (0, 0), (H0, L0) = (0, 1)
        // bit 1: trits 2 and 1 ties: E = 0, (H1, L1) = (t0, s0) = (0, 1), (H0, L0) = (1, 1)
        // bit 2: trit 2 a tie: E = s1 = 1, (H1, L1) = (1, 1), (H0, L0) = (t0, s0) = (0, 1)
        assertEquals(0b010, buffer.getLong(0), "H0");
        assertEquals(0b111, buffer.getLong(8), "L0");
        assertEquals(0b100, buffer.getLong(16), "H1");
        assertEquals(0b110, buffer.getLong(24), "L1");
        assertEquals(0b101, buffer.getLong(32), "E");
    }

    @Test
    void shouldRoundTripAResultAndCountItsBytes() {
        final long n = 1001;
        final Random random = new Random(2);
        final long[] sign = TestBits.random(random, n);
        final long[] tie = TestBits.random(random, n);
        for (int w = 0; w < sign.length; w++) {
            sign[w] &= ~tie[w];
        }
        final RoundResult even = RoundResult.majority(4, n, 6, VoterSet.all(6), sign, tie);
        final RoundResult evenBack = DownlinkEncoding.roundTrip(even);
        assertArrayEquals(sign, evenBack.sign());
        assertArrayEquals(tie, evenBack.tie());
        assertEquals(4, evenBack.round());
        assertEquals(6, evenBack.voters());
        assertEquals(VoterSet.all(6), evenBack.voterSet());
        assertEquals(8 * (5 * 5 + 2 * 1), DownlinkEncoding.encodedBytes(even), "16 words: 5 groups and one last word");
        final RoundResult odd = RoundResult.majority(4, n, 5, VoterSet.all(5), sign, null);
        assertArrayEquals(sign, DownlinkEncoding.roundTrip(odd).sign());
        assertEquals((n + 7) / 8, DownlinkEncoding.encodedBytes(odd));
        final long[][] planes = {sign, tie, TestBits.random(random, n)};
        final RoundResult average = RoundResult.average(4, n, 5, VoterSet.all(5), planes);
        final RoundResult averageBack = DownlinkEncoding.roundTrip(average);
        for (int p = 0; p < 3; p++) {
            assertArrayEquals(planes[p], averageBack.countPlanes()[p]);
        }
        assertEquals(3 * ((n + 7) / 8), DownlinkEncoding.encodedBytes(average));
        final RoundResult segmented = RoundResult.averageSegments(4, n, VoterSet.all(5), planes, new int[] {0, 7}, new int[] {5, 4});
        final RoundResult segmentedBack = DownlinkEncoding.roundTrip(segmented);
        for (int p = 0; p < 3; p++) {
            assertArrayEquals(planes[p], segmentedBack.countPlanes()[p]);
        }
        assertEquals(2, segmentedBack.segmentCount());
        assertEquals(7, segmentedBack.segmentStartWord(1));
        assertEquals(5, segmentedBack.segmentVoters(0));
        assertEquals(4, segmentedBack.segmentVoters(1));
        assertEquals(5, segmentedBack.voters());
        assertEquals(VoterSet.all(5), segmentedBack.voterSet());
    }

    private static long roundTrip(final DownlinkEncoding encoding, final long[][] planes, final long n) {
        final int words = TestBits.words(n);
        final int length = encoding.encodedLength(n, 0, words);
        assertEquals(length, encoding.encodedLength(n));
        final ByteBuffer buffer = ByteBuffer.allocate(length + 2);
        assertEquals(length, encoding.encode(planes, n, 0, words, buffer, 1));
        final long[][] out = new long[encoding.planes()][words];
        for (final long[] plane : out) {
            Arrays.fill(plane, -1L);
        }
        assertEquals(length, encoding.decode(buffer, 1, n, 0, words, out));
        for (int p = 0; p < encoding.planes(); p++) {
            assertArrayEquals(planes[p], out[p], encoding + " plane " + p + " n=" + n);
        }
        return length;
    }
}
