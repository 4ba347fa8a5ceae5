package io.dlion.aeron.client;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.JobContext;
import io.dlion.aeron.ShardEndpoint;
import io.dlion.aeron.SliceOwners;
import io.dlion.aeron.Topology;
import io.dlion.aeron.server.SliceServers;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.exchange.ExchangeCounters;
import io.dlion.exchange.JoinNotice;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.RoundResult;
import org.agrona.CloseHelper;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.IdleStrategy;

/**
 * A worker's end of the vote over Aeron. For every shard it owns an {@link ExclusivePublication} for its vote
 * chunks and a {@link Subscription} for the shard server's result chunks.
 * <p>
 * {@link #submit} copies the vote and sends the chunks the publications accept without waiting;
 * {@link #await} sends the rest while it collects result chunks (results of early chunks arrive while late
 * chunks are still going up), and gives up at the deadline with a {@link TimeoutException}: an offer that is
 * back-pressured, not connected or hit by an admin action is retried until then, never longer. Bytes are
 * counted as they go on or come off the log: Aeron's 32-byte data header, the 32-byte message header and the
 * body, padded to Aeron's 32-byte frame alignment.
 * <p>
 * Voters: every result frame names the workers it counts. When a worker is dropped in the middle of a round (at the
 * server's deadline, after some chunks were voted with it), or the shards' voters differ, the chunks of one round
 * count different numbers of voters. With MAJORITY that does not change Delta (the result's voter mask is the
 * workers counted in every chunk). With AVERAGE the result gets one segment per run of chunks with the same count
 * ({@link RoundResult#averageSegments}), its voter mask is every worker counted anywhere, and each parameter is applied
 * with the count of the chunk it was voted in.
 * <p>
 * <b>Results are reused.</b> The result buffers are allocated once, with the exchange: the arrays of the
 * {@link RoundResult} that {@link #await} returns are overwritten by the next round. A result is valid until the next
 * {@link #submit} on this exchange; copy what must outlive it.
 * <p>
 * Slices that move: in a sharded job ({@link Context#owners(SliceOwners)}) a slice whose server died moves to the next
 * live rank; the exchange points that shard's votes at the new server, sends the round again once it proves itself and
 * reads the slice's result again whole ({@link SliceOwners} has the rule). Given the job's {@link Context#topology(Topology)},
 * the exchange also serves: it starts this rank's slice server before it connects, starts the server of every slice the
 * rule moves to this rank ({@link SliceServers}), and closes them with itself; a worker made with
 * {@link Context#join(boolean) join(true)} finds each slice's server along the ring and serves nothing until a later move
 * gives it a slice.
 * <p>
 * Parts, one job each: {@link ShardState} (one per shard: its publication and subscription, the frames it sends and
 * receives, where the shard stands in the round; the same link as {@link AeronMeanExchange}'s, with a
 * {@link VoteSliceCodec} for the payload), {@link WorkerSession} (the round cursor, joining, join notices,
 * HELLO credentials) and {@link ResultAssembly} (the preallocated result buffers the shards' result chunks are decoded
 * into). This class runs the rounds: it checks the call order, drives the shards until the deadline and turns a
 * server's abort or rejoin demand into an exception.
 * <p>
 * Not thread-safe: one training thread calls {@code submit -> await} per round. Counters may be read from
 * any thread.
 */
public final class AeronVoteExchange implements VoteExchange {
    private static final System.Logger LOG = System.getLogger(AeronVoteExchange.class.getName());
    private final Context ctx;
    private final ShardState[] shards;
    /** With {@link Context#owners(SliceOwners)}: the rank each shard's publication goes to. */
    private final int[] shardOwner;
    private final WorkerCounters counters;
    private final int totalWords;
    private final long lastWordMask;
    private final long[] vote;
    /** Per shard: its part of this round's result was given to the caller's {@link ResultParts}. */
    private final boolean[] partGiven;
    private WorkerSession session;
    private final ResultAssembly assembly;
    private final ExchangeCounters exchangeCounters = new ExchangeCounters();
    /** With {@link Context#topology(Topology)}: the slice servers of this process. */
    private final SliceServers sliceServers;
    private long submitNs;
    private boolean closed;

