package io.dlion.aeron;

import java.util.List;
import java.util.Objects;

import io.dlion.aeron.wire.ChunkLayout;

/**
 * Where a worker sends the votes of one slice and where it reads that slice's results: the slice's parameters
 * {@code [fromParam, toParam)} and its server's channels. An immutable value.
 */
public final class SliceEndpoint {
    private final int slice;
    private final long fromParam;
    private final long toParam;
    private final String voteChannel;
    private final int voteStreamId;
    private final String resultChannel;
    private final int resultStreamId;

    /**
     * @param slice          index, as configured on the server of the slice.
     * @param fromParam      first parameter of the slice, a multiple of 64.
     * @param toParam        end of the slice (exclusive), or -1 for "to the last parameter".
     * @param voteChannel    channel the worker publishes this slice's votes on.
     * @param voteStreamId   stream id of the votes.
     * @param resultChannel  channel the worker subscribes to for this slice's results.
     * @param resultStreamId stream id of the results.
     */
    public SliceEndpoint(final int slice, final long fromParam, final long toParam, final String voteChannel, final int voteStreamId,
        final String resultChannel, final int resultStreamId) {
        this.slice = slice;
        this.fromParam = fromParam;
        this.toParam = toParam;
        this.voteChannel = Objects.requireNonNull(voteChannel, "voteChannel");
        this.voteStreamId = voteStreamId;
        this.resultChannel = Objects.requireNonNull(resultChannel, "resultChannel");
        this.resultStreamId = resultStreamId;
    }

    /**
     * One slice covering every parameter, on the default stream ids.
     *
     * @param voteChannel   channel of the votes.
     * @param resultChannel channel of the results.
     * @return the endpoint.
     */
    public static SliceEndpoint whole(final String voteChannel, final String resultChannel) {
        return new SliceEndpoint(0, 0, -1, voteChannel, Configuration.voteStreamId(), resultChannel, Configuration.resultStreamId());
    }

    /**
     * Check that a client's slices cover every parameter, in order, each on a chunk grid.
     *
     * @param slices     the endpoints, slice 0 first.
     * @param paramCount parameters of the job.
     * @param chunkWords words per chunk of the servers' grids.
     * @throws IllegalArgumentException naming the first slice that does not follow.
     */
    public static void checkCover(final List<SliceEndpoint> slices, final long paramCount, final int chunkWords) {
        long expectedFrom = 0;
        for (int i = 0; i < slices.size(); i++) {
            final SliceEndpoint slice = slices.get(i);
            final long to = slice.toParam() < 0 ? paramCount : slice.toParam();
            if (slice.fromParam() != expectedFrom) {
                throw new IllegalArgumentException("slices must cover [0, paramCount) in order without gaps: slice " + i
                    + " starts at " + slice.fromParam() + ", expected " + expectedFrom);
            }
            new ChunkLayout(paramCount, slice.fromParam(), to, chunkWords);
            expectedFrom = to;
        }
        if (expectedFrom != paramCount) {
            throw new IllegalArgumentException("slices must cover [0, paramCount): they end at " + expectedFrom + " of " + paramCount);
        }
    }

    /**
     * @param channel the vote channel of the slice's server now (it moved to another host).
     * @return the same slice and result channel, with that vote channel.
     */
    public SliceEndpoint withVoteChannel(final String channel) {
        return new SliceEndpoint(slice, fromParam, toParam, channel, voteStreamId, resultChannel, resultStreamId);
    }

    public int slice() {
        return slice;
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
        return "SliceEndpoint{slice=" + slice + ", params=[" + fromParam + ", " + toParam + "), vote=" + voteChannel + " #" + voteStreamId
            + ", result=" + resultChannel + " #" + resultStreamId + '}';
    }
}
