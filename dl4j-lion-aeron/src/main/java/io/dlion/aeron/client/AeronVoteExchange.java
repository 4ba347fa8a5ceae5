package io.dlion.aeron.client;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;
import java.util.function.IntSupplier;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.JobContext;
import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.SliceOwners;
import io.dlion.aeron.Topology;
import io.dlion.aeron.server.HeldResult;
import io.dlion.aeron.server.SliceServers;
import io.dlion.exchange.ExchangeCounters;
import io.dlion.exchange.JoinNotice;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.RoundResult;
import org.agrona.CloseHelper;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.IdleStrategy;

/**
 * A worker's end of the vote over Aeron. For every slice it owns an {@link ExclusivePublication} for its vote
 * chunks and a {@link Subscription} for the slice server's result chunks.
 * <p>
 * {@link #submit} copies the vote and sends the chunks the publications accept without waiting;
 * {@link #await} sends the rest while it collects result chunks (results of early chunks arrive while late
 * chunks are still going up), and gives up at the deadline with a {@link TimeoutException}: an offer that is
 * back-pressured, not connected or hit by an admin action is retried until then, never longer. Bytes are
 * counted as they go on or come off the log: Aeron's 32-byte data header, the 32-byte message header and the
 * body, padded to Aeron's 32-byte frame alignment.
 * <p>
 * Voters: every result frame names the workers it counts. When a worker is dropped in the middle of a round (at the
 * server's deadline, after some chunks were voted with it), or the slices' voters differ, the chunks of one round
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
 * live rank; the exchange points that slice's votes at the new server, sends the round again once it proves itself and
 * reads the slice's result again whole ({@link SliceOwners} has the rule). Given the job's {@link Context#topology(Topology)},
 * the exchange also serves: it starts this rank's slice server before it connects, starts the server of every slice the
 * rule moves to this rank ({@link SliceServers}), and closes them with itself; a worker made with
 * {@link Context#join(boolean) join(true)} finds each slice's server along the ring and serves nothing until a later move
 * gives it a slice.
 * <p>
 * Parts, one job each: the {@link RoundLoop} runs the rounds over one {@link SliceLink} per slice (its publication and
 * subscription, the frames it sends and receives, where the slice stands in the round; its {@link ServerProof} decides
 * which server session it believes), the same loop and links as {@link AeronMeanExchange}'s, with a {@link VotePayload}
 * (the vote words and the {@link ResultAssembly} the slices' result chunks are decoded into, through each link's
 * {@link VoteSliceCodec}); {@link WorkerSession} holds the round cursor, joining, join notices and HELLO credentials.
 * This class checks the call order and adds what only the vote has: joining, rejoin, slice failover and side work.
 * <p>
 * Not thread-safe: one training thread calls {@code submit -> await} per round. Counters may be read from
 * any thread.
 */
public final class AeronVoteExchange implements VoteExchange {
    private static final System.Logger LOG = System.getLogger(AeronVoteExchange.class.getName());
    private final Context ctx;
    private final VotePayload payload;
    private final RoundLoop<RoundResult> loop;
    /** With {@link Context#owners(SliceOwners)}: the rank each slice's publication goes to. */
    private final int[] sliceOwner;
    /** The round in which this worker last found an awaited proven server dead, -1 before: see {@link #goneServers}. */
    private long deathRound = -1;
    private final ExchangeCounters exchangeCounters = new ExchangeCounters();
    /** With {@link Context#topology(Topology)}: the slice servers of this process. */
    private final SliceServers sliceServers;
    /**
     * The exchange's own work on every pass of a wait, a round's or connecting's: slice failover, then the side agent (a
     * joining worker's hand-over drains the relay while it connects).
     */
    private final IntSupplier roundWork = () -> moveLostSlices() + sideWork();
    /**
     * Held while the links are read between rounds: by {@link #pollIdle()} on the training thread and by the
     * {@link #backlogReader}, which reads the results of a worker that joined until its first {@link #submit}.
     */
    private final Object betweenRounds = new Object();
    /** Reads the links from a join until the first submit (see {@link #awaitJoin}); null when not running. */
    private Thread backlogReader;
    private volatile boolean backlogReaderStop;
    private volatile RuntimeException backlogReaderFailure;
    /** How long the backlog reader sleeps between its passes: at most a round's worth of results arrives meanwhile. */
    private static final long BACKLOG_READER_PARK_NS = TimeUnit.MILLISECONDS.toNanos(1);

