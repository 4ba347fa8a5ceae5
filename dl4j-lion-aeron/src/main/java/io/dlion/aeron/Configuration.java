package io.dlion.aeron;

import org.agrona.SystemUtil;

/**
 * Property names and defaults of the Aeron transport, each defined once. Contexts read the properties when
 * they are created, so {@code -Ddlion.aeron.vote.channel=...} works for every entry point.
 */
public final class Configuration {
    /** Channel the workers publish votes on and the server subscribes to. */
    public static final String VOTE_CHANNEL_PROP_NAME = "dlion.aeron.vote.channel";
    /** IPC with 8 KiB frames and the default 64 MiB term. */
    public static final String VOTE_CHANNEL_DEFAULT = "aeron:ipc?mtu=8k";
    /** Stream id of the votes. */
    public static final String VOTE_STREAM_ID_PROP_NAME = "dlion.aeron.vote.stream.id";
    public static final int VOTE_STREAM_ID_DEFAULT = 1701;

    /** Channel the server publishes results on (server side). */
    public static final String RESULT_CHANNEL_PROP_NAME = "dlion.aeron.result.channel";
    /** One IPC publication all workers subscribe to. */
    public static final String RESULT_CHANNEL_DEFAULT = "aeron:ipc?mtu=8k";
    /** Stream id of the results. */
    public static final String RESULT_STREAM_ID_PROP_NAME = "dlion.aeron.result.stream.id";
    public static final int RESULT_STREAM_ID_DEFAULT = 1702;

    /**
     * Hand-overs (a donor's state for a rejoining worker) go from the donor to the server on the vote channel with stream
     * id {@code voteStreamId + HANDOVER_STREAM_OFFSET} (of the first slice), and the server relays them on the result
     * channel with the next id, to the joining worker: derived from the vote stream id, so that every job and slice that
     * has its own vote streams has its own hand-over streams, and two ids, so that the relay never reads its own frames
     * where both channels are one (IPC).
     */
    public static final int HANDOVER_STREAM_OFFSET = 100;

    /**
     * Words (64 parameters each) per chunk, the same on the server and every worker; the vote channel's MTU
     * must hold {@code 64 + 8 * chunkWords} bytes (the default needs {@code mtu=8k}).
     */
    public static final String CHUNK_WORDS_PROP_NAME = "dlion.aeron.chunk.words";
    public static final int CHUNK_WORDS_DEFAULT = io.dlion.aeron.wire.ChunkLayout.DEFAULT_CHUNK_WORDS;

    /** Chunks the server holds votes for at once (per worker); more arrive once the oldest is voted. */
    public static final String WINDOW_CHUNKS_PROP_NAME = "dlion.aeron.window.chunks";
    public static final int WINDOW_CHUNKS_DEFAULT = 64;

    /**
     * Round deadline, in milliseconds: how long the server waits without progress (since the round opened or since its
     * last published chunk) for the workers it expects; then it drops the missing ones and goes on with the others if
     * they are at least the quorum, or aborts the round. This is the time to detect a dead worker.
     */
    public static final String ROUND_TIMEOUT_MS_PROP_NAME = "dlion.aeron.round.timeout.ms";
    public static final long ROUND_TIMEOUT_MS_DEFAULT = 30_000;

    /**
     * How long a worker that serves slices keeps its servers up after its own last round, in seconds, while another
     * worker is still connected to their results (reading the last result or its retransmissions).
     */
    public static final long LINGER_S_DEFAULT = 600;

    /** How far a HELLO's timestamp may be from the server's clock, in milliseconds. */
    public static final String HELLO_MAX_SKEW_MS_PROP_NAME = "dlion.aeron.hello.max.skew.ms";
    public static final long HELLO_MAX_SKEW_MS_DEFAULT = 60_000;

    /** How long a worker waits for its publications and subscriptions to connect, in milliseconds. */
    public static final String CONNECT_TIMEOUT_MS_PROP_NAME = "dlion.aeron.connect.timeout.ms";
    public static final long CONNECT_TIMEOUT_MS_DEFAULT = 10_000;

