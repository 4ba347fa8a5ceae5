package io.dlion.aeron.server;

import io.dlion.codec.DownlinkEncoding;
import io.dlion.vote.VoterSet;

/**
 * One chunk in flight in the {@link VoteWindow}: the votes received for it and, once voted, its result, which the
 * {@link ResultPublisher} reads. Every array is chunk-local (word 0 = the chunk's first word).
 */
final class ChunkSlot {
    final long[][] votes;
    final long[][][] voteView;
    final long[][] present;
    final long[][] out;
    int chunk = -1;
    final VoterSet arrived;
    final VoterSet voters;
    boolean voted;
    int voterCount;
    int encoding;
    DownlinkEncoding downlink;

    ChunkSlot(final int workers, final int chunkWords, final int planes) {
        votes = new long[workers][chunkWords];
        voteView = new long[workers][][];
        for (int w = 0; w < workers; w++) {
            voteView[w] = new long[][] {votes[w]};
        }
        present = new long[workers][];
        arrived = new VoterSet(workers);
        voters = new VoterSet(workers);
        out = new long[planes][chunkWords];
    }

    void reset(final int chunk) {
        this.chunk = chunk;
        arrived.clear();
        voted = false;
    }
}