    /**
     * Connect to every shard's server: says HELLO (repeated until answered) and waits up to the connect timeout for the
     * server's HELLO_ACK, which proves the server and the session its results come on.
     *
     * @param ctx configuration, concluded here.
     * @throws IllegalStateException when a shard does not connect in time.
     */
    public AeronVoteExchange(final Context ctx) {
        this.ctx = ctx.conclude();
        this.totalWords = (int)((ctx.paramCount() + 63) >>> 6);
        this.lastWordMask = ChunkLayout.lastWordMask(ctx.paramCount());
        this.vote = new long[totalWords];
        this.session = newSession(ctx.join);
        this.assembly = new ResultAssembly(ctx.rule(), ctx.paramCount(), ctx.workers(), ctx.shards.size());
        this.shards = new ShardState[ctx.shards.size()];
        this.partGiven = new boolean[shards.length];
        this.shardOwner = new int[shards.length];
        for (int i = 0; i < shards.length; i++) {
            shardOwner[i] = ctx.owners == null ? -1 : ctx.owners.owner(ctx.shards.get(i).shard());
        }
        this.sliceServers = ctx.sliceServers;
        WorkerCounters cnt = null;
        try {
            if (sliceServers != null && !ctx.join) {
                sliceServers.serve(ctx.workerId); // this rank's slice, up before anyone says HELLO to it
            }
            cnt = new WorkerCounters(ctx.aeron, ctx.jobId(), ctx.workerId);
            for (int i = 0; i < shards.length; i++) {
                shards[i] = new ShardState(i, ctx.shards.get(i), ctx, vote, session, assembly, cnt, exchangeCounters);
            }
        } catch (final RuntimeException ex) {
            CloseHelper.quietCloseAll(shards);
            CloseHelper.quietCloseAll(cnt, sliceServers);
            throw ex;
        }
        this.counters = cnt;
        try {
            connect();
        } catch (final RuntimeException ex) {
            close();
            throw ex;
        }
    }

    private WorkerSession newSession(final boolean join) {
        return new WorkerSession(ctx.workerId, ctx.shards.size(), ctx.firstRound, join,
            ctx.secret() == null ? null : new HelloCredentials(ctx.secret()), ctx.epochClock);
    }

    /**
     * Start over as a joining worker (for a worker whose round result was lost, {@link RejoinRequiredException}): close
     * every shard's publication and subscription, so the servers see this worker's session end, and connect again with
     * new ones (a new session) that say a join HELLO, as an exchange made with {@link Context#join(boolean) join(true)}
     * does; {@link #awaitJoin} follows. A hand-over that subscribes to the relay does so first
     * ({@link AeronHandOver#prepareTake()}).
     *
     * @throws IllegalStateException when a shard does not connect in time.
     */
    @Override
    public void rejoin() {
        if (closed) {
            throw new IllegalStateException("exchange closed");
        }
        final ShardEndpoint[] endpoints = new ShardEndpoint[shards.length];
        for (int i = 0; i < shards.length; i++) {
            endpoints[i] = shards[i].endpoint(); // where each slice is served now: a slice may have moved
        }
        CloseHelper.closeAll(shards);
        session = newSession(true);
        if (ctx.owners != null) {
            ctx.owners.rejoining(); // it votes no more until it joined: it judges and serves as a restarted rank does
        }
        try {
            for (int i = 0; i < shards.length; i++) {
                shards[i] = null;
                shards[i] = new ShardState(i, endpoints[i], ctx, vote, session, assembly, counters, exchangeCounters);
            }
            connect();
        } catch (final RuntimeException ex) {
            close();
            throw ex;
        }
    }

    /**
     * @param shard index of a shard.
     * @return the vote channel of its server now (it moves with its slice, {@link Context#owners(SliceOwners)}).
     */
    String voteChannel(final int shard) {
        return shards[shard].endpoint().voteChannel();
    }

    /** @return the concluded configuration, for the hand-over's checks. */
    Context context() {
        return ctx;
    }

    @Override
    public int workerId() {
        return ctx.workerId;
    }

    @Override
    public int workers() {
        return ctx.workers();
    }

