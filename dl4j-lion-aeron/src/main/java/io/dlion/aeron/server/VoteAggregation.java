package io.dlion.aeron.server;

import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.MessageType;
import io.dlion.aeron.wire.VoteChunkFlyweight;
import io.dlion.codec.DownlinkEncoding;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoteRule;
import org.agrona.DirectBuffer;

/**
 * Sign votes ({@link Payload#SIGNS}): every worker's vote words of a chunk, voted by majority (a sign and a tie plane:
 * 1 bit a parameter at odd N, ternary at even N) or counted (the count planes of +1 votes for AVERAGE) with the
 * {@link VoteAggregator}'s adder trees. Every array is chunk-local (word 0 = the chunk's first word) and allocated once.
 */
final class VoteAggregation implements Aggregation {
    private final VoteRule rule;
    private final boolean majority;
    private final ServerCounters counters;
    private final long[][][] votes;
    private final long[][][][] voteView;
    private final long[][] present;
    private final long[][][] out;
    private final int[] voters;
    private final int[] encoding;
    private final DownlinkEncoding[] downlink;
    private final VoteChunkFlyweight vote = new VoteChunkFlyweight();

    /**
     * @param workers    of the job.
     * @param chunkWords words of a chunk.
     * @param slots      chunks held at once.
     * @param rule       majority vote or averaging.
     * @param counters   where ties are counted.
     */
    VoteAggregation(final int workers, final int chunkWords, final int slots, final VoteRule rule, final ServerCounters counters) {
        this.rule = rule;
        this.majority = rule == VoteRule.MAJORITY;
        this.counters = counters;
        final int planes = planes(rule, workers);
        this.votes = new long[slots][workers][chunkWords];
        this.voteView = new long[slots][workers][][];
        for (int s = 0; s < slots; s++) {
            for (int w = 0; w < workers; w++) {
                voteView[s][w] = new long[][] {votes[s][w]};
            }
        }
        this.present = new long[workers][];
        this.out = new long[slots][planes][chunkWords];
        this.voters = new int[slots];
        this.encoding = new int[slots];
        this.downlink = new DownlinkEncoding[slots];
    }

    /**
     * @param rule    majority vote or averaging.
     * @param workers of the job.
     * @return the planes of a result: sign and tie by majority, the count planes of every worker when averaging.
     */
    static int planes(final VoteRule rule, final int workers) {
        return rule == VoteRule.MAJORITY ? 2 : VoteAggregator.planes(workers);
    }

    @Override
    public int frameType() {
        return MessageType.VOTE_CHUNK;
    }

    @Override
    public int encoding() {
        return Encoding.SIGN_BITS;
    }

    @Override
    public int frameLength(final long chunkParams) {
        return VoteChunkFlyweight.length(chunkParams);
    }

    @Override
    public void store(final DirectBuffer buffer, final int offset, final ChunkSlot slot, final int worker, final long chunkParams) {
        vote.wrapForRead(buffer, offset).decodeSigns(chunkParams, voteView[slot.index][worker]);
    }

    @Override
    public void aggregate(final ChunkSlot slot, final int words, final long chunkParams) {
        final int s = slot.index;
        int n = 0;
        for (int w = slot.voters.next(0); w >= 0; w = slot.voters.next(w + 1)) {
            present[n++] = votes[s][w];
        }
        voters[s] = n;
        downlink[s] = DownlinkEncoding.of(rule, n);
        if (majority) {
            final int ties = VoteAggregator.majority(present, n, 0, words, out[s][0], out[s][1]);
            counters.ties().getAndAddPlain(ties);
        } else {
            VoteAggregator.count(present, n, 0, words, out[s]);
        }
        encoding[s] = Encoding.ofResult(rule, n);
    }

    /**
     * @param slot an aggregated slot.
     * @return its result's encoding: sign bits, ternary or count planes.
     */
    int encoding(final ChunkSlot slot) {
        return encoding[slot.index];
    }

    /**
     * @param slot an aggregated slot.
     * @return its result's planes, chunk-local.
     */
    long[][] out(final ChunkSlot slot) {
        return out[slot.index];
    }

    @Override
    public boolean publish(final ResultPublisher publisher, final long round, final ChunkSlot slot) {
        final int s = slot.index;
        return publisher.publishResult(round, slot.chunk, slot.voters, voters[s], encoding[s], downlink[s], out[s]);
    }
}
