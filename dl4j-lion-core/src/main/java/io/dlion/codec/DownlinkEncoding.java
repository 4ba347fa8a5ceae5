package io.dlion.codec;

import java.nio.ByteBuffer;

import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoteRule;

/**
 * How a round's result goes on the wire from the server to the workers, chunk by chunk.
 * <p>
 * A result is a set of bit planes in the packed layout of {@link io.dlion.vote.RoundResult}:
 * <pre>
 *   MAJORITY, odd N  : {sign}             -&gt; {@link SignEncoding},    exactly 1 bit per parameter
 *   MAJORITY, even N : {sign, tie}        -&gt; {@link TernaryEncoding}, 3 trits in 5 bits = 1.67 bits per parameter
 *   AVERAGE, N voters: count planes 0..P-1 -&gt; {@link CountEncoding},  P = ceil(log2(N + 1)) bits per parameter
 * </pre>
 * A chunk is a word range {@code [fromWord, toWord)} of the vector of {@code paramCount} parameters; it
 * encodes and decodes on its own, so a transport can send, lose, reorder and decode chunks independently.
 * The only rounding is at the end of each chunk (a partial last byte; for the ternary encoding a last 1 or 2 words
 * outside a group of 3, at 2 bits per parameter). Chunk alignment rules are stated by each encoding
 * ({@link #wordAlignment()}). Call order: {@link #encodedLength} to size the frame, then
 * {@link #encode} on the server and {@link #decode} on the worker; instances are immutable and thread-safe. A transport
 * that sends or receives many chunks through one buffer passes {@link WordViews} of it (made once, its own), so that no
 * chunk allocates and the sign and count planes are copied in bulk.
 */
public interface DownlinkEncoding {

    /**
     * @param rule   the vote rule of the round.
     * @param voters how many workers voted (1 to {@link VoteAggregator#MAX_VOTERS}).
     * @return the encoding the result of such a round uses.
     */
    static DownlinkEncoding of(final VoteRule rule, final int voters) {
        VoteAggregator.planes(voters);
        switch (rule) {
            case MAJORITY:
                return (voters & 1) == 1 ? SignEncoding.INSTANCE : TernaryEncoding.INSTANCE;
            case AVERAGE:
                return new CountEncoding(voters);
            default:
                throw new IllegalArgumentException("unknown rule " + rule);
        }
    }

    /**
     * @param result a round's result.
     * @return the encoding of that result: for MAJORITY, {@link SignEncoding} when it has no tie words; for AVERAGE,
     *     the count planes of {@link RoundResult#voters()} (the largest count when the segments' counts differ).
     */
    static DownlinkEncoding of(final RoundResult result) {
        if (result.rule() == VoteRule.MAJORITY && result.tie() == null) {
            return SignEncoding.INSTANCE;
        }
        return of(result.rule(), result.voters());
    }

    /**
     * @param result a round's result.
     * @return bytes of the whole result encoded as one chunk (what the down-link carries, before headers).
     */
    static long encodedBytes(final RoundResult result) {
        return of(result).encodedLength(result.paramCount());
    }

    /**
     * Encode a result into bytes and decode it again, as a worker receives it (used by in-process exchanges
     * so that they exercise exactly the wire's information).
     *
     * @param result a round's result (at most 2^31 - 1 encoded bytes).
     * @return a new result with the decoded planes and the same round, rule, count, voters, voter mask and segments
     *     (a result with several segments goes as one chunk of {@code planes(voters())} planes).
     */
    static RoundResult roundTrip(final RoundResult result) {
        final DownlinkEncoding encoding = of(result);
        final long paramCount = result.paramCount();
        final int words = (int) ((paramCount + 63) >>> 6);
        final long length = encoding.encodedLength(paramCount);
        if (length > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("result too large for one buffer: " + length + " bytes");
        }
        final ByteBuffer buffer = ByteBuffer.allocate((int) length);
        final long[][] in;
        if (result.rule() == VoteRule.AVERAGE) {
            in = result.countPlanes();
        } else if (result.tie() == null) {
            in = new long[][] {result.sign()};
        } else {
            in = new long[][] {result.sign(), result.tie()};
        }
        encoding.encode(in, paramCount, 0, words, buffer, 0);
        final long[][] out = new long[encoding.planes()][words];
        encoding.decode(buffer, 0, paramCount, 0, words, out);
        if (result.rule() == VoteRule.AVERAGE) {
            if (result.segmentCount() == 1) {
                return RoundResult.average(result.round(), paramCount, result.voters(), result.voterSet(), out);
            }
            final int[] starts = new int[result.segmentCount()];
            final int[] voters = new int[starts.length];
            for (int s = 0; s < starts.length; s++) {
                starts[s] = result.segmentStartWord(s);
                voters[s] = result.segmentVoters(s);
            }
            return RoundResult.averageSegments(result.round(), paramCount, result.voterSet(), out, starts, voters);
        }
        return RoundResult.majority(result.round(), paramCount, result.voters(), result.voterSet(), out[0],
            out.length > 1 ? out[1] : null);
    }