    @Override
    public void submit(final long round, final long[] signWords, final long paramCount) {
        if (closed) {
            throw new IllegalStateException("exchange closed");
        }
        if (session.joining()) {
            throw new IllegalStateException("worker " + ctx.workerId + " is joining: awaitJoin first, then submit the round it returns");
        }
        if (round != session.nextRound()) {
            throw new IllegalArgumentException("round must be " + session.nextRound() + ", got " + round);
        }
        if (paramCount != ctx.paramCount()) {
            throw new IllegalArgumentException("paramCount must be " + ctx.paramCount() + ", got " + paramCount);
        }
        System.arraycopy(signWords, 0, vote, 0, totalWords);
        vote[totalWords - 1] &= lastWordMask;
        session.startRound(round);
        submitNs = ctx.nanoClock.nanoTime();
        assembly.startRound();
        Arrays.fill(partGiven, false);
        for (final ShardState shard : shards) {
            shard.startRound();
            shard.maintain();
        }
        sendChunks();
    }

    /**
     * Wait for the round's result, sending the vote chunks that {@link #submit} could not send yet.
     *
     * @param round         the round submitted last.
     * @param timeoutMillis how long to wait at most.
     * @return the result; its arrays are reused by the next round, valid until the next {@link #submit}.
     * @throws TimeoutException        when the result is not complete in time.
     * @throws QuorumLostException     when a shard's server aborted the round.
     * @throws RejoinRequiredException when a server tells this worker to rejoin, or a frame of a later round arrives while
     *                                 this round's result is incomplete (the rest of it will never come).
     */
    @Override
    public RoundResult await(final long round, final long timeoutMillis) throws TimeoutException, InterruptedException {
        return await(round, timeoutMillis, null);
    }

    /**
     * {@link #await(long, long)}, giving each shard's part of the result to {@code parts} as soon as the shard's last result
     * chunk is read (the shards' parts cover the parameters once; see {@link VoteExchange#await(long, long, ResultParts)}).
     *
     * @param round         the round submitted last.
     * @param timeoutMillis how long to wait at most.
     * @param parts         receives the shards' parts, or null.
     * @return the result, as {@link #await(long, long)}.
     * @throws TimeoutException        when the result is not complete in time.
     * @throws QuorumLostException     when a shard's server aborted the round.
     * @throws RejoinRequiredException when a server tells this worker to rejoin (see {@link #await(long, long)}).
     */
    @Override
    public RoundResult await(final long round, final long timeoutMillis, final ResultParts parts)
        throws TimeoutException, InterruptedException {
        if (round != session.submittedRound() || round != session.nextRound()) {
            throw new IllegalArgumentException("await must follow submit of the same round: submitted " + session.submittedRound()
                + ", got " + round);
        }
        final long deadline = ctx.nanoClock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        final IdleStrategy idle = ctx.idleStrategy;
        idle.reset();
        while (true) {
            int work = 0;
            for (final ShardState shard : shards) {
                work += shard.maintain();
            }
            work += sendChunks() + sideWork();
            work += ShardState.pollResults(shards, session, round);
            work += moveLostSlices(); // after the frames already here are read: a server is judged on the rounds applied
            if (parts != null) {
                work += giveParts(round, parts);
            }
            if (ShardState.resultsDone(shards)) {
                return complete(round);
            }
            final long now = ctx.nanoClock.nanoTime();
            if (now - deadline >= 0) {
                throw new TimeoutException(describeTimeout(round, timeoutMillis));
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while awaiting round " + round);
            }
            idle.idle(work);
        }
    }

    /**
     * For an exchange made with {@link Context#join(boolean) join(true)}: wait until every shard's server has
     * announced the round this worker votes in first (its JOIN_NOTICE). Results of earlier rounds are read and
     * dropped meanwhile.
     *
     * @param timeoutMillis how long to wait at most.
     * @return the notice: the first round (the latest over the shards) and the donor, whose parameters at the start
     *     of that round this worker must take before it votes.
     * @throws TimeoutException when no notice arrived in time.
     */
    public JoinNotice awaitJoin(final long timeoutMillis) throws TimeoutException, InterruptedException {
        if (!session.joining()) {
            throw new IllegalStateException("worker " + ctx.workerId + " is not joining (Context.join(true)) or has already joined");
        }
        final long deadline = ctx.nanoClock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        final IdleStrategy idle = ctx.idleStrategy;
        idle.reset();
        while (true) {
            final int work = pollIdle();
            final JoinNotice notice = session.tryJoin();
            if (notice != null) {
                return notice;
            }
            if (ctx.nanoClock.nanoTime() - deadline >= 0) {
                throw new TimeoutException("worker " + ctx.workerId + ": no JOIN_NOTICE from the server within " + timeoutMillis
                    + " ms (is the server running and does it know this job and secret?)");
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while joining");
            }
            idle.idle(work);
        }
    }

