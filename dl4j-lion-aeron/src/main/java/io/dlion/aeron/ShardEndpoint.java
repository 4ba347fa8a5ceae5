package io.dlion.aeron;

import java.util.List;
import java.util.Objects;

import io.dlion.aeron.wire.ChunkLayout;

/**
 * Where a worker sends the votes of one shard and where it reads that shard's results: the shard's parameter
 * slice {@code [fromParam, toParam)} and its server's channels. An immutable value.
 */
public final class ShardEndpoint {
    private final int shard;
    private final long fromParam;
    private final long toParam;
    private final String voteChannel;
    private final int voteStreamId;
    private final String resultChannel;
    private final int resultStreamId;

    /**
     * @param shard          index, as configured on the server of the slice.
     * @param fromParam      first parameter of the slice, a multiple of 64.
     * @param toParam        end of the slice (exclusive), or -1 for "to the last parameter".
     * @param voteChannel    channel the worker publishes this slice's votes on.
     * @param voteStreamId   stream id of the votes.
     * @param resultChannel  channel the worker subscribes to for this slice's results.
     * @param resultStreamId stream id of the results.
     */
    public ShardEndpoint(final int shard, final long fromParam, final long toParam, final String voteChannel, final int voteStreamId,
        final String resultChannel, final int resultStreamId) {
        this.shard = shard;
        this.fromParam = fromParam;
        this.toParam = toParam;
        this.voteChannel = Objects.requireNonNull(voteChannel, "voteChannel");
        this.voteStreamId = voteStreamId;
        this.resultChannel = Objects.requireNonNull(resultChannel, "resultChannel");
        this.resultStreamId = resultStreamId;
    }

    /**
     * One shard covering every parameter, on the default stream ids.
     *
     * @param voteChannel   channel of the votes.
     * @param resultChannel channel of the results.
     * @return the endpoint.
     */
    public static ShardEndpoint whole(final String voteChannel, final String resultChannel) {
        return new ShardEndpoint(0, 0, -1, voteChannel, Configuration.voteStreamId(), resultChannel, Configuration.resultStreamId());
    }

    /**
     * Check that a client's shards cover every parameter, in order, each on a chunk grid.
     *
     * @param shards     the endpoints, slice 0 first.
     * @param paramCount parameters of the job.
     * @param chunkWords words per chunk of the servers' grids.
     * @throws IllegalArgumentException naming the first shard that does not follow.
     */
    public static void checkCover(final List<ShardEndpoint> shards, final long paramCount, final int chunkWords) {
        long expectedFrom = 0;
        for (int i = 0; i < shards.size(); i++) {
            final ShardEndpoint shard = shards.get(i);
            final long to = shard.toParam() < 0 ? paramCount : shard.toParam();
            if (shard.fromParam() != expectedFrom) {
                throw new IllegalArgumentException("shards must cover [0, paramCount) in order without gaps: shard " + i
                    + " starts at " + shard.fromParam() + ", expected " + expectedFrom);
            }
            new ChunkLayout(paramCount, shard.fromParam(), to, chunkWords);
            expectedFrom = to;
        }
        if (expectedFrom != paramCount) {
            throw new IllegalArgumentException("shards must cover [0, paramCount): they end at " + expectedFrom + " of " + paramCount);
        }
    }

    /**
     * @param channel the vote channel of the slice's server now (it moved to another host).
     * @return the same slice and result channel, with that vote channel.
     */
    public ShardEndpoint withVoteChannel(final String channel) {
        return new ShardEndpoint(shard, fromParam, toParam, channel, voteStreamId, resultChannel, resultStreamId);
    }

    public int shard() {
        return shard;
    }

    public long fromParam() {
        return fromParam;
    }

    /** @return end of the slice (exclusive), or -1 for the last parameter. */
    public long toParam() {
        return toParam;
    }

    public String voteChannel() {
        return voteChannel;
    }

    public int voteStreamId() {
        return voteStreamId;
    }

    public String resultChannel() {
        return resultChannel;
    }

    public int resultStreamId() {
        return resultStreamId;
    }

    @Override
    public String toString() {
        return "ShardEndpoint{shard=" + shard + ", params=[" + fromParam + ", " + toParam + "), vote=" + voteChannel + " #" + voteStreamId
            + ", result=" + resultChannel + " #" + resultStreamId + '}';
    }
}
