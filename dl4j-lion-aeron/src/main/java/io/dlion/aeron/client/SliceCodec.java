package io.dlion.aeron.client;

import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.vote.VoterSet;
import org.agrona.MutableDirectBuffer;

/**
 * What differs between the payloads on a worker's link to one slice server ({@link SliceLink}): how a chunk of this
 * worker's payload is written, and how a result chunk of the server is read and where it goes. Everything else (the
 * publication and subscription, HELLO and the server's proof, the header and MAC checks, unproven images, rounds and
 * silence) is the link's and the same for both.
 * <ul>
 *   <li>{@link VoteSliceCodec}: sign votes up ({@code VOTE_CHUNK}), votes or counts down ({@code RESULT_CHUNK}) into the
 *       {@link ResultAssembly}.</li>
 *   <li>{@link MeanSliceCodec}: fp32 gradients up ({@code GRADIENT_CHUNK}), their mean down ({@code MEAN_CHUNK}) into
 *       the mean vector.</li>
 * </ul>
 * One instance per slice; not thread-safe (the exchange has one thread).
 */
interface SliceCodec {
    /** @return words per chunk of the slice's grid. */
    int chunkWords();

    /** @return the {@link io.dlion.aeron.wire.MessageType} of the server's result chunks. */
    int resultType();

    /**
     * @param params parameters of a chunk.
     * @return the length of that chunk's message up, header and body, without a MAC tag.
     */
    int chunkLength(long params);

    /**
     * Write a chunk of this worker's payload, its message as long as {@link #chunkLength} says.
     *
     * @param buffer     the claimed buffer.
     * @param offset     where the message starts.
     * @param round      the round.
     * @param wordOffset global word offset of the chunk.
     * @param words      words of the chunk.
     * @param params     parameters of the chunk.
     */
    void encodeChunk(MutableDirectBuffer buffer, int offset, long round, int wordOffset, int words, long params);

    /**
     * Check a result chunk's encoding and length and take its body. The link has checked the header, the MAC, the round,
     * that the chunk is the next one of the slice ({@code wordOffset}) and lies within it, and read the voter set.
     *
     * @param msg        the frame's header, wrapped.
     * @param length     the message's length, without a MAC tag.
     * @param params     parameters of the chunk.
     * @param wordOffset global word offset of the chunk.
     * @param words      words of the chunk.
     * @param voters     the workers the chunk counts: at least one.
     * @return false when the chunk is malformed (nothing is taken then).
     */
    boolean decode(MessageHeaderFlyweight msg, int length, long params, int wordOffset, int words, VoterSet voters);

    /**
     * The slice's server restarted in the middle of the round and will send all of it again: drop what the old one sent.
     *
     * @param fromWord first word of the slice.
     * @param toWord   the word after its last.
     */
    void restart(int fromWord, int toWord);

    /** @return what goes up, for messages: "vote" or "gradient". */
    String payloadName();

    /** @return what comes down, for messages: "result" or "mean". */
    String resultName();
}
