package io.dlion.testkit;

import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.Configuration;
import io.dlion.aeron.JobContext;
import io.dlion.aeron.RejectReason;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.VoteChunkFlyweight;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Seeded garbage for fault runs: frames that look as if they belonged to a job, each changed by one to three random
 * mutations, for a process that sends them to a real aggregation server during a real training run
 * ({@code io.dlion.cli.GarbageCommand}), and for the fuzz tests.
 * <h2>Corpus</h2>
 * The frames mutated are drawn from a corpus. The corpus of a job ({@link #GarbageFrames(Context)}) is virtual: a frame
 * is built when it is drawn, so the memory used is two frames whatever the model size. Half of the draws are vote chunks
 * ({@code VOTE_CHUNK}, {@code SIGN_BITS}) of random signs, of a random worker of the job, a random chunk of the server's
 * grid and a random round in {@code [0, maxRound]}; the other half HELLOs of a random worker and round, in three
 * kinds, equally likely:
 * <ul>
 *   <li>signed with a wrong secret: 32 random bytes drawn from the seed, with the current time (so the server goes as far
 *       as computing and comparing the HMAC);</li>
 *   <li>without credentials ({@link Encoding#NONE});</li>
 *   <li>signed with the wrong secret and a stale timestamp ({@link Context#staleMs()} old).</li>
 * </ul>
 * {@link #GarbageFrames(List, int, long)} mutates a given list of frames instead (the fuzz test's corpus of a round's
 * real votes). The invariant below then also needs that no HELLO of the list would be accepted as it is (a mutation can
 * leave a frame unchanged): one signed with the job's secret must be stale.
 * <h2>Mutations</h2>
 * {@link #next()} copies a corpus frame and applies 1 to {@value #MAX_MUTATIONS} of these, each equally likely:
 * <pre>
 *   bit flip        one random bit
 *   byte overwrite  one random byte set to a random value
 *   truncation      cut to a random length in [1, length)
 *   extension       1 to 64 zero bytes appended, up to maxFrameLength
 *   header field    type, encoding, job id, chunk word offset, chunk words, worker id, slice or count (voter-set words, param
 *                   count or joining worker) set to an edge value (0, 1, -1, 2, 255, 256, 65535, 2^31-1, 2^63-1, -2^63 or a random
 *                   one, each possibly +-1); or the round moved by -3..+4
 *   body swap       the body of another corpus frame copied over this one's (as many bytes as both have)
 * </pre>
 * <h2>What the server rejects them as (the invariant)</h2>
 * When the server has a secret ({@code AggregationServer.Context.secret}), every frame sent from an Aeron session whose
 * HELLO the server never accepted is rejected under one of {@link #GARBAGE_REASONS}, so a fault run can check that the
 * server's rejections under those reasons equal the frames sent, and that no other reason moved. The order of the
 * checks in {@code AggregationServer.handle}, {@code Membership.onHello} and {@code AggregationServer.onVote} is why:
 * <ol>
 *   <li>fragmented, or shorter than the 32-byte header: {@code malformed};</li>
 *   <li>magic or version: {@code bad-version};</li>
 *   <li>job id: {@code foreign-job};</li>
 *   <li>worker id at or above the worker count: {@code unknown-worker};</li>
 *   <li>a HELLO: no result endpoint where the server adds destinations: {@code malformed}; slice: {@code wrong-slice};
 *       param count: {@code param-count-mismatch}; encoding neither NONE nor HMAC: {@code malformed}; length:
 *       {@code bad-length}; a result address of another length than 0, 4 or 16: {@code malformed}; then, with a secret,
 *       no HMAC, a timestamp outside the allowed skew or a wrong MAC: {@code bad-credentials}. A HELLO past all of these
 *       would bind the worker id to the sender's session (or be refused as {@code replayed-hello}), but it needs an
 *       HMAC-SHA256 made with the job's secret, which this class never has, over all its fields, so no mutation makes
 *       one ({@code frame-mac-mismatch}, a HELLO whose frame-tag flag differs from the server's, comes after the HMAC, so it
 *       is never reached either);</li>
 *   <li>any type but VOTE_CHUNK: {@code unexpected-type};</li>
 *   <li>with frame tags on ({@code frameMac}), a vote without the tag of the job's secret: {@code bad-mac};</li>
 *   <li>a vote: slice: {@code wrong-slice}; chunk not on the grid or of the wrong word count: {@code out-of-range};
 *       encoding not SIGN_BITS: {@code malformed}; length: {@code bad-length};</li>
 *   <li>worker id not bound to this Aeron session by an accepted HELLO: {@code unauthenticated};</li>
 *   <li>only then the round checks, {@code stale-round}, {@code future-round}, {@code duplicate}, {@code late}, and the
 *       {@code ABORT} that holds a vote back until its round or chunk opens.</li>
 * </ol>
 * Garbage stops at step 8 at the latest: it is never counted under the four round reasons, never held back, never
 * enters a vote. This holds when:
 * <ul>
 *   <li>the server has a secret. Without one, step 5 accepts any HELLO of the job's id, slice and param count with a
 *       consistent encoding and length, as many mutated HELLOs are: the garbage session then owns that worker id, the real worker's votes are refused as
 *       {@code unauthenticated} and its rounds lose a voter, a hijack and not a rejection. This is why
 *       {@code GarbageCommand} refuses to run unless told the server has a secret;</li>
 *   <li>every frame travels as one unfragmented Aeron message: frames are at most {@link Context#maxFrameLength()},
 *       which must be at most the publication's {@code maxPayloadLength()} (a longer message arrives as several
 *       fragments, each counted as {@code malformed});</li>
 *   <li>the sending publication's session id is not a real worker's: Aeron gives the publications of one driver
 *       distinct session ids and starts each driver at a random one (do not pin {@code session-id} in the channel).</li>
 * </ul>
 * Not thread-safe: one instance per sending thread.
 */
public final class GarbageFrames {
    /**
     * The reasons a garbage frame is rejected under, see the class comment; the others, {@code stale-round},
     * {@code future-round}, {@code duplicate}, {@code late} and {@code frame-mac-mismatch}, are reached only by an
     * authenticated worker.
     */
    public static final Set<RejectReason> GARBAGE_REASONS = Collections.unmodifiableSet(EnumSet.of(
        RejectReason.MALFORMED,
        RejectReason.BAD_LENGTH,
        RejectReason.BAD_VERSION,
        RejectReason.FOREIGN_JOB,
        RejectReason.UNKNOWN_WORKER,
        RejectReason.WRONG_SLICE,
        RejectReason.UNEXPECTED_TYPE,
        RejectReason.OUT_OF_RANGE,
        RejectReason.PARAM_COUNT_MISMATCH,
        RejectReason.BAD_CREDENTIALS,
        RejectReason.REPLAYED_HELLO,
        RejectReason.UNAUTHENTICATED,
        RejectReason.BAD_MAC));

    /** Most mutations applied to one frame. */
    public static final int MAX_MUTATIONS = 3;
    /** Most bytes one extension appends. */
    public static final int MAX_EXTENSION = 64;
    /** Length of the wrong secret the corpus HELLOs are signed with. */
    public static final int WRONG_SECRET_LENGTH = 32;

    private static final long[] EDGES = {0, 1, -1, 2, 255, 256, 65_535, Integer.MAX_VALUE, Long.MAX_VALUE, Long.MIN_VALUE};
    private static final int MUTATION_KINDS = 6;
    private static final int HEADER_FIELDS = 9;
    private static final int HELLO_LENGTH = HelloFlyweight.SIGNED_LENGTH;
    private static final byte[] LOOPBACK = {127, 0, 0, 1};
    private static final int DISCARD_PORT = 9;

    private final Corpus corpus;
    private final int maxFrameLength;
    private final SplittableRandom random;
    private final Scratch frame;
    private final Scratch donor;
    private final MessageHeaderFlyweight header = new MessageHeaderFlyweight();
    private final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);

    /**
     * Garbage for a job: the virtual corpus of the class comment.
     *
     * @param ctx the job, concluded here.
     */
    public GarbageFrames(final Context ctx) {
        ctx.conclude();
        this.random = new SplittableRandom(ctx.seed);
        this.maxFrameLength = ctx.maxFrameLength;
        this.frame = new Scratch(maxFrameLength);
        this.donor = new Scratch(maxFrameLength);
        final byte[] wrongSecret = new byte[WRONG_SECRET_LENGTH];
        random.nextBytes(wrongSecret);
        this.corpus = new JobCorpus(ctx, new HelloCredentials(wrongSecret));
    }

    /**
     * Garbage from a given corpus of frames.
     *
     * @param frames         the corpus, each frame 1 to {@code maxFrameLength} bytes; kept, not copied.
     * @param maxFrameLength longest frame sent, the publication's {@code maxPayloadLength()}.
     * @param seed           of the mutations.
     */
    public GarbageFrames(final List<byte[]> frames, final int maxFrameLength, final long seed) {
        Objects.requireNonNull(frames, "frames");
        if (frames.isEmpty()) {
            throw new IllegalArgumentException("frames must not be empty");
        }
        for (int i = 0; i < frames.size(); i++) {
            final byte[] bytes = frames.get(i);
            if (bytes == null || bytes.length < 1 || bytes.length > maxFrameLength) {
                throw new IllegalArgumentException("frames[" + i + "] must hold 1 to maxFrameLength=" + maxFrameLength + " bytes, got "
                    + (bytes == null ? null : bytes.length));
            }
        }
        this.random = new SplittableRandom(seed);
        this.maxFrameLength = maxFrameLength;
        this.frame = new Scratch(maxFrameLength);
        this.donor = new Scratch(maxFrameLength);
        this.corpus = new ListCorpus(List.copyOf(frames));
    }

    /** @return the longest frame {@link #next()} returns. */
    public int maxFrameLength() {
        return maxFrameLength;
    }

    /**
     * Draw a corpus frame and mutate it.
     *
     * @return the frame, its whole capacity ({@code offer(frame)} sends it); valid until the next call.
     */
    public DirectBuffer next() {
        int length = corpus.draw(random, frame);
        final byte[] bytes = frame.bytes;
        final int mutations = 1 + random.nextInt(MAX_MUTATIONS);
        for (int m = 0; m < mutations; m++) {
            switch (random.nextInt(MUTATION_KINDS)) {
                case 0:
                    final int bit = random.nextInt(length * Byte.SIZE);
                    bytes[bit >>> 3] ^= (byte)(1 << (bit & 7));
                    break;
                case 1:
                    bytes[random.nextInt(length)] = (byte)random.nextInt(256);
                    break;
                case 2:
                    length = Math.max(1, random.nextInt(length));
                    break;
                case 3:
                    final int extended = Math.min(maxFrameLength, length + 1 + random.nextInt(MAX_EXTENSION));
                    Arrays.fill(bytes, length, extended, (byte)0);
                    length = extended;
                    break;
                case 4:
                    if (length >= MessageHeaderFlyweight.HEADER_LENGTH) {
                        editField(header.wrap(frame.buffer, 0), random);
                    }
                    break;
                default:
                    final int donorLength = corpus.draw(random, donor);
                    final int bodyLength = Math.min(length, donorLength) - MessageHeaderFlyweight.HEADER_LENGTH;
                    if (bodyLength > 0) {
                        System.arraycopy(donor.bytes, MessageHeaderFlyweight.HEADER_LENGTH, bytes, MessageHeaderFlyweight.HEADER_LENGTH,
                            bodyLength);
                    }
                    break;
            }
        }
        view.wrap(bytes, 0, length);
        return view;
    }

    private static void editField(final MessageHeaderFlyweight header, final SplittableRandom random) {
        final int edge = random.nextInt(EDGES.length + 1);
        final long value = (edge == EDGES.length ? random.nextLong() : EDGES[edge]) + (random.nextBoolean() ? 0 : random.nextInt(3) - 1);
        switch (random.nextInt(HEADER_FIELDS)) {
            case 0:
                header.writeHeader((int)value, header.encoding());
                break;
            case 1:
                header.writeHeader(header.type(), (int)value);
                break;
            case 2:
                header.jobId((int)value);
                break;
            case 3:
                header.round(header.round() + (value & 7) - 3);
                break;
            case 4:
                header.chunkWordOffset((int)value);
                break;
            case 5:
                header.chunkWords((int)value);
                break;
            case 6:
                header.workerId((int)value);
                break;
            case 7:
                header.slice((int)value);
                break;
            default:
                header.count(value & MessageHeaderFlyweight.MAX_COUNT);
                break;
        }
    }

    /**
     * A valid vote chunk: the bytes a worker sends.
     *
     * @param jobId  of the job.
     * @param round  round number.
     * @param worker worker id.
     * @param slice  slice index.
     * @param layout the slice's chunk grid.
     * @param chunk  index in the grid.
     * @param vote   the worker's whole packed vote vector (word {@code i} = parameters {@code 64i..64i+63}).
     * @return header and {@code SIGN_BITS} body.
     */
    public static byte[] vote(final int jobId, final long round, final int worker, final int slice, final ChunkLayout layout, final int chunk,
        final long[] vote) {
        final int wordOffset = layout.wordOffset(chunk);
        final Scratch scratch = new Scratch(voteLength(layout, chunk));
        final int length = writeVote(scratch, new VoteChunkFlyweight(), jobId, round, worker, slice, layout, chunk,
            new long[][] {Arrays.copyOfRange(vote, wordOffset, wordOffset + layout.wordsOf(chunk))});
        return Arrays.copyOf(scratch.bytes, length);
    }

    /**
     * A HELLO without a result endpoint (results by IPC), with credentials when a secret is given.
     *
     * @param jobId         of the job.
     * @param round         the first round the worker votes in.
     * @param worker        worker id.
     * @param slice         slice index.
     * @param paramCount    of the worker's whole vector.
     * @param voteSessionId the Aeron session the HELLO is sent on.
     * @param secret        to sign with ({@link Encoding#HMAC_SHA256}), or null for no credentials ({@link Encoding#NONE}).
     * @param timestampMs   of the HELLO.
     * @param nonce         of the HELLO.
     * @return the frame.
     */
    public static byte[] hello(final int jobId, final long round, final int worker, final int slice, final long paramCount,
        final int voteSessionId, final byte[] secret, final long timestampMs, final long nonce) {
        return hello(jobId, round, worker, slice, paramCount, voteSessionId, null, 0, secret, timestampMs, nonce);
    }

    /**
     * A HELLO, with credentials when a secret is given.
     *
     * @param jobId         of the job.
     * @param round         the first round the worker votes in.
     * @param worker        worker id.
     * @param slice         slice index.
     * @param paramCount    of the worker's whole vector.
     * @param voteSessionId the Aeron session the HELLO is sent on.
     * @param resultAddress where results should go (4 or 16 bytes), or null for IPC.
     * @param resultPort    UDP port results should go to.
     * @param secret        to sign with ({@link Encoding#HMAC_SHA256}), or null for no credentials ({@link Encoding#NONE}).
     * @param timestampMs   of the HELLO.
     * @param nonce         of the HELLO.
     * @return the frame.
     */
    public static byte[] hello(final int jobId, final long round, final int worker, final int slice, final long paramCount,
        final int voteSessionId, final byte[] resultAddress, final int resultPort, final byte[] secret, final long timestampMs, final long nonce) {
        final Scratch scratch = new Scratch(HELLO_LENGTH);
        final int length = new HelloFlyweight().wrap(scratch.buffer, 0).encode(jobId, round, 0, worker, slice, paramCount, voteSessionId,
            resultAddress, resultPort, secret == null ? null : new HelloCredentials(secret), nonce, timestampMs);
        return Arrays.copyOf(scratch.bytes, length);
    }

    private static int voteLength(final ChunkLayout layout, final int chunk) {
        return VoteChunkFlyweight.length(layout.paramsOf(layout.wordOffset(chunk), layout.wordsOf(chunk)));
    }

    /** @param signs one plane whose word 0 is the chunk's first word. */
    private static int writeVote(final Scratch dst, final VoteChunkFlyweight flyweight, final int jobId, final long round, final int worker,
        final int slice, final ChunkLayout layout, final int chunk, final long[][] signs) {
        final int wordOffset = layout.wordOffset(chunk);
        final int words = layout.wordsOf(chunk);
        // the packed layout is per word, so the chunk alone, as a vector of chunkParams, encodes to the same bytes
        return flyweight.wrap(dst.buffer, 0).encode(jobId, round, wordOffset, words, worker, slice, signs, layout.paramsOf(wordOffset, words), 0);
    }

    /** A corpus HELLO: naming the sender's session, asking for results at a loopback port nobody listens on. */
    private static int writeHello(final Scratch dst, final HelloFlyweight flyweight, final int jobId, final long round, final int worker,
        final int slice, final long paramCount, final int sessionId, final HelloCredentials credentials, final long timestampMs,
        final long nonce) {
        return flyweight.wrap(dst.buffer, 0).encode(jobId, round, 0, worker, slice, paramCount, sessionId, LOOPBACK, DISCARD_PORT, credentials,
            nonce, timestampMs);
    }

    /** A frame buffer: one array, seen through an {@link UnsafeBuffer} by the frame flyweights. */
    private static final class Scratch {
        final byte[] bytes;
        final UnsafeBuffer buffer;

        Scratch(final int capacity) {
            bytes = new byte[capacity];
            buffer = new UnsafeBuffer(bytes);
        }
    }

    /** Where frames to mutate come from. */
    private interface Corpus {
        /** Write a random corpus frame at offset 0 of {@code dst}; return its length. */
        int draw(SplittableRandom random, Scratch dst);
    }

    private static final class ListCorpus implements Corpus {
        private final List<byte[]> frames;

        ListCorpus(final List<byte[]> frames) {
            this.frames = frames;
        }

        @Override
        public int draw(final SplittableRandom random, final Scratch dst) {
            final byte[] bytes = frames.get(random.nextInt(frames.size()));
            System.arraycopy(bytes, 0, dst.bytes, 0, bytes.length);
            return bytes.length;
        }
    }

    private static final class JobCorpus implements Corpus {
        private final Context ctx;
        private final ChunkLayout layout;
        private final HelloCredentials wrongCredentials;
        private final int vectorWords;
        private final long lastWordMask;
        private final long[] chunkSigns;
        private final long[][] planes;
        private final VoteChunkFlyweight vote = new VoteChunkFlyweight();
        private final HelloFlyweight hello = new HelloFlyweight();

        JobCorpus(final Context ctx, final HelloCredentials wrongCredentials) {
            this.ctx = ctx;
            this.layout = ctx.layout;
            this.wrongCredentials = wrongCredentials;
            this.vectorWords = (int)((ctx.paramCount() + 63) >>> 6);
            this.lastWordMask = ChunkLayout.lastWordMask(ctx.paramCount());
            this.chunkSigns = new long[layout.chunkWords()];
            this.planes = new long[][] {chunkSigns};
        }

        @Override
        public int draw(final SplittableRandom random, final Scratch dst) {
            final int worker = random.nextInt(ctx.workers());
            final long round = random.nextLong(ctx.maxRound + 1);
            if (random.nextBoolean()) {
                final int chunk = random.nextInt(layout.chunkCount());
                final int words = layout.wordsOf(chunk);
                for (int i = 0; i < words; i++) {
                    chunkSigns[i] = random.nextLong();
                }
                if (layout.wordOffset(chunk) + words == vectorWords) {
                    chunkSigns[words - 1] &= lastWordMask;
                }
                return writeVote(dst, vote, ctx.jobId(), round, worker, ctx.slice, layout, chunk, planes);
            }
            final long now = ctx.epochClock.time();
            switch (random.nextInt(3)) {
                case 0:
                    return writeHello(dst, hello, ctx.jobId(), round, worker, ctx.slice, ctx.paramCount(), ctx.senderSessionId, wrongCredentials, now,
                        random.nextLong());
                case 1:
                    return writeHello(dst, hello, ctx.jobId(), round, worker, ctx.slice, ctx.paramCount(), ctx.senderSessionId, null, 0, 0);
                default:
                    return writeHello(dst, hello, ctx.jobId(), round, worker, ctx.slice, ctx.paramCount(), ctx.senderSessionId, wrongCredentials,
                        now - ctx.staleMs,
                        random.nextLong());
            }
        }
    }

    /**
     * The job the garbage imitates: its shared settings ({@link JobContext}) and the garbage's own. Required:
     * {@link #jobId(int)}, {@link #workers(int)}, {@link #paramCount(long)}; the rest has defaults: slice 0 owning every
     * parameter, the chunk size of {@link Configuration#chunkWords()}, seed 0, frames up to
     * {@value #MAX_FRAME_LENGTH_DEFAULT} bytes. The job's rule and secret are not used: the corpus is the same for both
     * rules, and garbage never holds the job's secret.
     */
    public static final class Context extends JobContext<Context> {
        /** Longest frame by default: the max payload of a channel with {@code mtu=8k} (the MTU less Aeron's 32-byte header). */
        public static final int MAX_FRAME_LENGTH_DEFAULT = 8 * 1024 - 32;
        /** Highest round number of the corpus by default. */
        public static final long MAX_ROUND_DEFAULT = 10_000;
        /** Age of the stale HELLOs' timestamps by default: a day, far outside any sensible skew. */
        public static final long STALE_MS_DEFAULT = TimeUnit.DAYS.toMillis(1);

        private int slice;
        private long fromParam;
        private long toParam = -1;
        private long seed;
        private int maxFrameLength = MAX_FRAME_LENGTH_DEFAULT;
        private long maxRound = MAX_ROUND_DEFAULT;
        private long staleMs = STALE_MS_DEFAULT;
        private int senderSessionId;
        private EpochClock epochClock = SystemEpochClock.INSTANCE;
        private ChunkLayout layout;

        /**
         * Validate once and build the chunk grid.
         *
         * @return this for a fluent API.
         * @throws IllegalArgumentException naming the field that is wrong.
         */
        @Override
        public Context conclude() {
            super.conclude();
            if (slice < 0 || slice > 0xFF) {
                throw new IllegalArgumentException("slice must be in [0, 255], got " + slice);
            }
            if (maxRound < 0 || maxRound == Long.MAX_VALUE) {
                throw new IllegalArgumentException("maxRound must be in [0, 2^63 - 2], got " + maxRound);
            }
            if (staleMs <= 0) {
                throw new IllegalArgumentException("staleMs must be > 0, got " + staleMs);
            }
            Objects.requireNonNull(epochClock, "epochClock");
            layout = new ChunkLayout(paramCount(), fromParam, toParam < 0 ? paramCount() : toParam, chunkWords());
            final int longest = Math.max(HELLO_LENGTH, voteLength(layout, 0));
            if (maxFrameLength < longest) {
                throw new IllegalArgumentException("maxFrameLength must hold the longest corpus frame (" + longest + " bytes with chunkWords="
                    + chunkWords() + "), got " + maxFrameLength + ": use a channel with mtu=8k or fewer chunkWords");
            }
            return this;
        }

        /**
         * @param slice index of the server the garbage is sent to, 0 (default) to 255.
         * @return this for a fluent API.
         */
        public Context slice(final int slice) {
            this.slice = slice;
            return this;
        }

        public int slice() {
            return slice;
        }

        /**
         * @param fromParam first parameter of the server's slice, a multiple of 64 (default 0).
         * @param toParam   end (exclusive) of the slice (default: the parameter count).
         * @return this for a fluent API.
         */
        public Context paramRange(final long fromParam, final long toParam) {
            this.fromParam = fromParam;
            this.toParam = toParam;
            return this;
        }

        public long fromParam() {
            return fromParam;
        }

        public long toParam() {
            return toParam;
        }

        /**
         * @param seed of the corpus, the wrong secret and the mutations: the same seed and clock give the same frames.
         * @return this for a fluent API.
         */
        public Context seed(final long seed) {
            this.seed = seed;
            return this;
        }

        public long seed() {
            return seed;
        }

        /**
         * @param maxFrameLength longest frame sent: the sending publication's {@code maxPayloadLength()}, so that no frame is
         *                       fragmented.
         * @return this for a fluent API.
         */
        public Context maxFrameLength(final int maxFrameLength) {
            this.maxFrameLength = maxFrameLength;
            return this;
        }

        public int maxFrameLength() {
            return maxFrameLength;
        }

        /**
         * @param maxRound highest round number of the corpus's frames (they are spread over {@code [0, maxRound]}).
         * @return this for a fluent API.
         */
        public Context maxRound(final long maxRound) {
            this.maxRound = maxRound;
            return this;
        }

        public long maxRound() {
            return maxRound;
        }

        /**
         * @param senderSessionId the Aeron session the frames will be sent on: the corpus HELLOs name it, as a stranger's
         *                        own HELLO would (one naming another session is refused before anything else about it).
         * @return this for a fluent API.
         */
        public Context senderSessionId(final int senderSessionId) {
            this.senderSessionId = senderSessionId;
            return this;
        }

        public int senderSessionId() {
            return senderSessionId;
        }

        /**
         * @param staleMs how old the stale HELLOs' timestamps are.
         * @return this for a fluent API.
         */
        public Context staleMs(final long staleMs) {
            this.staleMs = staleMs;
            return this;
        }

        public long staleMs() {
            return staleMs;
        }

        /**
         * @param epochClock for the HELLOs' timestamps.
         * @return this for a fluent API.
         */
        public Context epochClock(final EpochClock epochClock) {
            this.epochClock = epochClock;
            return this;
        }

        public EpochClock epochClock() {
            return epochClock;
        }

        /** @return the server's chunk grid, built by {@link #conclude()}. */
        public ChunkLayout layout() {
            return layout;
        }
    }
}
