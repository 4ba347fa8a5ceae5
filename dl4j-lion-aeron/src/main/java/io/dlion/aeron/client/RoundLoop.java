package io.dlion.aeron.client;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntSupplier;

import io.dlion.aeron.RoundActivity;
import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.exchange.ExchangeCounters;
import org.agrona.CloseHelper;
import org.agrona.concurrent.IdleStrategy;

/**
 * The rounds of a worker's exchange, one loop for both payloads: a {@link SliceLink} per slice, the
 * {@link WorkerSession} and the counters, driven from connect through every round's {@code submit -> await}. What
 * differs between the payloads is the {@link RoundPayload}: its slices' codecs, the result a round builds and what a
 * slice's complete part is given to. What differs between the exchanges is the work an exchange adds to every pass of a
 * wait (the vote exchange's slice failover and side agent).
 * <p>
 * A pass of {@link #await}: every link keeps its server proven ({@link SliceLink#maintain}), the links send what their
 * publications take, starting with the slice after this worker's own, then read the round's frames of every slice whose
 * result is incomplete; then the exchange's own work (after the reads, so that a server is judged on the frames already
 * here); each slice whose result is complete goes to the payload once; when
 * every slice is complete the round ends. A server's abort ends the round with {@link QuorumLostException}, a demand to
 * rejoin or a later round's frame with {@link RejoinRequiredException}, the deadline with a {@link TimeoutException}.
 * <p>
 * Not thread-safe: the exchange's training thread drives it.
 *
 * @param <R> the round's result.
 */
final class RoundLoop<R> implements AutoCloseable {
    /** A pass that adds no work of the exchange's own. */
    static final IntSupplier NO_WORK = () -> 0;

    private final ExchangeContext<?> ctx;
    private final RoundPayload<R> payload;
    private final SliceLink[] links;
    /** Per slice: its complete result of this round was given to the payload. */
    private final boolean[] resultGiven;
    private final WorkerCounters counters;
    private final ExchangeCounters exchangeCounters;
    private WorkerSession session;
    private long submitNs;
    private boolean closed;
    /** Between {@link #submit} and the end of its {@link #await} (or {@link #close}): counted in {@link RoundActivity}. */
    private boolean inRound;

    /**
     * Add every slice's link (not yet connected, see {@link #connect}) and the worker's counters.
     *
     * @param ctx              the exchange's concluded configuration: its slices' endpoints are the links'.
     * @param payload          what goes up and what the results build.
     * @param join             true for a worker that asks the servers for its first round and donor.
     * @param exchangeCounters the exchange's byte and round counters.
     * @throws IllegalArgumentException when a vote channel's MTU cannot carry a chunk.
     */
    RoundLoop(final ExchangeContext<?> ctx, final RoundPayload<R> payload, final boolean join, final ExchangeCounters exchangeCounters) {
        this.ctx = ctx;
        this.payload = payload;
        this.exchangeCounters = exchangeCounters;
        this.links = new SliceLink[ctx.slices.size()];
        this.resultGiven = new boolean[links.length];
        this.counters = new WorkerCounters(ctx.aeron, ctx.jobId(), ctx.workerId);
        try {
            openLinks(ctx.slices, join);
        } catch (final RuntimeException ex) {
            CloseHelper.quietClose(counters);
            throw ex;
        }
    }

    /**
     * Connect every slice: say HELLO (repeated until answered) and read until every slice's server has proven itself.
     * Every slice is read on every pass, the connected ones too: the answers to the other workers' HELLOs share a
     * server's result stream, which waits for its slowest reader (a sharded job's 8 KiB windows at 64 workers).
     *
     * @param pass work done on every pass while a slice is not connected (a joining worker's search for moved slices),
     *             returning the work done.
     * @throws IllegalStateException when a slice does not connect in time.
     */
    void connect(final IntSupplier pass) {
        final long deadline = ctx.nanoClock.nanoTime() + ctx.connectTimeoutNs;
        final IdleStrategy idle = ctx.idleStrategy;
        while (true) {
            int work = 0;
            SliceLink waiting = null;
            for (final SliceLink link : links) {
                work += link.maintain() + link.poll();
                if (waiting == null && !link.connected()) {
                    waiting = link;
                }
            }
            if (waiting == null) {
                return;
            }
            work += pass.getAsInt();
            if (ctx.nanoClock.nanoTime() - deadline >= 0) {
                throw new IllegalStateException(waiting.describeNotConnected(TimeUnit.NANOSECONDS.toMillis(ctx.connectTimeoutNs)));
            }
            idle.idle(work);
        }
    }

    /**
     * Start over as a joining worker: close every link, so the servers see this worker's session end, and open new ones
     * (a new session) to where each slice is served now (a slice may have moved), over UDP (a slice this process serves
     * too: the hand-over relay reaches a joining worker at its UDP result endpoint), which say a join HELLO;
     * {@link #connect} follows.
     */
    void rejoin() {
        final SliceEndpoint[] endpoints = new SliceEndpoint[links.length];
        for (int i = 0; i < links.length; i++) {
            endpoints[i] = links[i].endpoint().withoutLocal(); // a joining worker reaches every slice as the others do
        }
        CloseHelper.closeAll(links);
        Arrays.fill(links, null);
        openLinks(List.of(endpoints), true);
    }

