package io.dlion.aeron.wire;

import io.dlion.codec.DownlinkEncoding;
import io.dlion.vote.VoterSet;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encoder and decoder of a {@link MessageType#RESULT_CHUNK}: the voted result of (part of) one chunk, broadcast by the
 * slice's server.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  |  Magic 0xD1   |    Version    |   Type = 3    |   Encoding    |  0
 *  +---------------+---------------+---------------+---------------+
 *  |                            Job Id                             |  4
 *  +---------------------------------------------------------------+
 *  |                         Round Number                          |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  Chunk Word Offset (global)                   | 16
 *  +-------------------------------+-------------------------------+
 *  |     Chunk Length in Words     |        0xFFFF (server)        | 20
 *  +-------------------------------+-------------------------------+
 *  |          Slice Index          |                               | 24
 *  +-------------------------------+   k = ceil(N / 64) (48 bits)  |
 *  |                                                               | 28
 *  +---------------------------------------------------------------+
 *  |           Voter set: k words, the workers counted           ... 32
 *  +---------------------------------------------------------------+
 *  |       Result in the Encoding: SIGN_BITS, TERNARY or          ... 32 + 8k
 *  |       COUNT_PLANES (see Encoding) ...                         |
 *  +---------------------------------------------------------------+
 * </pre>
 * A chunk whose result does not fit one frame (count planes of many voters) goes as several frames, each naming the
 * words it covers. Fields are little-endian; the header's offsets are {@link MessageHeaderFlyweight}'s.
 */
public final class ResultChunkFlyweight {
    private final MessageHeaderFlyweight header = new MessageHeaderFlyweight();
    private final LittleEndianView view = new LittleEndianView();

    /**
     * @param buffer to write the result into.
     * @param offset at which the result starts.
     * @return this for a fluent API.
     */
    public ResultChunkFlyweight wrap(final MutableDirectBuffer buffer, final int offset) {
        header.wrap(buffer, offset);
        return this;
    }

    /**
     * @param buffer holding a received result (mutable, as Aeron's term buffers are).
     * @param offset at which the result starts.
     * @return this for a fluent API.
     */
    public ResultChunkFlyweight wrapForRead(final DirectBuffer buffer, final int offset) {
        header.wrapForRead(buffer, offset);
        return this;
    }

    /** @return the common header of the wrapped result. */
    public MessageHeaderFlyweight header() {
        return header;
    }

    /**
     * @param voterWords words of the job's voter set, {@code ceil(N / 64)}.
     * @param downlink   the result's encoding.
     * @param params     parameters of the vector the planes hold.
     * @param fromWord   first word of the frame in the planes.
     * @param toWord     word after the frame's last.
     * @return the length of the frame's message: header, voter set and body.
     */
    public static int length(final int voterWords, final DownlinkEncoding downlink, final long params, final int fromWord, final int toWord) {
        return MessageHeaderFlyweight.headerLength(voterWords) + downlink.encodedLength(params, fromWord, toWord);
    }

    /**
     * Write a whole result frame at the wrapped offset: the header, then words {@code [fromWord, fromWord + words)} of
     * {@code planes} in {@code downlink}'s encoding.
     *
     * @param encoding   {@link Encoding} code of {@code downlink}.
     * @param jobId      of the job.
     * @param round      round number.
     * @param wordOffset global word offset of the frame's first word.
     * @param words      words the frame covers.
     * @param slice      index of the server's slice.
     * @param voters     workers counted.
     * @param downlink   the result's encoding.
     * @param planes     the result's planes holding the frame's words.
     * @param params     parameters of the vector the planes hold.
     * @param fromWord   index in the planes of the frame's first word.
     * @return the length written.
     */
    public int encode(final int encoding, final int jobId, final long round, final int wordOffset, final int words, final int slice,
        final VoterSet voters, final DownlinkEncoding downlink, final long[][] planes, final long params, final int fromWord) {
        header.writeHeader(MessageType.RESULT_CHUNK, encoding)
            .jobId(jobId)
            .round(round)
            .chunkWordOffset(wordOffset)
            .chunkWords(words)
            .workerId(MessageHeaderFlyweight.SERVER_WORKER_ID)
            .slice(slice)
            .voterSet(voters);
        final MutableDirectBuffer buffer = header.buffer();
        final int body = header.afterVoterSet();
        return body - header.offset() + downlink.encode(planes, params, fromWord, fromWord + words, view.of(buffer),
            WireBuffers.index(buffer, body));
    }

    /**
     * @param into   a set of the job's capacity: receives the workers counted in this result.
     * @param length of the message.
     * @return false when the voter set is malformed (not the job's words, a worker past the job, beyond the message).
     */
    public boolean readVoters(final VoterSet into, final int length) {
        return header.readVoterSet(into, length);
    }

    /**
     * Read the result into frame-local words: word 0 of each plane receives the frame's first word.
     *
     * @param downlink the encoding the header names, for the frame's voters.
     * @param params   parameters the frame covers.
     * @param planes   {@code downlink.planes()} planes of at least {@link MessageHeaderFlyweight#chunkWords()} words.
     * @throws IllegalArgumentException when the body is not a valid encoding (a ternary byte above 242).
     */
    public void decode(final DownlinkEncoding downlink, final long params, final long[][] planes) {
        final MutableDirectBuffer buffer = header.buffer();
        downlink.decode(view.of(buffer), WireBuffers.index(buffer, header.afterVoterSet()), params, 0, header.chunkWords(), planes);
    }
}