    /**
     * Connect to every slice's server: says HELLO (repeated until answered) and waits up to the connect timeout for the
     * server's HELLO_ACK, which proves the server and the session its results come on.
     *
     * @param ctx configuration, concluded here.
     * @throws IllegalStateException when a slice does not connect in time.
     */
    public AeronVoteExchange(final Context ctx) {
        this.ctx = ctx.conclude();
        this.payload = new VotePayload(ctx);
        this.sliceOwner = new int[ctx.slices.size()];
        for (int i = 0; i < sliceOwner.length; i++) {
            sliceOwner[i] = ctx.owners == null ? -1 : ctx.owners.owner(ctx.slices.get(i).slice());
        }
        this.sliceServers = ctx.sliceServers;
        try {
            if (sliceServers != null && !ctx.join) {
                sliceServers.serve(ctx.workerId); // this rank's slice, up before anyone says HELLO to it
            }
            this.loop = new RoundLoop<>(ctx, payload, ctx.join, exchangeCounters);
            ctx.heldResults = this::heldResult;
        } catch (final RuntimeException ex) {
            CloseHelper.quietClose(sliceServers);
            throw ex;
        }
        try {
            connect();
        } catch (final RuntimeException ex) {
            close();
            throw ex;
        }
    }

    /**
     * Start over as a joining worker (for a worker whose round result was lost, {@link RejoinRequiredException}): close
     * every slice's publication and subscription, so the servers see this worker's session end, and connect again with
     * new ones (a new session) that say a join HELLO, as an exchange made with {@link Context#join(boolean) join(true)}
     * does; {@link #awaitJoin} follows. A hand-over that subscribes to the relay does so first
     * ({@link AeronHandOver#prepareTake()}).
     *
     * @throws IllegalStateException when a slice does not connect in time.
     */
    @Override
    public void rejoin() {
        loop.checkOpen();
        stopBacklogReader();
        try {
            loop.rejoin();
            if (ctx.owners != null) {
                ctx.owners.rejoining(); // it votes no more until it joined: it judges and serves as a restarted rank does
            }
            connect();
        } catch (final RuntimeException ex) {
            close();
            throw ex;
        }
    }

    /**
     * @param slice a slice of the job.
     * @return a copy of its last result this worker holds whole, for the server this process takes it over with (the old
     *     one may have died sending it: workers that lack part of it are sent it again), or null.
     */
    private HeldResult heldResult(final int slice) {
        if (ctx.owners.isJoining()) {
            return null; // what it holds is from before its rejoin
        }
        for (final SliceLink link : loop.links()) {
            if (link.endpoint().slice() == slice) {
                return payload.heldResult(link.index(), link.layout());
            }
        }
        return null;
    }

    /**
     * @param slice index of a slice.
     * @return the vote channel of its server now (it moves with its slice, {@link Context#owners(SliceOwners)}).
     */
    String voteChannel(final int slice) {
        return loop.links()[slice].endpoint().voteChannel();
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
        stopBacklogReader();
        loop.checkSubmit(round);
        payload.copy(signWords, paramCount);
        loop.submit(round);
    }

