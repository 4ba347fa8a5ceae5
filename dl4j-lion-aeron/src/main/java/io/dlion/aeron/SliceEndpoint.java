package io.dlion.aeron;

import java.util.List;
import java.util.Objects;

import io.dlion.aeron.wire.ChunkLayout;

/**
 * Where a worker sends the votes of one slice and where it reads that slice's results: the slice's parameters
 * {@code [fromParam, toParam)} and its server's channels. An immutable value.
 * <p>
 * A slice served in the worker's own process (a sharded job's own slice, {@link Topology#servedHere(List, int)}) also
 * carries that server's <i>local</i> streams: the worker's votes and the slice's results then go through the process's
 * media driver by IPC, not through the kernel's UDP; the UDP channels stay the slice's address for everything else (the
 * hand-over relay, a rejoin, another worker).
 */
public final class SliceEndpoint {
    private final int slice;
    private final long fromParam;
    private final long toParam;
    private final String voteChannel;
    private final int voteStreamId;
    private final String resultChannel;
    private final int resultStreamId;
    /** The local (IPC) channel of a slice served in this process, or null. */
    private final String localChannel;
    private final int localVoteStreamId;
    private final int localResultStreamId;

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
        this(slice, fromParam, toParam, voteChannel, voteStreamId, resultChannel, resultStreamId, null, 0, 0);
    }

    private SliceEndpoint(final int slice, final long fromParam, final long toParam, final String voteChannel, final int voteStreamId,
        final String resultChannel, final int resultStreamId, final String localChannel, final int localVoteStreamId,
        final int localResultStreamId) {
        if (localChannel != null && (localVoteStreamId == localResultStreamId || !localChannel.startsWith("aeron:ipc"))) {
            throw new IllegalArgumentException("a slice's local streams are two different aeron:ipc streams, got " + localChannel + " #"
                + localVoteStreamId + " #" + localResultStreamId);
        }
        this.localChannel = localChannel;
        this.localVoteStreamId = localVoteStreamId;
        this.localResultStreamId = localResultStreamId;
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
     * @throws IllegalStateException when a slice served in this process ({@link #isLocal()}) would move.
     */
    public SliceEndpoint withVoteChannel(final String channel) {
        if (localChannel != null) {
            if (channel.equals(voteChannel)) {
                return this;
            }
            throw new IllegalStateException("slice " + slice + " is served in this process: it does not move while the process lives, to "
                + channel);
        }
        return new SliceEndpoint(slice, fromParam, toParam, channel, voteStreamId, resultChannel, resultStreamId);
    }

    /**
     * @param channel        the IPC channel of the process's media driver.
     * @param voteStreamId   the stream the slice's server in this process reads local votes from.
     * @param resultStreamId the stream it publishes its frames on for local workers.
     * @return the same slice, whose votes and results go by IPC to and from its server in this process.
     */
    public SliceEndpoint withLocal(final String channel, final int voteStreamId, final int resultStreamId) {
        return new SliceEndpoint(slice, fromParam, toParam, voteChannel, this.voteStreamId, resultChannel, this.resultStreamId,
            Objects.requireNonNull(channel, "channel"), voteStreamId, resultStreamId);
    }

    /** @return the same slice over its UDP channels only (a worker that rejoins reaches every slice as the others do). */
    public SliceEndpoint withoutLocal() {
        return localChannel == null ? this : new SliceEndpoint(slice, fromParam, toParam, voteChannel, voteStreamId, resultChannel, resultStreamId);
    }

    /** @return true when the slice's server runs in this process and the worker reaches it by IPC. */
    public boolean isLocal() {
        return localChannel != null;
    }

    /** @return the IPC channel to the slice's server in this process, or null. */
    public String localChannel() {
        return localChannel;
    }

    /** @return the IPC stream of local votes (with {@link #isLocal()}). */
    public int localVoteStreamId() {
        return localVoteStreamId;
    }

    /** @return the IPC stream of local results (with {@link #isLocal()}). */
    public int localResultStreamId() {
        return localResultStreamId;
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
            + ", result=" + resultChannel + " #" + resultStreamId + (localChannel == null ? "" : ", local=" + localChannel + " #"
            + localVoteStreamId + " #" + localResultStreamId) + '}';
    }
}
