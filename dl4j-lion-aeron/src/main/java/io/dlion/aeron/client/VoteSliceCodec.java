package io.dlion.aeron.client;

import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.LittleEndianView;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.aeron.wire.VoteChunkFlyweight;
import io.dlion.aeron.wire.WireBuffers;
import io.dlion.vote.VoteRule;
import io.dlion.vote.VoterSet;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Sign votes on a slice's link: this worker's packed signs go up as {@link VoteChunkFlyweight VOTE_CHUNK}s, the
 * server's {@code RESULT_CHUNK}s (signs and ties by majority, or count planes) are decoded into the
 * {@link ResultAssembly}, which owns the result buffers of every slice.
 */
final class VoteSliceCodec implements SliceCodec {
    private final int index;
    private final int jobId;
    private final int workerId;
    private final int slice;
    private final int workers;
    private final long paramCount;
    private final int chunkWords;
    private final VoteRule rule;
    private final long[][] voteView;
    private final ResultAssembly assembly;
    private final VoteChunkFlyweight voteOut = new VoteChunkFlyweight();
    private final LittleEndianView receiveView = new LittleEndianView();

    /**
     * @param index    the slice's index in the exchange (the assembly's slice).
     * @param slice    the slice's number, carried in every header.
     * @param ctx      the exchange's concluded configuration.
     * @param vote     the worker's vote words, read when chunks are sent.
     * @param assembly where result chunks go.
     */
    VoteSliceCodec(final int index, final int slice, final ExchangeContext<?> ctx, final long[] vote, final ResultAssembly assembly) {
        this.index = index;
        this.jobId = ctx.jobId();
        this.workerId = ctx.workerId();
        this.slice = slice;
        this.workers = ctx.workers();
        this.paramCount = ctx.paramCount();
        this.chunkWords = ctx.chunkWords();
        this.rule = ctx.rule();
        this.voteView = new long[][] {vote};
        this.assembly = assembly;
    }

    @Override
    public int chunkWords() {
        return chunkWords;
    }

    @Override
    public int resultType() {
        return MessageType.RESULT_CHUNK;
    }

    @Override
    public int chunkLength(final long params) {
        return VoteChunkFlyweight.length(params);
    }

    @Override
    public void encodeChunk(final MutableDirectBuffer buffer, final int offset, final long round, final int wordOffset, final int words,
        final long params) {
        voteOut.wrap(buffer, offset).encode(jobId, round, wordOffset, words, workerId, slice, voteView, paramCount, wordOffset);
    }

    /** Check the encoding for the voter count, the size and the body length, and hand the body to the assembly. */
    @Override
    public boolean decode(final MessageHeaderFlyweight msg, final int length, final long params, final int wordOffset, final int words,
        final VoterSet voters) {
        final int count = voters.count();
        final int encoding = msg.encoding();
        if (encoding != Encoding.ofResult(rule, count) || count > workers || words > chunkWords
            || length != MessageHeaderFlyweight.headerLength(voters.wordCount()) + Encoding.bodyLength(encoding, words, params, count)) {
            return false;
        }
        final DirectBuffer buffer = msg.buffer();
        return assembly.accept(index, receiveView.of(buffer), WireBuffers.index(buffer, msg.afterVoterSet()), params, wordOffset, words,
            voters);
    }

    @Override
    public void restart(final int fromWord, final int toWord) {
        assembly.restartSlice(index, fromWord, toWord);
    }

    @Override
    public String payloadName() {
        return "vote";
    }

    @Override
    public String resultName() {
        return "result";
    }
}