    /**
     * Between rounds: read result frames of rounds this worker will not vote in (and join notices) and drop them, so
     * that a worker which waits between rounds (e.g. for a donor's parameters) does not hold up the broadcast to the
     * others; frames of the round it votes in next stay in the log.
     *
     * @return work done.
     */
    public int pollIdle() {
        if (session.inRound() && !closed) {
            throw new IllegalStateException("pollIdle between rounds only: round " + session.submittedRound() + " is awaited");
        }
        int work = sideWork();
        for (final ShardState shard : shards) {
            work += shard.maintain();
            work += shard.poll();
        }
        return work + moveLostSlices();
    }

    /**
     * Slice failover ({@link Context#owners(SliceOwners)}): a slice whose server fell silent moves to the server the rule
     * names (this process starts it when that is this rank), and so does a slice whose new owner never answers and serves
     * nothing else this worker reached; a joining worker that has not found a slice's server yet tries the next rank
     * along the ring, unless its candidate is alive (it serves another slice this worker reached) and will take the slice
     * over once it notices the death itself. A server's answer names the rank serving it, and the view follows.
     *
     * @return work done.
     */
    private int moveLostSlices() {
        final SliceOwners owners = ctx.owners;
        if (owners == null) {
            return 0;
        }
        final long now = ctx.nanoClock.nanoTime();
        int work = 0;
        for (final ShardState shard : shards) {
            final int slice = shard.endpoint().shard();
            if (shard.connected() && shard.serverRank() >= 0 && shard.serverRank() != shardOwner[shard.index()]) {
                owners.onServedBy(slice, shard.serverRank());
                shardOwner[shard.index()] = owners.owner(slice); // reached where it is: no move
            }
            if (!shard.serverSilent(now, owners.silenceNs())) {
                continue;
            }
            final int lost = owners.owner(slice);
            if (shard.connected() || (!owners.isJoining() && !isAlive(lost))) {
                owners.onServerLost(slice);
                counters.slicesMoved().incrementRelease();
                LOG.log(System.Logger.Level.WARNING, "worker " + ctx.workerId + ": the server of slice " + slice + " (rank " + lost
                    + (shard.connected() ? ") is silent and disconnected" : ") never answered") + ": rank " + lost + " is dead; " + owners);
            } else if (owners.isJoining() && !isAlive(lost)) {
                owners.probeNext(slice);
            } else {
                continue; // the candidate is alive: it takes the slice over once it finds the old server dead itself
            }
            work += followOwners();
        }
        return work;
    }

    /** Point every shard at its slice's server by the owners' view: the dead rank's other slices move too. */
    private int followOwners() {
        int moved = 0;
        for (int i = 0; i < shards.length; i++) {
            final int owner = ctx.owners.owner(shards[i].endpoint().shard());
            if (owner != shardOwner[i]) {
                shardOwner[i] = owner;
                shards[i].moveTo(ctx.owners.voteChannel(shards[i].endpoint().shard()));
                moved++;
            }
        }
        return moved;
    }

    /** @return true when a slice server of rank r has proven itself to this worker and is not silent. */
    private boolean isAlive(final int r) {
        for (final ShardState shard : shards) {
            if (shard.connected() && shardOwner[shard.index()] == r) {
                return true;
            }
        }
        return false;
    }

    private int sideWork() {
        final Agent agent = ctx.sideAgent;
        if (agent == null) {
            return 0;
        }
        try {
            return agent.doWork();
        } catch (final RuntimeException ex) {
            throw ex;
        } catch (final Exception ex) {
            throw new IllegalStateException(agent.roleName() + " failed", ex);
        }
    }

