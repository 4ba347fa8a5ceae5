package io.dlion.aeron.client;

import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.wire.ChunkLayout;

/**
 * What differs between the payloads over a worker's whole vector, for the {@link RoundLoop}: the slices' codecs, what a
 * round's start clears, what a slice's complete result is given to, and the round's result. Per slice, what differs is
 * the {@link SliceCodec} this payload makes.
 * <ul>
 *   <li>{@link VotePayload}: the packed sign vote up, the {@link ResultAssembly}'s {@code RoundResult} down, each slice's
 *       part given as soon as it is complete.</li>
 *   <li>{@link MeanPayload}: the fp32 gradient up, the mean vector down.</li>
 * </ul>
 * Call order per round: {@link #startRound()}, {@link #onSliceResult} once per slice as its result completes, then
 * {@link #result(long)}. Not thread-safe (the exchange has one thread).
 *
 * @param <R> the round's result.
 */
interface RoundPayload<R> {
    /**
     * @param index    the slice's index in the exchange.
     * @param endpoint the slice.
     * @return the codec of that slice's link, reading this payload's vector and writing into its result.
     */
    SliceCodec sliceCodec(int index, SliceEndpoint endpoint);

    /** A round starts: forget what the last round's result chunks left besides the values they overwrite. */
    void startRound();

    /**
     * Every result chunk of a slice has arrived this round.
     *
     * @param index the slice's index in the exchange.
     * @param slice the slice's words.
     * @param round the round.
     * @return work done: 1 when the slice's part was given on, else 0.
     */
    int onSliceResult(int index, ChunkLayout slice, long round);

    /**
     * @param round the round, complete in every slice.
     * @return the round's result; its arrays are reused by the next round.
     */
    R result(long round);
}
