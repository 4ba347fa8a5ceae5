package io.dlion.aeron.client;

import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.server.HeldResult;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.RoundResult;

/**
 * Sign votes as the {@link RoundLoop}'s payload: the worker's packed vote, copied at submit and read by every slice's
 * {@link VoteSliceCodec} as it sends chunks, and the {@link ResultAssembly} the slices' result chunks are decoded into,
 * which gives each slice's part of the result on as soon as it is complete when the caller asked for parts
 * ({@link VoteExchange#await(long, long, VoteExchange.ResultParts)}).
 */
final class VotePayload implements RoundPayload<RoundResult> {
    private final ExchangeContext<?> ctx;
    private final int totalWords;
    private final long lastWordMask;
    private final long[] vote;
    private final ResultAssembly assembly;
    private VoteExchange.ResultParts parts;

    /** @param ctx the exchange's concluded configuration. */
    VotePayload(final ExchangeContext<?> ctx) {
        this.ctx = ctx;
        this.totalWords = (int) ((ctx.paramCount() + 63) >>> 6);
        this.lastWordMask = ChunkLayout.lastWordMask(ctx.paramCount());
        this.vote = new long[totalWords];
        this.assembly = new ResultAssembly(ctx.rule(), ctx.paramCount(), ctx.workers(), ctx.slices().size());
    }

    /**
     * Copy the round's vote; the bits past the last parameter are cleared.
     *
     * @param signWords  the packed signs.
     * @param paramCount parameters they hold, the exchange's.
     * @throws IllegalArgumentException when {@code paramCount} is not the exchange's.
     */
    void copy(final long[] signWords, final long paramCount) {
        if (paramCount != ctx.paramCount()) {
            throw new IllegalArgumentException("paramCount must be " + ctx.paramCount() + ", got " + paramCount);
        }
        System.arraycopy(signWords, 0, vote, 0, totalWords);
        vote[totalWords - 1] &= lastWordMask;
    }

    /** @param parts receives each slice's part of the awaited round's result as it completes, or null for none. */
    void parts(final VoteExchange.ResultParts parts) {
        this.parts = parts;
    }

    @Override
    public SliceCodec sliceCodec(final int index, final SliceEndpoint endpoint) {
        return new VoteSliceCodec(index, endpoint.slice(), ctx, vote, assembly);
    }

    @Override
    public void startRound() {
        assembly.startRound();
    }

    @Override
    public int onSliceResult(final int index, final ChunkLayout slice, final long round) {
        assembly.sliceDone(index, round);
        if (parts == null) {
            return 0;
        }
        assembly.giveSlice(index, slice.fromWord(), slice.toWord(), round, parts);
        return 1;
    }

    /**
     * @param index a slice's index in the exchange.
     * @param slice the slice's words.
     * @return a copy of the slice's last result this worker holds whole, or null (see {@link ResultAssembly#heldResult}).
     */
    HeldResult heldResult(final int index, final ChunkLayout slice) {
        return assembly.heldResult(index, slice.fromWord(), slice.toWord());
    }

    @Override
    public RoundResult result(final long round) {
        return assembly.complete(round);
    }
}
