package io.dlion.aeron.wire;

import io.dlion.vote.VoterSet;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encoder and decoder of a {@link MessageType#MEAN_CHUNK}: one chunk of the fp32 mean of the workers' gradients, sent
 * by the server of dense data-parallel training to every worker, one Aeron frame.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  |  Magic 0xD1   |    Version    |   Type = 7    |   FP32 = 5    |  0
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
 *  |           Voter set: k words, the workers averaged          ... 32
 *  +---------------------------------------------------------------+
 *  |       Mean, one little-endian fp32 per parameter ...         ... 32 + 8k
 *  +---------------------------------------------------------------+
 * </pre>
 * The grid is the gradient chunks' ({@link GradientChunkFlyweight#CHUNK_WORDS} words). Each value is the sum of the
 * voters' values in double, divided by the number of voters, rounded once to fp32.
 */
public final class MeanChunkFlyweight {
    private final MessageHeaderFlyweight header = new MessageHeaderFlyweight();

    /**
     * @param buffer to write the chunk into.
     * @param offset at which the chunk starts.
     * @return this for a fluent API.
     */
    public MeanChunkFlyweight wrap(final MutableDirectBuffer buffer, final int offset) {
        header.wrap(buffer, offset);
        return this;
    }

    /**
     * @param buffer holding a received chunk (mutable, as Aeron's term buffers are).
     * @param offset at which the chunk starts.
     * @return this for a fluent API.
     */
    public MeanChunkFlyweight wrapForRead(final DirectBuffer buffer, final int offset) {
        header.wrapForRead(buffer, offset);
        return this;
    }

    /** @return the common header of the wrapped chunk. */
    public MessageHeaderFlyweight header() {
        return header;
    }

    /**
     * @param into   a set of the job's capacity: receives the workers whose gradients the chunk averages.
     * @param length of the message.
     * @return false when the voter set is malformed (not the job's words, a worker past the job, beyond the message).
     */
    public boolean readVoters(final VoterSet into, final int length) {
        return header.readVoterSet(into, length);
    }

    /**
     * @param voterWords  words of the job's voter set, {@code ceil(N / 64)}.
     * @param chunkParams parameters the chunk covers.
     * @return the length of the chunk's message: header, voter set and values.
     */
    public static int length(final int voterWords, final long chunkParams) {
        return MessageHeaderFlyweight.headerLength(voterWords) + Encoding.bodyLength(Encoding.FP32, 0, chunkParams, 1);
    }

    /**
     * Write a whole mean chunk at the wrapped offset: the header, then {@code mean[0, chunkParams)} (chunk-local values).
     *
     * @param jobId       of the job.
     * @param round       round number.
     * @param wordOffset  global word offset of the chunk.
     * @param words       words the chunk covers.
     * @param slice       index of the server's slice.
     * @param voters      the workers averaged.
     * @param mean        the chunk's mean values, chunk-local.
     * @param chunkParams parameters the chunk covers.
     * @return the length written.
     */
    public int encode(final int jobId, final long round, final int wordOffset, final int words, final int slice, final VoterSet voters,
        final float[] mean, final int chunkParams) {
        header.writeHeader(MessageType.MEAN_CHUNK, Encoding.FP32)
            .jobId(jobId)
            .round(round)
            .chunkWordOffset(wordOffset)
            .chunkWords(words)
            .workerId(MessageHeaderFlyweight.SERVER_WORKER_ID)
            .slice(slice)
            .voterSet(voters);
        GradientChunkFlyweight.putFloats(header.buffer(), header.afterVoterSet(), mean, 0, chunkParams);
        return length(voters.wordCount(), chunkParams);
    }

    /**
     * Read the values into {@code dst[dstOffset, dstOffset + chunkParams)}.
     *
     * @param chunkParams parameters the chunk covers.
     * @param dst         where they go.
     * @param dstOffset   index of the chunk's first value in {@code dst}.
     */
    public void decode(final int chunkParams, final float[] dst, final int dstOffset) {
        GradientChunkFlyweight.getFloats(header.buffer(), header.afterVoterSet(), dst, dstOffset, chunkParams);
    }
}