    /**
     * Wait for the round's result, sending the vote chunks that {@link #submit} could not send yet.
     *
     * @param round         the round submitted last.
     * @param timeoutMillis how long to wait at most.
     * @return the result; its arrays are reused by the next round, valid until the next {@link #submit}.
     * @throws TimeoutException        when the result is not complete in time.
     * @throws QuorumLostException     when a slice's server aborted the round.
     * @throws RejoinRequiredException when a server tells this worker to rejoin, or a frame of a later round arrives while
     *                                 this round's result is incomplete (the rest of it will never come).
     */
    @Override
    public RoundResult await(final long round, final long timeoutMillis) throws TimeoutException, InterruptedException {
        return await(round, timeoutMillis, null);
    }

    /**
     * {@link #await(long, long)}, giving each slice's part of the result to {@code parts} as soon as the slice's last result
     * chunk is read (the slices' parts cover the parameters once; see {@link VoteExchange#await(long, long, ResultParts)}).
     *
     * @param round         the round submitted last.
     * @param timeoutMillis how long to wait at most.
     * @param parts         receives the slices' parts, or null.
     * @return the result, as {@link #await(long, long)}.
     * @throws TimeoutException        when the result is not complete in time.
     * @throws QuorumLostException     when a slice's server aborted the round.
     * @throws RejoinRequiredException when a server tells this worker to rejoin (see {@link #await(long, long)}).
     */
    @Override
    public RoundResult await(final long round, final long timeoutMillis, final ResultParts parts)
        throws TimeoutException, InterruptedException {
        payload.parts(parts);
        final RoundResult result = loop.await(round, timeoutMillis, roundWork);
        if (ctx.owners != null) {
            ctx.owners.onApplied(round, result.voterSet());
        }
        return result;
    }