    /**
     * Bytes one job lets be in flight into any one link, the budget every UDP receiver window of the job is cut from:
     * a subscription whose link {@code k} streams of the job share (the server's votes: one per worker; a result
     * multi-destination-cast: one copy per worker on the server's link) gets a window of {@code linkWindow / k}, so
     * that together they never hold more than this in a switch's or shaper's queue. Raise it where a link's rate times
     * its round-trip time is larger (the default fills 10 Gbit/s at 400 microseconds); it must hold one 8 KiB frame.
     * Accepts Agrona's size suffixes ({@code 512k}, {@code 2m}).
     */
    public static final String LINK_WINDOW_PROP_NAME = "dlion.aeron.link.window";
    public static final int LINK_WINDOW_DEFAULT = 512 * 1024;

    /** Fragments polled per duty cycle. */
    public static final String FRAGMENT_LIMIT_PROP_NAME = "dlion.aeron.fragment.limit";
    public static final int FRAGMENT_LIMIT_DEFAULT = 64;

    /** First of the Aeron counter type ids used by this project (counters are typed, AeronStat shows them). */
    public static final int COUNTER_TYPE_ID_BASE = 4_800;
    /** Counter type of the server's counters. */
    public static final int SERVER_COUNTER_TYPE_ID = COUNTER_TYPE_ID_BASE;
    /** Counter type of the worker's counters. */
    public static final int WORKER_COUNTER_TYPE_ID = COUNTER_TYPE_ID_BASE + 1;

    private Configuration() {
    }

    /** @return channel of the votes, from {@value #VOTE_CHANNEL_PROP_NAME}, or its default. */
    public static String voteChannel() {
        return System.getProperty(VOTE_CHANNEL_PROP_NAME, VOTE_CHANNEL_DEFAULT);
    }

    /** @return stream id of the votes, from {@value #VOTE_STREAM_ID_PROP_NAME}, or its default. */
    public static int voteStreamId() {
        return Integer.getInteger(VOTE_STREAM_ID_PROP_NAME, VOTE_STREAM_ID_DEFAULT);
    }

    /** @return channel of the results, from {@value #RESULT_CHANNEL_PROP_NAME}, or its default. */
    public static String resultChannel() {
        return System.getProperty(RESULT_CHANNEL_PROP_NAME, RESULT_CHANNEL_DEFAULT);
    }

    /** @return stream id of the results, from {@value #RESULT_STREAM_ID_PROP_NAME}, or its default. */
    public static int resultStreamId() {
        return Integer.getInteger(RESULT_STREAM_ID_PROP_NAME, RESULT_STREAM_ID_DEFAULT);
    }

    /**
     * @return words per chunk from the system property {@value #CHUNK_WORDS_PROP_NAME}, {@link #CHUNK_WORDS_DEFAULT} when
     *     unset: the default of every context (server, worker, {@code io.dlion.testkit.GarbageFrames}).
     */
    public static int chunkWords() {
        return Integer.getInteger(CHUNK_WORDS_PROP_NAME, CHUNK_WORDS_DEFAULT);
    }

    /** @return chunks a server holds per worker, from {@value #WINDOW_CHUNKS_PROP_NAME}, or its default. */
    public static int windowChunks() {
        return Integer.getInteger(WINDOW_CHUNKS_PROP_NAME, WINDOW_CHUNKS_DEFAULT);
    }

    /** @return the round deadline in ms, from {@value #ROUND_TIMEOUT_MS_PROP_NAME}, or its default. */
    public static long roundTimeoutMs() {
        return Long.getLong(ROUND_TIMEOUT_MS_PROP_NAME, ROUND_TIMEOUT_MS_DEFAULT);
    }

    /** @return the connect timeout in ms, from {@value #CONNECT_TIMEOUT_MS_PROP_NAME}, or its default. */
    public static long connectTimeoutMs() {
        return Long.getLong(CONNECT_TIMEOUT_MS_PROP_NAME, CONNECT_TIMEOUT_MS_DEFAULT);
    }

    /** @return the bytes one job lets be in flight into one link, from {@value #LINK_WINDOW_PROP_NAME}, or its default. */
    public static int linkWindow() {
        return SystemUtil.getSizeAsInt(LINK_WINDOW_PROP_NAME, LINK_WINDOW_DEFAULT);
    }

    /** @return fragments polled per duty cycle, from {@value #FRAGMENT_LIMIT_PROP_NAME}, or its default. */
    public static int fragmentLimit() {
        return Integer.getInteger(FRAGMENT_LIMIT_PROP_NAME, FRAGMENT_LIMIT_DEFAULT);
    }
}
