package io.dlion.testkit;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Channels;
import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.HelloAckFlyweight;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One slice's server played by a test, frame by frame, on a real embedded driver over IPC: the test reads the worker's
 * HELLOs and votes from {@link #votes()} and writes exactly the frames it chooses, in the order it chooses, to
 * {@link #results()}. So an interleaving that a real server produces only under some timing (an answer that arrives
 * late, a frame of a later round first) is forced deterministically, with the worker's real exchange.
 * <pre>{@code
 * try (PlayedServer server = PlayedServer.launch(1911, 1912)) {
 *     AeronVoteExchange worker = server.connect(() -> new AeronVoteExchange(ctx.aeron(server.aeron()).slices(List.of(server.slice()))), null);
 *     worker.submit(0, ...);
 *     server.send(Frames.averageResult(...));
 *     worker.await(0, ...);
 * }
 * }</pre>
 */
public final class PlayedServer implements AutoCloseable {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    private final AeronRuntime runtime;
    /** False for a further slice's server on another played server's driver, which that one closes. */
    private final boolean ownsRuntime;
    private final Subscription votes;
    private ExclusivePublication results;
    private final String resultChannel;
    private final int voteStreamId;
    private final int resultStreamId;
    private final int sliceIndex;
    private final long fromParam;
    private final long toParam;
    private final HelloFlyweight helloIn = new HelloFlyweight();
    private final UnsafeBuffer out = new UnsafeBuffer(new byte[HelloAckFlyweight.SIGNED_LENGTH]);

    /**
     * A HELLO the played server read: who said it, the round it named, its nonce (an answer must echo it) and the Aeron
     * session it came on (the worker's vote publication).
     */
    public record Hello(int jobId, int workerId, int slice, int wordOffset, long round, long paramCount, long nonce, int sessionId) {
        /** @return true for a join HELLO. */
        public boolean isJoin() {
            return round == MessageHeaderFlyweight.JOIN_ROUND;
        }
    }

    private PlayedServer(final AeronRuntime runtime, final int voteStreamId, final int resultStreamId, final int sliceIndex,
        final long fromParam, final long toParam) {
        this(runtime, voteStreamId, resultStreamId, sliceIndex, fromParam, toParam, Channels.ipc());
    }

    private PlayedServer(final AeronRuntime runtime, final int voteStreamId, final int resultStreamId, final int sliceIndex,
        final long fromParam, final long toParam, final String resultChannel) {
        this(runtime, voteStreamId, resultStreamId, sliceIndex, fromParam, toParam, Channels.ipc(), resultChannel);
    }

    private PlayedServer(final AeronRuntime runtime, final int voteStreamId, final int resultStreamId, final int sliceIndex,
        final long fromParam, final long toParam, final String voteChannel, final String resultChannel) {
        this.resultChannel = resultChannel;
        this.voteStreamId = voteStreamId;
        this.resultStreamId = resultStreamId;
        this.sliceIndex = sliceIndex;
        this.fromParam = fromParam;
        this.toParam = toParam;
        this.ownsRuntime = runtime == null;
        this.runtime = ownsRuntime ? AeronRuntime.launch(new AeronRuntime.Context()) : runtime;
        try {
            this.votes = this.runtime.aeron().addSubscription(voteChannel, voteStreamId);
            this.results = this.runtime.aeron().addExclusivePublication(resultChannel, resultStreamId);
        } catch (final RuntimeException ex) {
            if (ownsRuntime) {
                CloseHelper.quietClose(this.runtime);
            }
            throw ex;
        }
    }

    /**
     * Launch an embedded driver and the played server's vote subscription and result publication on it.
     *
     * @param voteStreamId   the vote stream, distinct per test class.
     * @param resultStreamId the result stream.
     * @return the played server.
     */
    public static PlayedServer launch(final int voteStreamId, final int resultStreamId) {
        return new PlayedServer(null, voteStreamId, resultStreamId, 0, 0, -1);
    }

    /**
     * Launch a played server whose result publication is on the given IPC channel, e.g. with a short term
     * ({@code Channels.ipc() + "|term-length=65536"}) so that a worker that leaves results unread holds it back (an IPC
     * publication goes at most a term window ahead of its slowest subscriber), as a real result stream over UDP does.
     *
     * @param voteStreamId   the vote stream, distinct per test class.
     * @param resultStreamId the result stream.
     * @param resultChannel  an {@code aeron:ipc} channel for the result publication; the worker subscribes on {@link Channels#ipc()}.
     * @return the played server.
     */
    public static PlayedServer launch(final int voteStreamId, final int resultStreamId, final String resultChannel) {
        return new PlayedServer(null, voteStreamId, resultStreamId, 0, 0, -1, resultChannel);
    }

    /**
     * Launch an embedded driver and a played server of one slice whose votes come on the given channel, e.g. a sharded
     * topology's UDP vote channel of the slice ({@link io.dlion.aeron.Topology#serverVoteChannel(int, int)}), where a
     * worker whose slices move ({@code SliceOwners}) sends them; results go out on IPC.
     *
     * @param slice          the slice's index.
     * @param fromParam      its first parameter, a multiple of 64.
     * @param toParam        its end (exclusive), or -1 for the last parameter.
     * @param voteChannel    the channel its vote subscription is on.
     * @param voteStreamId   its vote stream.
     * @param resultStreamId its result stream.
     * @return the played server.
     */
    public static PlayedServer launch(final int slice, final long fromParam, final long toParam, final String voteChannel,
        final int voteStreamId, final int resultStreamId) {
        return new PlayedServer(null, voteStreamId, resultStreamId, slice, fromParam, toParam, voteChannel, Channels.ipc());
    }

    /**
     * The server of a further slice, played on this one's driver, whose votes come on the given channel (see
     * {@link #launch(int, long, long, String, int, int)}); results go out on IPC.
     *
     * @param slice          the further slice's index.
     * @param fromParam      its first parameter, a multiple of 64.
     * @param toParam        its end (exclusive), or -1 for the last parameter.
     * @param voteChannel    the channel its vote subscription is on.
     * @param voteStreamId   its vote stream.
     * @param resultStreamId its result stream.
     * @return the further slice's played server.
     */
    public PlayedServer slice(final int slice, final long fromParam, final long toParam, final String voteChannel, final int voteStreamId,
        final int resultStreamId) {
        return new PlayedServer(runtime, voteStreamId, resultStreamId, slice, fromParam, toParam, voteChannel, Channels.ipc());
    }

    /**
     * The server of a further slice, played on this one's driver (closed with this one, not with the further slice's).
     *
     * @param slice          the further slice's index.
     * @param fromParam      its first parameter, a multiple of 64.
     * @param toParam        its end (exclusive), or -1 for the last parameter.
     * @param voteStreamId   its vote stream.
     * @param resultStreamId its result stream.
     * @return the further slice's played server.
     */
    public PlayedServer slice(final int slice, final long fromParam, final long toParam, final int voteStreamId, final int resultStreamId) {
        return new PlayedServer(runtime, voteStreamId, resultStreamId, slice, fromParam, toParam);
    }

    /**
     * The server of a further slice, played on this one's driver, whose result publication is on the given IPC channel
     * (a short term, say, so that a worker that leaves this slice's results unread holds it back, see
     * {@link #launch(int, int, String)}).
     *
     * @param slice          the further slice's index.
     * @param fromParam      its first parameter, a multiple of 64.
     * @param toParam        its end (exclusive), or -1 for the last parameter.
     * @param voteStreamId   its vote stream.
     * @param resultStreamId its result stream.
     * @param resultChannel  an {@code aeron:ipc} channel for its result publication.
     * @return the further slice's played server.
     */
    public PlayedServer slice(final int slice, final long fromParam, final long toParam, final int voteStreamId, final int resultStreamId,
        final String resultChannel) {
        return new PlayedServer(runtime, voteStreamId, resultStreamId, slice, fromParam, toParam, resultChannel);
    }

    /**
     * The server restarts: its result publication closes and a new one (a new session, as a fresh server's) takes its
     * place on the same stream; the worker must prove it again by a HELLO.
     */
    public void restart() {
        CloseHelper.close(results);
        results = runtime.aeron().addExclusivePublication(resultChannel, resultStreamId);
    }

    /** @return the Aeron client the worker's exchange is made with. */
    public Aeron aeron() {
        return runtime.aeron();
    }

    /** @return this server's slice (the one covering every parameter, unless made by {@link #slice(int, long, long, int, int)}). */
    public SliceEndpoint slice() {
        return new SliceEndpoint(sliceIndex, fromParam, toParam, Channels.ipc(), voteStreamId, Channels.ipc(), resultStreamId);
    }

    /** @return the server's vote subscription. */
    public Subscription votes() {
        return votes;
    }

    /** @return the server's result publication. */
    public ExclusivePublication results() {
        return results;
    }

    /**
     * Read the vote stream until a HELLO arrives (other frames are skipped), 10 s at most.
     *
     * @return the HELLO.
     */
    public Hello takeHello() {
        final Hello[] taken = {null};
        final long deadline = System.nanoTime() + WAIT_NS;
        while (taken[0] == null) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no HELLO on " + votes.channel() + " stream " + voteStreamId);
            }
            votes.poll((buffer, offset, length, header) -> {
                final HelloFlyweight hello = helloIn.wrapForRead(buffer, offset);
                final MessageHeaderFlyweight h = hello.header();
                if (taken[0] == null && h.type() == MessageType.HELLO) {
                    taken[0] = new Hello(h.jobId(), h.workerId(), h.slice(), h.chunkWordOffset(), h.round(), hello.paramCount(), hello.nonce(),
                        header.sessionId());
                }
            }, 1);
            Thread.onSpinWait();
        }
        return taken[0];
    }

    /**
     * Answer a HELLO with a HELLO_ACK that proves this server's result session.
     *
     * @param hello     the HELLO answered.
     * @param joinRound the worker's first round while its join is pending, or {@link HelloAckFlyweight#NO_JOIN}.
     * @param donor     the donor of that join, or {@link JoinNoticeFlyweight#NO_DONOR}.
     * @param secret    the job's secret, or null.
     */
    public void answer(final Hello hello, final long joinRound, final int donor, final byte[] secret) {
        final int length = new HelloAckFlyweight().wrap(out, 0).encode(hello.jobId(), joinRound, hello.wordOffset(), donor, hello.workerId(),
            hello.slice(), hello.paramCount(), hello.nonce(), results.sessionId(), secret == null ? null : new HelloCredentials(secret));
        send(new UnsafeBuffer(out, 0, length));
    }

    /**
     * Answer a HELLO as a sharded job's server that knows of no join, naming the rank whose process serves the slice.
     *
     * @param hello       the HELLO answered.
     * @param servingRank the rank the answer names.
     */
    public void answer(final Hello hello, final int servingRank) {
        final int length = new HelloAckFlyweight().wrap(out, 0).encode(hello.jobId(), HelloAckFlyweight.NO_JOIN, hello.wordOffset(),
            JoinNoticeFlyweight.NO_DONOR, hello.workerId(), hello.slice(), hello.paramCount(), hello.nonce(), results.sessionId(), servingRank, null);
        send(new UnsafeBuffer(out, 0, length));
    }

    /**
     * Broadcast a JOIN_NOTICE.
     *
     * @param jobId         of the job.
     * @param joiningWorker the worker that (re)joins.
     * @param firstRound    its first round.
     * @param donor         its donor, or {@link JoinNoticeFlyweight#NO_DONOR}.
     */
    public void joinNotice(final int jobId, final int joiningWorker, final long firstRound, final int donor) {
        final int length = new JoinNoticeFlyweight().wrap(out, 0).encode(jobId, firstRound, 0, donor, 0, joiningWorker);
        send(new UnsafeBuffer(out, 0, length));
    }

    /**
     * Connect a worker: run {@code connect} (which blocks until a server answers the worker's HELLO) on another thread,
     * answer its first HELLO as a server that knows of no join, and return what it built.
     *
     * @param connect builds the worker's exchange.
     * @param secret  the job's secret, or null.
     * @param <T>     the exchange's type.
     * @return the connected exchange (within 10 s).
     * @throws Exception when connecting failed or took longer.
     */
    public <T> T connect(final Callable<T> connect, final byte[] secret) throws Exception {
        return connectWith(connect, hello -> answer(hello, HelloAckFlyweight.NO_JOIN, JoinNoticeFlyweight.NO_DONOR, secret));
    }

    /**
     * Connect a worker, answering its HELLOs as {@code handshake} chooses (it must prove the server to the worker).
     *
     * @param connect   builds the worker's exchange.
     * @param handshake reads the worker's HELLOs from {@link #takeHello()} and answers.
     * @param <T>       the exchange's type.
     * @return the connected exchange (within 10 s).
     * @throws Exception when connecting failed or took longer.
     */
    public <T> T connectWith(final Callable<T> connect, final java.util.function.Consumer<Hello> handshake) throws Exception {
        final ExecutorService connecting = Executors.newSingleThreadExecutor();
        try {
            final Future<T> connected = connecting.submit(connect);
            try {
                handshake.accept(takeHello());
            } catch (final IllegalStateException ex) {
                if (connected.isDone()) {
                    connected.get(); // the worker failed before it said HELLO: its exception says why
                }
                throw ex;
            }
            return connected.get(10, TimeUnit.SECONDS);
        } finally {
            connecting.shutdownNow();
        }
    }

    /** Offer until accepted (10 s at most). */
    public void send(final byte[] frame) {
        Frames.send(results, frame);
    }

    /** Offer the whole buffer until accepted (10 s at most). */
    public void send(final DirectBuffer frame) {
        Frames.send(results, frame);
    }

    /**
     * Send this slice's whole Avg result of a round, chunk by chunk, in order.
     *
     * @param jobId      the job the frames name.
     * @param round      the round.
     * @param layout     the slice's chunks.
     * @param voterMask  the voters the frames name (the first 64 workers).
     * @param countPlanes the counts' bit planes over every parameter.
     */
    public void sendAverageResult(final int jobId, final long round, final ChunkLayout layout, final long voterMask, final long[][] countPlanes) {
        for (int c = 0; c < layout.chunkCount(); c++) {
            send(Frames.averageResult(jobId, round, sliceIndex, layout, c, voterMask, countPlanes));
        }
    }

    /**
     * Offer a result frame until the result publication takes it, as a server whose receivers may hold it back.
     *
     * @param frame  the frame.
     * @param waitNs how long it may be held back (back pressure).
     * @return false when it was still held back after {@code waitNs}.
     * @throws IllegalStateException when the publication refuses it for another reason (closed, not connected).
     */
    public boolean offerWithin(final DirectBuffer frame, final long waitNs) {
        final long deadline = System.nanoTime() + waitNs;
        long result;
        while ((result = results.offer(frame)) < 0) {
            if (result != Publication.BACK_PRESSURED && result != Publication.ADMIN_ACTION) {
                throw new IllegalStateException("result frame refused: " + result);
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }

    @Override
    public void close() {
        CloseHelper.closeAll(results, votes);
        if (ownsRuntime) {
            CloseHelper.close(runtime);
        }
    }
}