    /**
     * For an exchange made with {@link Context#join(boolean) join(true)}: wait until every slice's server has
     * announced the round this worker votes in first (its JOIN_NOTICE). Results of earlier rounds are read and
     * dropped meanwhile.
     * <p>
     * From then until this worker's first {@link #submit} (its donor's hand-over, the restore of its parameters and data,
     * the first steps of a freshly started process: seconds, some 20 s on a loaded machine), a thread of the exchange
     * reads every slice's results on: those of its first round and later go to a backlog of each link
     * ({@link ExchangeContext#resultBacklogBytes(long)}), and are applied from there round by round. Left in Aeron's log
     * they would hold back every worker's results once a few rounds had gone out (the result stream waits for its slowest
     * receiver): a chaos soak's job stalled 15 to 28 s at every worker's join.
     *
     * @param timeoutMillis how long to wait at most.
     * @return the notice: the first round (the latest over the slices) and the donor, whose parameters at the start
     *     of that round this worker must take before it votes.
     * @throws TimeoutException when no notice arrived in time.
     */
    public JoinNotice awaitJoin(final long timeoutMillis) throws TimeoutException, InterruptedException {
        if (!loop.session().joining()) {
            throw new IllegalStateException("worker " + ctx.workerId + " is not joining (Context.join(true)) or has already joined");
        }
        final long deadline = ctx.nanoClock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        final IdleStrategy idle = ctx.idleStrategy;
        idle.reset();
        while (true) {
            final int work = pollIdle();
            final JoinNotice notice;
            synchronized (betweenRounds) {
                notice = loop.session().tryJoin();
            }
            if (notice != null) {
                startBacklogReader();
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
        if (loop.session().inRound() && !loop.isClosed()) {
            throw new IllegalStateException("pollIdle between rounds only: round " + loop.session().submittedRound() + " is awaited");
        }
        final int side = sideWork();
        synchronized (betweenRounds) {
            return side + loop.pollIdle() + moveLostSlices(); // moves after the frames already here are read
        }
    }

    /** @return bytes of result frames read and kept for rounds this worker has not applied yet, over every slice. */
    public long resultBacklogBytes() {
        synchronized (betweenRounds) {
            long bytes = 0;
            for (final SliceLink link : loop.links()) {
                bytes += link.backlogBytes();
            }
            return bytes;
        }
    }

    private void startBacklogReader() {
        if (backlogReader != null || ctx.resultBacklogBytes() == 0) {
            return;
        }
        backlogReaderStop = false;
        backlogReaderFailure = null;
        final Thread reader = new Thread(this::readBacklog, "dlion-result-backlog-worker" + ctx.workerId);
        reader.setDaemon(true);
        backlogReader = reader;
        reader.start();
    }

    /** The backlog reader's loop: read every link, between rounds, until stopped. */
    private void readBacklog() {
        try {
            while (!backlogReaderStop) {
                synchronized (betweenRounds) {
                    if (backlogReaderStop || loop.isClosed()) {
                        return;
                    }
                    loop.pollLinks();
                }
                LockSupport.parkNanos(BACKLOG_READER_PARK_NS);
            }
        } catch (final RuntimeException ex) {
            backlogReaderFailure = ex;
        }
    }

    /** Stop the backlog reader, if it runs, and wait for it: the training thread reads the links from now on. */
    private void stopBacklogReader() {
        final Thread reader = backlogReader;
        if (reader == null) {
            return;
        }
        backlogReaderStop = true;
        boolean interrupted = false;
        while (true) {
            try {
                reader.join();
                break;
            } catch (final InterruptedException ex) {
                interrupted = true;
            }
        }
        backlogReader = null;
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        final RuntimeException failure = backlogReaderFailure;
        if (failure != null) {
            backlogReaderFailure = null;
            throw new IllegalStateException("worker " + ctx.workerId + ": reading results while joining failed", failure);
        }
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
        int work = sliceServers == null ? 0 : sliceServers.retryPending(slice -> owners.owner(slice) == ctx.workerId);
        if (deathRound >= 0 && !owners.isJoining() && loop.session().inRound() && loop.session().submittedRound() == deathRound) {
            work += moveGoneServers(now);
        }
        for (final SliceLink link : loop.links()) {
            final int slice = link.endpoint().slice();
            if (link.connected() && link.serverRank() >= 0 && link.serverRank() != sliceOwner[link.index()]) {
                final int before = sliceOwner[link.index()];
                owners.onServedBy(slice, link.serverRank());
                sliceOwner[link.index()] = owners.owner(slice); // reached where it is: no move
                LOG.log(System.Logger.Level.WARNING, "worker " + ctx.workerId + ": slice " + slice + " is served by rank "
                    + link.serverRank() + " now, as its server's answer says (rank " + before + " before); " + owners);
            }
            if (owners.owner(slice) == ctx.workerId || !link.serverSilent(now, owners.silenceNs())) {
                continue; // this process's own server is not dead while this code runs (its take-over may be pending)
            }
            final int lost = owners.owner(slice);
            if (link.connected() || (!owners.isJoining() && !isAlive(lost))) {
                final boolean judged = link.connected() && !owners.isJoining();
                final int[] lostSlices = judged ? withSlice(goneServers(now), slice) : new int[] {slice};
                if (judged) {
                    deathRound = loop.session().submittedRound();
                }
                owners.onServersLost(lostSlices);
                loop.counters().slicesMoved().incrementRelease();
                LOG.log(System.Logger.Level.WARNING, "worker " + ctx.workerId + ": the server of slice " + slice + " (rank " + lost
                    + (link.connected() ? ") is silent and disconnected" : ") never answered") + ": rank " + lost + " is dead"
                    + (lostSlices.length > 1 ? ", with the servers of slices " + Arrays.toString(lostSlices) : "") + "; " + owners);
            } else if (owners.isJoining() && !isAlive(lost)) {
                owners.probeNext(slice);
            } else {
                continue; // the candidate is alive: it takes the slice over once it finds the old server dead itself
            }
            work += followOwners();
        }
        return work;
    }

    /**
     * The proven servers of ranks other than this one that are gone ({@link SliceLink#serverGone}: silent and
     * disconnected), whether or not their results are awaited: when a proven server whose result this worker awaits is
     * found dead, these are found dead with it, and so is any that goes later in the same round ({@link #deathRound}).
     * Two ranks killed together are then found together, in the round that every worker that goes on is in, awaiting the
     * first one's slice. Found later, the second (whose result of that round this worker held) was judged only in the next
     * round, when its result was awaited again: a chaos soak's job stopped 5 s more, and the new servers of the first
     * rank's slices waited for the second's votes until their round deadline. The workers that judge so have applied the
     * same rounds, as those that judge an awaited server: none of them can complete the round while a slice's server is
     * dead.
     *
     * @return their slices, empty for none.
     */
    private int[] goneServers(final long now) {
        int[] slices = new int[0];
        for (final SliceLink link : loop.links()) {
            if (sliceOwner[link.index()] != ctx.workerId && link.serverGone(now, ctx.owners.silenceNs())) {
                slices = Arrays.copyOf(slices, slices.length + 1);
                slices[slices.length - 1] = link.endpoint().slice();
            }
        }
        return slices;
    }

    private static int[] withSlice(final int[] slices, final int slice) {
        for (final int s : slices) {
            if (s == slice) {
                return slices;
            }
        }
        final int[] with = Arrays.copyOf(slices, slices.length + 1);
        with[slices.length] = slice;
        return with;
    }

    /** In the round a server was found dead: the servers gone since are dead too ({@link #goneServers}). */
    private int moveGoneServers(final long now) {
        final int[] slices = goneServers(now);
        if (slices.length == 0) {
            return 0;
        }
        ctx.owners.onServersLost(slices);
        loop.counters().slicesMoved().incrementRelease();
        LOG.log(System.Logger.Level.WARNING, "worker " + ctx.workerId + ": the servers of slices " + Arrays.toString(slices)
            + " are silent and disconnected too, in round " + deathRound + ": dead; " + ctx.owners);
        return followOwners();
    }

    /**
     * Point every slice at its slice's server by the owners' view: the dead rank's other slices move too. A moved slice's
     * new server is judged silent from when this worker last heard its rank on another slice's link.
     */
    private int followOwners() {
        final SliceLink[] links = loop.links();
        int moved = 0;
        for (int i = 0; i < links.length; i++) {
            final int owner = ctx.owners.owner(links[i].endpoint().slice());
            if (owner != sliceOwner[i]) {
                final long heardNs = lastHeardFrom(owner);
                sliceOwner[i] = owner;
                links[i].moveTo(ctx.owners.voteChannel(links[i].endpoint().slice()), heardNs);
                moved++;
            }
        }
        return moved;
    }

    /** @return the latest {@link SliceLink#heardNs()} of the links whose proven server is rank r's, or never. */
    private long lastHeardFrom(final int r) {
        long heardNs = ServerProof.NEVER_HEARD;
        for (final SliceLink link : loop.links()) {
            final long heard = link.heardNs();
            if (sliceOwner[link.index()] == r && heard != ServerProof.NEVER_HEARD && (heardNs == ServerProof.NEVER_HEARD || heard - heardNs > 0)) {
                heardNs = heard;
            }
        }
        return heardNs;
    }

    /**
     * @return true when a slice server of rank r has proven itself to this worker and is still reachable (the vote
     *     publication to it connected). A proven server is no evidence by itself: a slice whose result of the open round
     *     this worker holds is not awaited, so its dead server is never found silent, and counting it alive kept a chaos
     *     soak's job waiting forever for the same rank to take over another slice.
     */
    private boolean isAlive(final int r) {
        for (final SliceLink link : loop.links()) {
            if (sliceOwner[link.index()] == r && link.serverReachable()) {
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
        synchronized (betweenRounds) {
            return loop.session().takeJoinNotices();
        }
    }

    @Override
    public ExchangeCounters counters() {
        return exchangeCounters;
    }

    /**
     * @param slice index of a slice in {@link Context#slices()}.
     * @return the {@code host:port} this worker's results of that slice arrive on (UDP), or null (IPC).
     */
    public String resultEndpoint(final int slice) {
        return loop.links()[slice].resultEndpoint();
    }

    /** @return this worker's Aeron counters. */
    public WorkerCounters workerCounters() {
        return loop.counters();
    }

    /**
     * Close the links to the servers; with {@link Context#topology(Topology)}, then this process's slice servers, once
     * the other workers have read their results ({@link SliceServers#close()}).
     */
    @Override
    public void close() {
        try {
            stopBacklogReader();
        } catch (final IllegalStateException ex) {
            LOG.log(System.Logger.Level.WARNING, ex.getMessage(), ex);
        }
        if (!loop.isClosed()) {
            CloseHelper.closeAll(loop, sliceServers);
        }
    }

    private void connect() {
        loop.connect(roundWork);
        if (ctx.owners != null && ctx.owners.isJoining()) {
            for (final SliceLink link : loop.links()) {
                ctx.owners.onServedBy(link.endpoint().slice(), link.serverRank());
                sliceOwner[link.index()] = ctx.owners.owner(link.endpoint().slice());
                ctx.owners.onFound(link.endpoint().slice());
            }
        }
    }

    /**
     * Configuration of one worker's exchange. Required: {@link #aeron(Aeron)}, {@link #jobId(int)},
     * {@link #workerId(int)}, {@link #workers(int)}, {@link #paramCount(long)}; without {@link #slices(List)} one
     * slice on the {@link Configuration} channels covers every parameter. The job's shared settings are
     * {@link JobContext}'s, the exchange's {@link ExchangeContext}'s; joining and side work are the vote exchange's own.
     */
    public static final class Context extends ExchangeContext<Context> {
        private boolean join;
        private Agent sideAgent;
        private SliceOwners owners;
        private Topology topology;
        private SliceServers.Context serving;
        private SliceServers sliceServers;
        /** The slices' last results this worker holds whole, by slice: given to a server this process takes a slice over with. */
        private IntFunction<HeldResult> heldResults = slice -> null;

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
            SliceEndpoint.checkCover(slices(), paramCount(), chunkWords());
            if (owners != null) {
                if (slices.size() != owners.slices()) {
                    throw new IllegalArgumentException("owners: " + owners.slices() + " slices, the endpoints " + slices.size());
                }
                final List<SliceEndpoint> served = new ArrayList<>(slices.size());
                for (final SliceEndpoint slice : slices) {
                    served.add(slice.withVoteChannel(owners.voteChannel(slice.slice())));
                }
                slices = served;
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
         * {@link #join(boolean) join(true)} it finds each slice's server and serves once a later move gives it a slice.
         * The chunk size becomes the topology's ({@link Topology#chunkWords(long, int)}); without {@link #slices(List)} the
         * slices' endpoints are the topology's, with results arriving on this rank's host; unless joining, this rank's own
         * slice is reached by IPC ({@link Topology#servedHere(List, int)}). What is asked of the servers is
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
            if (slices.isEmpty()) {
                slices = topology.endpoints(paramCount(), chunkWords(), workers(), topology.host(workerId));
            }
            if (!join) {
                slices = topology.servedHere(slices, workerId); // this rank's own slice by IPC, to its server in this process
            }
            final SliceServers.Context s = serving == null ? new SliceServers.Context() : serving;
            s.aeron(aeron).topology(topology).rank(workerId).jobId(jobId()).workers(workers()).paramCount(paramCount()).rule(rule())
                .chunkWords(chunkWords()).secret(secret()).frameMac(frameMac());
            sliceServers = new SliceServers(s);
            owners = new SliceOwners(topology, workerId, s.silenceNs(), (slice, dead) -> sliceServers.takeOver(slice, dead, heldResults.apply(slice)));
            if (join) {
                owners.joining();
            }
        }

        /**
         * @param owners who serves which slice of a sharded job over UDP, and what happens when a slice's server dies: the
         *               slice moves to the next live rank ({@link SliceOwners}); the slices' vote channels are its. Null
         *               (default): the slices' servers never move (a restarted server is found where it was).
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