    /** @return bits per parameter on the wire, before the rounding at the end of a chunk. */
    double bitsPerParameter();

    /** @return how many bit planes {@link #encode} reads and {@link #decode} writes. */
    int planes();

    /** @return chunks must start at a word index that is a multiple of this (and end at one, or at the vector's end). */
    int wordAlignment();

    /**
     * @param paramCount number of parameters of the vector.
     * @param fromWord   first word of the chunk.
     * @param toWord     word after the chunk's last.
     * @return exact number of bytes {@link #encode} writes for the chunk.
     */
    int encodedLength(long paramCount, int fromWord, int toWord);

    /**
     * @param paramCount number of parameters of the vector.
     * @return exact number of bytes of the whole vector encoded as one chunk.
     */
    long encodedLength(long paramCount);

    /**
     * Encode a chunk.
     *
     * @param planes     the result's bit planes (see the class comment), padding bits zero.
     * @param paramCount number of parameters of the vector.
     * @param fromWord   first word of the chunk.
     * @param toWord     word after the chunk's last.
     * @param dst        destination; its position, limit and byte order are not used or changed.
     * @param offset     absolute index in {@code dst} of the first byte written.
     * @return the number of bytes written, {@link #encodedLength(long, int, int)}.
     */
    int encode(long[][] planes, long paramCount, int fromWord, int toWord, ByteBuffer dst, int offset);

    /**
     * Decode a chunk into the words {@code [fromWord, toWord)} of {@code planesOut}; padding bits are
     * written as zero, other words are not touched.
     *
     * @param src        source; its position, limit and byte order are not used or changed.
     * @param offset     absolute index in {@code src} of the chunk's first byte.
     * @param paramCount number of parameters of the vector.
     * @param fromWord   first word of the chunk.
     * @param toWord     word after the chunk's last.
     * @param planesOut  receives the planes.
     * @return the number of bytes read.
     * @throws IllegalArgumentException when the bytes are not a valid encoding as far as the encoding can tell (an invalid
     *                                  ternary code, whose chunk's words are then zero; any bit pattern is a valid sign or
     *                                  count plane).
     */
    int decode(ByteBuffer src, int offset, long paramCount, int fromWord, int toWord, long[][] planesOut);

    /**
     * Encode a chunk through views of the destination made once per buffer: the same bytes as
     * {@link #encode(long[][], long, int, int, ByteBuffer, int)}, nothing allocated, and the planes' whole words copied
     * in bulk where they go on the wire as they are (signs, counts).
     *
     * @param planes     the result's bit planes (see the class comment), padding bits zero.
     * @param paramCount number of parameters of the vector.
     * @param fromWord   first word of the chunk.
     * @param toWord     word after the chunk's last.
     * @param dst        the caller's views of the destination, reused from chunk to chunk.
     * @param offset     absolute index in the destination of the first byte written.
     * @return the number of bytes written, {@link #encodedLength(long, int, int)}.
     */
    default int encode(final long[][] planes, final long paramCount, final int fromWord, final int toWord, final WordViews dst,
        final int offset) {
        return encode(planes, paramCount, fromWord, toWord, dst.bytes(), offset);
    }

    /**
     * Decode a chunk through views of the source made once per buffer: the same words as
     * {@link #decode(ByteBuffer, int, long, int, int, long[][])}, nothing allocated, and the planes' whole words copied
     * in bulk where they go on the wire as they are (signs, counts).
     *
     * @param src        the caller's views of the source, reused from chunk to chunk.
     * @param offset     absolute index in the source of the chunk's first byte.
     * @param paramCount number of parameters of the vector.
     * @param fromWord   first word of the chunk.
     * @param toWord     word after the chunk's last.
     * @param planesOut  receives the planes.
     * @return the number of bytes read.
     * @throws IllegalArgumentException as {@link #decode(ByteBuffer, int, long, int, int, long[][])}.
     */
    default int decode(final WordViews src, final int offset, final long paramCount, final int fromWord, final int toWord,
        final long[][] planesOut) {
        return decode(src.bytes(), offset, paramCount, fromWord, toWord, planesOut);
    }
}