    @Override
    public List<JoinNotice> takeJoinNotices() {
        return session.takeJoinNotices();
    }

    @Override
    public ExchangeCounters counters() {
        return exchangeCounters;
    }

    /**
     * @param shard index of a shard in {@link Context#shards()}.
     * @return the {@code host:port} this worker's results of that shard arrive on (UDP), or null (IPC).
     */
    public String resultEndpoint(final int shard) {
        return shards[shard].resultEndpoint();
    }

    /** @return this worker's Aeron counters. */
    public WorkerCounters workerCounters() {
        return counters;
    }

    /**
     * Close the links to the servers; with {@link Context#topology(Topology)}, then this process's slice servers, once
     * the other workers have read their results ({@link SliceServers#close()}).
     */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            CloseHelper.closeAll(shards);
            CloseHelper.closeAll(counters, sliceServers);
        }
    }

    private void connect() {
        ShardState.connectAll(shards, ctx, () -> moveLostSlices() + sideWork()); // a joining worker's hand-over drains the relay
        if (ctx.owners != null && ctx.owners.isJoining()) {
            for (final ShardState shard : shards) {
                ctx.owners.onServedBy(shard.endpoint().shard(), shard.serverRank());
                shardOwner[shard.index()] = ctx.owners.owner(shard.endpoint().shard());
                ctx.owners.onFound(shard.endpoint().shard());
            }
        }
    }

    /** Send what the shards' publications take, starting with the shard after this worker's own. */
    private int sendChunks() {
        return ShardState.sendChunks(shards, ctx.workerId);
    }

    /** Give the part of every shard whose result became complete since the last pass. */
    private int giveParts(final long round, final ResultParts parts) {
        int given = 0;
        for (final ShardState shard : shards) {
            final int i = shard.index();
            if (!partGiven[i] && shard.resultDone()) {
                partGiven[i] = true;
                assembly.giveShard(i, shard.layout().fromWord(), shard.layout().toWord(), round, parts);
                given++;
            }
        }
        return given;
    }

    private RoundResult complete(final long round) {
        final RoundResult result = assembly.complete(round);
        session.endRound(round);
        if (ctx.owners != null) {
            ctx.owners.onApplied(round, result.voterSet());
        }
        counters.rounds().incrementRelease();
        exchangeCounters.addRound(ctx.nanoClock.nanoTime() - submitNs);
        return result;
    }

    private String describeTimeout(final long round, final long timeoutMillis) {
        final StringBuilder sb = new StringBuilder("worker ").append(ctx.workerId).append(": no complete result for round ").append(round)
            .append(" after ").append(timeoutMillis).append(" ms;");
        for (final ShardState shard : shards) {
            shard.describeProgress(sb);
        }
        return sb.toString();
    }

    /**
     * Configuration of one worker's exchange. Required: {@link #aeron(Aeron)}, {@link #jobId(int)},
     * {@link #workerId(int)}, {@link #workers(int)}, {@link #paramCount(long)}; without {@link #shards(List)} one
     * shard on the {@link Configuration} channels covers every parameter. The job's shared settings are
     * {@link JobContext}'s, the exchange's {@link ExchangeContext}'s; joining and side work are the vote exchange's own.
     */
    public static final class Context extends ExchangeContext<Context> {
        private boolean join;
        private Agent sideAgent;
        private SliceOwners owners;
        private Topology topology;
        private SliceServers.Context serving;
        private SliceServers sliceServers;

        /**
         * Validate once.
         *
         * @return this for a fluent API.
         * @throws IllegalArgumentException naming the field that is wrong.
         */
        @Override
        public Context conclude() {
            if (topology != null) {
                concludeServing();
            }
            super.conclude();
            ShardEndpoint.checkCover(shards(), paramCount(), chunkWords());
            if (owners != null) {
                if (shards.size() != owners.slices()) {
                    throw new IllegalArgumentException("owners: " + owners.slices() + " slices, the shards are " + shards.size());
                }
                final List<ShardEndpoint> served = new ArrayList<>(shards.size());
                for (final ShardEndpoint shard : shards) {
                    served.add(shard.withVoteChannel(owners.voteChannel(shard.shard())));
                }
                shards = served;
            }
            return this;
        }

        /**
         * @param join true for a worker that (re)joins a running job without its parameters: its HELLO asks the server
         *             for a first round and a donor, see {@link AeronVoteExchange#awaitJoin(long)}; firstRound is then
         *             ignored.
         * @return this for a fluent API.
         */
        public Context join(final boolean join) {
            this.join = join;
            return this;
        }

        public boolean join() {
            return join;
        }

        /**
         * @param sideAgent work done on every pass of the exchange's waits ({@code await}, {@code awaitJoin},
         *                  {@code pollIdle}, connecting) on the training thread, e.g. an {@link AeronHandOver} sending a donor's state
         *                  while the donor waits for a round; it must not block. Null for none (default).
         * @return this for a fluent API.
         */
        public Context sideAgent(final Agent sideAgent) {
            this.sideAgent = sideAgent;
            return this;
        }

        public Agent sideAgent() {
            return sideAgent;
        }

        /**
         * A sharded job ({@link Topology#sharded(List, int)}) whose slices this process serves as rank
         * {@link #workerId(int)}: the exchange starts this rank's slice server, takes over the slice of every dead rank
         * the failover rule gives to it ({@link SliceOwners}) and closes its servers with itself; with
         * {@link #join(boolean) join(true)} it finds each slice's server and serves once a later move gives it a slice. The
         * chunk size becomes the topology's ({@link Topology#chunkWords(long, int)}); without {@link #shards(List)} the slices' endpoints are the
         * topology's, with results arriving on this rank's host. What is asked of the servers is
         * {@link #sliceServers(SliceServers.Context)}.
         *
         * @param topology the sharded layout of the job; null (default) for servers this process does not run.
         * @return this for a fluent API.
         */
        public Context topology(final Topology topology) {
            this.topology = topology;
            return this;
        }

        public Topology topology() {
            return topology;
        }

        /**
         * @param serving what is asked of this process's slice servers with {@link #topology(Topology)}: round deadline,
         *                quorum, linger, silence, a listener. The job's settings, the client, the topology and the rank are
         *                set here from this context. Null (default): {@link SliceServers.Context}'s defaults.
         * @return this for a fluent API.
         */
        public Context sliceServers(final SliceServers.Context serving) {
            this.serving = serving;
            return this;
        }

        /** @return the slice servers of this process once concluded with a topology, else null. */
        public SliceServers sliceServers() {
            return sliceServers;
        }

        private void concludeServing() {
            if (sliceServers != null) {
                return; // concluded before
            }
            if (workerId < 0 || workerId >= topology.slices()) {
                throw new IllegalArgumentException("workerId must be in [0, " + topology.slices() + ") of the topology's ranks, got " + workerId);
            }
            if (owners != null) {
                throw new IllegalArgumentException("owners: give either a topology (the exchange serves and moves slices) or owners, not both");
            }
            chunkWords(topology.chunkWords(paramCount(), chunkWords()));
            if (shards.isEmpty()) {
                shards = topology.endpoints(paramCount(), chunkWords(), workers(), topology.host(workerId));
            }
            final SliceServers.Context s = serving == null ? new SliceServers.Context() : serving;
            s.aeron(aeron).topology(topology).rank(workerId).jobId(jobId()).workers(workers()).paramCount(paramCount()).rule(rule())
                .chunkWords(chunkWords()).secret(secret()).frameMac(frameMac());
            sliceServers = new SliceServers(s);
            owners = new SliceOwners(topology, workerId, s.silenceNs(), (slice, dead) -> sliceServers.takeOver(slice, dead));
            if (join) {
                owners.joining();
            }
        }

        /**
         * @param owners who serves which slice of a sharded job over UDP, and what happens when a slice's server dies: the
         *               slice moves to the next live rank ({@link SliceOwners}); the shards' vote channels are its. Null
         *               (default): the shards' servers never move (a restarted server is found where it was).
         * @return this for a fluent API.
         */
        public Context owners(final SliceOwners owners) {
            this.owners = owners;
            return this;
        }

        public SliceOwners owners() {
            return owners;
        }
    }
}