    /** @return the links, one per slice, in slice order; the array stays, its links are new after {@link #rejoin}. */
    SliceLink[] links() {
        return links;
    }

    /** @return the worker's session, new after {@link #rejoin}. */
    WorkerSession session() {
        return session;
    }

    /** @return this worker's Aeron counters. */
    WorkerCounters counters() {
        return counters;
    }

    /** @return true once closed. */
    boolean isClosed() {
        return closed;
    }

    /** @throws IllegalStateException when closed. */
    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("exchange closed");
        }
    }

    /**
     * @param round the round the caller submits.
     * @throws IllegalStateException    when closed, or while the worker is joining.
     * @throws IllegalArgumentException when it is not the session's next round.
     */
    void checkSubmit(final long round) {
        checkOpen();
        if (session.joining()) {
            throw new IllegalStateException("worker " + ctx.workerId + " is joining: awaitJoin first, then submit the round it returns");
        }
        if (round != session.nextRound()) {
            throw new IllegalArgumentException("round must be " + session.nextRound() + ", got " + round);
        }
    }

    /**
     * A round starts, its payload copied: every slice sends every chunk and expects every result word; send the chunks the
     * publications take now.
     *
     * @param round the round, checked by {@link #checkSubmit}.
     */
    void submit(final long round) {
        if (!inRound) {
            inRound = true;
            RoundActivity.begin();
        }
        try {
            session.startRound(round);
            submitNs = ctx.nanoClock.nanoTime();
            payload.startRound();
            Arrays.fill(resultGiven, false);
            for (final SliceLink link : links) {
                link.startRound();
                link.maintain();
            }
            sendChunks();
        } catch (final RuntimeException ex) {
            leaveRound(); // no await follows a submit that failed
            throw ex;
        }
    }

    /**
     * Wait for the round's result, sending the chunks that {@link #submit} could not send yet.
     *
     * @param round         the round submitted last.
     * @param timeoutMillis how long to wait at most.
     * @param pass          the exchange's own work on every pass, returning the work done.
     * @return the payload's result of the round.
     * @throws TimeoutException        when the result is not complete in time.
     * @throws QuorumLostException     when a slice's server aborted the round.
     * @throws RejoinRequiredException when a server tells this worker to rejoin, or a frame of a later round arrives while
     *                                 this round's result is incomplete (the rest of it will never come).
     */
    R await(final long round, final long timeoutMillis, final IntSupplier pass) throws TimeoutException, InterruptedException {
        try {
            return awaitRound(round, timeoutMillis, pass);
        } finally {
            leaveRound();
        }
    }

    private R awaitRound(final long round, final long timeoutMillis, final IntSupplier pass) throws TimeoutException, InterruptedException {
        if (round != session.submittedRound() || round != session.nextRound()) {
            throw new IllegalArgumentException("await must follow submit of the same round: submitted " + session.submittedRound()
                + ", got " + round);
        }
        final long deadline = ctx.nanoClock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        final IdleStrategy idle = ctx.idleStrategy;
        idle.reset();
        while (true) {
            int work = 0;
            for (final SliceLink link : links) {
                work += link.maintain();
            }
            final int moved = sendChunks() + pollResults(round);
            if (moved > 0) {
                RoundActivity.progress();
            }
            work += moved;
            work += giveResults(round); // before the pass: a slice taken over in it is given its last result whole
            work += pass.getAsInt(); // after the frames already here are read: a server is judged on the rounds applied
            if (resultsDone()) {
                return complete(round);
            }
            if (ctx.nanoClock.nanoTime() - deadline >= 0) {
                throw new TimeoutException(describeTimeout(round, timeoutMillis));
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while awaiting round " + round);
            }
            idle.idle(work);
        }
    }

    /**
     * Between rounds: keep every server proven and read its frames (join notices, results of rounds this worker does not
     * vote in); frames of the round it votes in next stay in the log.
     *
     * @return work done.
     */
    int pollIdle() {
        int work = 0;
        for (final SliceLink link : links) {
            work += link.maintain();
            work += link.poll();
        }
        return work;
    }

    /**
     * Between rounds, on the exchange's backlog reader: read every slice's frames (a later round's go to the link's
     * backlog), without the HELLOs and proofs of {@link #pollIdle()}.
     *
     * @return work done.
     */
    int pollLinks() {
        int work = 0;
        for (final SliceLink link : links) {
            work += link.poll();
        }
        return work;
    }

    @Override
    public void close() {
        leaveRound();
        if (!closed) {
            closed = true;
            CloseHelper.closeAll(links);
            CloseHelper.close(counters);
        }
    }

    /** The round this loop submitted is over for the process's idle strategies ({@link RoundActivity}). */
    private void leaveRound() {
        if (inRound) {
            inRound = false;
            RoundActivity.end();
        }
    }

    private void openLinks(final List<SliceEndpoint> endpoints, final boolean join) {
        session = new WorkerSession(ctx.workerId, links.length, ctx.firstRound, join,
            ctx.secret() == null ? null : new HelloCredentials(ctx.secret()), ctx.epochClock);
        try {
            for (int i = 0; i < links.length; i++) {
                final SliceEndpoint endpoint = endpoints.get(i);
                links[i] = new SliceLink(i, endpoint, ctx, payload.sliceCodec(i, endpoint), session, counters, exchangeCounters);
            }
        } catch (final RuntimeException ex) {
            CloseHelper.quietCloseAll(links);
            throw ex;
        }
    }

    /**
     * Send what the slices' publications take, starting with the slice after this worker's own: worker i starts with
     * slice i + 1, so that in a sharded job the N workers' first slices go to N different owners and every link is busy
     * from the start, rather than all workers filling slice 0's owner first.
     *
     * @return chunks sent.
     */
    private int sendChunks() {
        int work = 0;
        final int first = (ctx.workerId + 1) % links.length;
        for (int i = 0; i < links.length; i++) {
            work += links[(first + i) % links.length].sendChunks();
        }
        return work;
    }

    /**
     * Read the round's frames of every slice whose result is not complete yet, and end the round when a server says it is
     * over for this worker. A slice whose result is complete is read too: its frames of later rounds go to its link's
     * backlog, where they hold nobody back while this worker waits for another slice (left in Aeron's log, a worker that
     * came back from a stop many rounds behind, waiting for a result it could no longer get, held every worker's results
     * of the slice it had: seen in a chaos soak).
     */
    private int pollResults(final long round) {
        int work = 0;
        final long now = ctx.nanoClock.nanoTime(); // once a pass, not once per slice still awaited
        for (final SliceLink link : links) {
            final boolean done = link.resultDone();
            work += link.poll();
            if (!done) {
                if (link.abortVoters() != null) {
                    final StringBuilder state = new StringBuilder("worker ").append(ctx.workerId()).append(": round ").append(round)
                        .append(" aborted by the server of slice ").append(link.endpoint().slice()).append("; the links:");
                    for (final SliceLink l : links) {
                        state.append("\n  ").append(l.describeState(now));
                    }
                    System.getLogger(RoundLoop.class.getName()).log(System.Logger.Level.WARNING, state.toString());
                    session.endRound(round);
                    throw new QuorumLostException(round, link.endpoint().slice(), link.abortVoters());
                }
                if (session.rejoinRequired() != null) {
                    throw new RejoinRequiredException(round, session.rejoinRequired());
                }
                if (session.laterRoundSeen() >= 0) {
                    throw new RejoinRequiredException(round, session.workerId(), session.laterRoundSeen());
                }
                final long kept = link.silentWhileAlive(now, ctx.resultLostNs) ? laterRoundKept(round) : -1;
                if (kept >= 0) {
                    throw RejoinRequiredException.silentSlice(round, session.workerId(), link.endpoint().slice(), ctx.resultLostNs, kept);
                }
            }
        }
        return work;
    }

    /**
     * @param round the round this worker is in.
     * @return the earliest round after it of which a slice whose result of the round is in holds a frame, or -1: the job
     *     has completed the round (a server publishes a later round only after workers applied this one whole), so a slice
     *     whose live server has sent nothing since will not send its part to this worker any more.
     */
    private long laterRoundKept(final long round) {
        long later = -1;
        for (final SliceLink link : links) {
            final long kept = link.resultDone() ? link.keptRound() : -1;
            if (kept > round && (later < 0 || kept < later)) {
                later = kept;
            }
        }
        return later;
    }

    /** Give the payload every slice whose result became complete since the last pass. */
    private int giveResults(final long round) {
        int work = 0;
        for (final SliceLink link : links) {
            final int i = link.index();
            if (!resultGiven[i] && link.resultDone()) {
                resultGiven[i] = true;
                work += payload.onSliceResult(i, link.layout(), round);
            }
        }
        return work;
    }

    private boolean resultsDone() {
        for (final SliceLink link : links) {
            if (!link.resultDone()) {
                return false;
            }
        }
        return true;
    }

    private R complete(final long round) {
        final R result = payload.result(round);
        session.endRound(round);
        counters.rounds().incrementRelease();
        exchangeCounters.addRound(ctx.nanoClock.nanoTime() - submitNs);
        return result;
    }

    private String describeTimeout(final long round, final long timeoutMillis) {
        final StringBuilder sb = new StringBuilder("worker ").append(ctx.workerId).append(": no complete ").append(links[0].resultName())
            .append(" for round ").append(round).append(" after ").append(timeoutMillis).append(" ms;");
        for (final SliceLink link : links) {
            link.describeProgress(sb);
        }
        return sb.toString();
    }
}
