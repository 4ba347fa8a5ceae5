package io.dlion.aeron.wire;

import java.nio.ByteOrder;

import io.dlion.vote.VoterSet;
import io.dlion.vote.VoteAggregator;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Flyweight over the 32-byte header that starts every Distributed Lion message, version {@value #VERSION}.
 * All fields are little-endian. A frame that names the workers a result counts carries them as a voter set of
 * {@code k = ceil(N/64)} 64-bit words right after the header ({@link #VOTER_SET_OFFSET}, word i holding workers
 * {@code 64i .. 64i + 63}, worker w in bit {@code w & 63}, as {@link io.dlion.vote.VoterSet}); its body follows the set
 * ({@link #afterVoterSet()}). Every other body follows the header at {@link #HEADER_LENGTH}.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  |  Magic 0xD1   |  Version = 2  |     Type      |   Encoding    |  0
 *  +---------------+---------------+---------------+---------------+
 *  |                            Job Id                             |  4
 *  +---------------------------------------------------------------+
 *  |                         Round Number                          |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  Chunk Word Offset (global)                   | 16
 *  +-------------------------------+-------------------------------+
 *  |     Chunk Length in Words     |           Worker Id           | 20
 *  +-------------------------------+-------------------------------+
 *  |          Slice Index          |                               | 24
 *  +-------------------------------+        Count (48 bits)        |
 *  |                                                               | 28
 *  +---------------------------------------------------------------+
 *  |   Voter set: k words (RESULT_CHUNK, ROUND_ABORT, MEAN_CHUNK)  ... 32
 *  +---------------------------------------------------------------+
 *  |                          Body ...                            ... 32 + 8k
 *  +---------------------------------------------------------------+
 * </pre>
 * <ul>
 *   <li><b>Type</b>: {@link MessageType}.</li>
 *   <li><b>Encoding</b>: {@link Encoding} of the body.</li>
 *   <li><b>Job Id</b>: the job this message belongs to; messages of another job are rejected.</li>
 *   <li><b>Round Number</b>: the training round (0, 1, 2, ...); on a HELLO the round the worker votes in next, or
 *       {@link #JOIN_ROUND} from a worker that (re)joins a running job and must first be given its parameters.</li>
 *   <li><b>Chunk Word Offset</b>: index of the first 64-parameter word the body covers, counted from
 *       parameter 0 of the whole vector (not of the slice), so parameter {@code j} is covered when
 *       {@code offset <= j >>> 6 < offset + length}.</li>
 *   <li><b>Chunk Length in Words</b>: number of 64-parameter words covered (unsigned 16 bits).</li>
 *   <li><b>Worker Id</b> (unsigned 16 bits): sender of a VOTE_CHUNK or HELLO; {@link #SERVER_WORKER_ID} on a
 *       RESULT_CHUNK; the donor worker on a JOIN_NOTICE.</li>
 *   <li><b>Slice Index</b> (unsigned 16 bits): which server's parameter slice the chunk belongs to.</li>
 *   <li><b>Count</b> (unsigned 48 bits): on a HELLO and HELLO_ACK the worker's total parameter count; on a RESULT_CHUNK,
 *       ROUND_ABORT and MEAN_CHUNK the words {@code k} of the voter set that follows the header; on a JOIN_NOTICE
 *       and the hand-over frames the joining worker; zero on a VOTE_CHUNK.</li>
 * </ul>
 * Together with Aeron's 32-byte data frame header a vote chunk carries 64 bytes of headers; with the default
 * chunk of {@value io.dlion.aeron.wire.ChunkLayout#DEFAULT_CHUNK_WORDS} words (8000 bytes) that is 0.8%. A result
 * frame adds its voter set: 8 bytes for up to 64 workers, 128 bytes at 1,024 workers (headers and set 2.3% of a
 * default 8,192-byte result frame).
 */
public final class MessageHeaderFlyweight {
    /** First byte of every message. */
    public static final byte MAGIC = (byte)0xD1;
    /** Protocol version written by this code; any other version is rejected. */
    public static final byte VERSION = 2;
    /** Worker id used by the server on the messages it sends, and "no worker" (no donor). */
    public static final int SERVER_WORKER_ID = 0xFFFF;
    /** Most workers of a job the header can name: worker ids are in {@code [0, MAX_WORKERS)}. */
    public static final int MAX_WORKERS = VoteAggregator.MAX_VOTERS;
    /** Most slices of a job: slice indices are unsigned 16 bits. */
    public static final int MAX_SLICES = 0xFFFF;
    /** Round field of a HELLO from a worker that (re)joins a running job and waits to be told its first round. */
    public static final long JOIN_ROUND = -1L;
    /** Largest chunk length the header can state. */
    public static final int MAX_CHUNK_WORDS = 0xFFFF;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 1;
    public static final int TYPE_OFFSET = 2;
    public static final int ENCODING_OFFSET = 3;
    public static final int JOB_ID_OFFSET = 4;
    public static final int ROUND_OFFSET = 8;
    public static final int CHUNK_WORD_OFFSET_OFFSET = 16;
    public static final int CHUNK_WORDS_OFFSET = 20;
    public static final int WORKER_ID_OFFSET = 22;
    public static final int SLICE_OFFSET = 24;
    /** The 48-bit count: parameter count, voter-set words or the joining worker, by type. */
    public static final int COUNT_OFFSET = 26;
    public static final int PARAM_COUNT_OFFSET = COUNT_OFFSET;
    /** Length of the header; a voter set, or else the body, starts here. */
    public static final int HEADER_LENGTH = 32;
    /** Where a frame's voter set starts. */
    public static final int VOTER_SET_OFFSET = HEADER_LENGTH;
    /** Largest parameter count the 48-bit count field holds. */
    public static final long MAX_COUNT = (1L << 48) - 1;

    private static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    private MutableDirectBuffer buffer;
    private int offset;

    /**
     * Wrap a buffer for reading or writing.
     *
     * @param buffer to wrap.
     * @param offset at which the header starts.
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight wrap(final MutableDirectBuffer buffer, final int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /**
     * Wrap a read-only buffer, as handed to a fragment handler.
     *
     * @param buffer to wrap, must also be mutable (Aeron's term buffers are).
     * @param offset at which the header starts.
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight wrapForRead(final DirectBuffer buffer, final int offset) {
        return wrap((MutableDirectBuffer)buffer, offset);
    }

    /** @return the buffer wrapped. */
    public MutableDirectBuffer buffer() {
        return buffer;
    }

    /** @return the offset of the header in the buffer. */
    public int offset() {
        return offset;
    }

    /** @return offset of the body in the buffer. */
    public int bodyOffset() {
        return offset + HEADER_LENGTH;
    }

    /**
     * Write magic and version, type and encoding, leaving the other fields to their setters.
     *
     * @param type     {@link MessageType} code.
     * @param encoding {@link Encoding} code.
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight writeHeader(final int type, final int encoding) {
        buffer.putByte(offset + MAGIC_OFFSET, MAGIC);
        buffer.putByte(offset + VERSION_OFFSET, VERSION);
        buffer.putByte(offset + TYPE_OFFSET, (byte)type);
        buffer.putByte(offset + ENCODING_OFFSET, (byte)encoding);
        return this;
    }

    public int magic() {
        return buffer.getByte(offset + MAGIC_OFFSET) & 0xFF;
    }

    public int version() {
        return buffer.getByte(offset + VERSION_OFFSET) & 0xFF;
    }

    public int type() {
        return buffer.getByte(offset + TYPE_OFFSET) & 0xFF;
    }

    public int encoding() {
        return buffer.getByte(offset + ENCODING_OFFSET) & 0xFF;
    }

    public int jobId() {
        return buffer.getInt(offset + JOB_ID_OFFSET, ORDER);
    }

    /**
     * @param jobId of the job.
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight jobId(final int jobId) {
        buffer.putInt(offset + JOB_ID_OFFSET, jobId, ORDER);
        return this;
    }

    public long round() {
        return buffer.getLong(offset + ROUND_OFFSET, ORDER);
    }

    /**
     * @param round number.
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight round(final long round) {
        buffer.putLong(offset + ROUND_OFFSET, round, ORDER);
        return this;
    }

    public int chunkWordOffset() {
        return buffer.getInt(offset + CHUNK_WORD_OFFSET_OFFSET, ORDER);
    }

    /**
     * @param wordOffset first 64-parameter word covered by the body.
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight chunkWordOffset(final int wordOffset) {
        buffer.putInt(offset + CHUNK_WORD_OFFSET_OFFSET, wordOffset, ORDER);
        return this;
    }

    public int chunkWords() {
        return buffer.getShort(offset + CHUNK_WORDS_OFFSET, ORDER) & 0xFFFF;
    }

    /**
     * @param words number of 64-parameter words covered, at most {@link #MAX_CHUNK_WORDS}.
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight chunkWords(final int words) {
        buffer.putShort(offset + CHUNK_WORDS_OFFSET, (short)words, ORDER);
        return this;
    }

    public int workerId() {
        return buffer.getShort(offset + WORKER_ID_OFFSET, ORDER) & 0xFFFF;
    }

    /**
     * @param workerId sender, or {@link #SERVER_WORKER_ID}.
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight workerId(final int workerId) {
        buffer.putShort(offset + WORKER_ID_OFFSET, (short)workerId, ORDER);
        return this;
    }

    public int slice() {
        return buffer.getShort(offset + SLICE_OFFSET, ORDER) & 0xFFFF;
    }

    /**
     * @param slice index of the server's slice.
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight slice(final int slice) {
        buffer.putShort(offset + SLICE_OFFSET, (short)slice, ORDER);
        return this;
    }

    /** @return the 48-bit count field, unsigned. */
    public long count() {
        return (buffer.getShort(offset + COUNT_OFFSET, ORDER) & 0xFFFFL) | (buffer.getInt(offset + COUNT_OFFSET + 2, ORDER) & 0xFFFF_FFFFL) << 16;
    }

    /**
     * @param count parameter count, voter-set words or joining worker, in {@code [0, MAX_COUNT]}.
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight count(final long count) {
        buffer.putShort(offset + COUNT_OFFSET, (short)count, ORDER);
        buffer.putInt(offset + COUNT_OFFSET + 2, (int)(count >>> 16), ORDER);
        return this;
    }

    public long paramCount() {
        return count();
    }

    /**
     * @param paramCount of the worker's whole vector (HELLO, HELLO_ACK), at most {@link #MAX_COUNT}.
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight paramCount(final long paramCount) {
        return count(paramCount);
    }

    /** @return the joining worker a JOIN_NOTICE or hand-over frame names, or -1 when the field is out of the int range. */
    public int joiningWorker() {
        final long count = count();
        return count > Integer.MAX_VALUE ? -1 : (int)count;
    }

    /**
     * @param worker the joining worker (JOIN_NOTICE, HANDOVER_BEGIN, HANDOVER_CHUNK).
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight joiningWorker(final int worker) {
        return count(worker);
    }

    /** @return the words of the voter set after the header (RESULT_CHUNK, ROUND_ABORT, MEAN_CHUNK), -1 when absurd. */
    public int voterWords() {
        final long count = count();
        return count > VoterSet.wordsFor(MAX_WORKERS) ? -1 : (int)count;
    }

    /** @return offset in the buffer of what follows the header and its voter set. */
    public int afterVoterSet() {
        return offset + HEADER_LENGTH + Math.max(0, voterWords()) * Long.BYTES;
    }

    /**
     * Write a voter set after the header and its word count into the header.
     *
     * @param voters the set.
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight voterSet(final VoterSet voters) {
        final int words = voters.wordCount();
        count(words);
        for (int i = 0; i < words; i++) {
            buffer.putLong(offset + VOTER_SET_OFFSET + i * Long.BYTES, voters.word(i), ORDER);
        }
        return this;
    }

    /**
     * Read the voter set after the header, checked against the job's: it must have the set's words, name no worker past
     * its capacity, and fit the message.
     *
     * @param into          a set of the job's capacity, overwritten.
     * @param messageLength of the message.
     * @return true when the set was read, false (and {@code into} unspecified) when it is malformed.
     */
    public boolean readVoterSet(final VoterSet into, final int messageLength) {
        final int words = into.wordCount();
        if (count() != words || messageLength < HEADER_LENGTH + words * Long.BYTES) {
            return false;
        }
        for (int i = 0; i < words; i++) {
            final long word = buffer.getLong(offset + VOTER_SET_OFFSET + i * Long.BYTES, ORDER);
            if ((word & ~into.validBits(i)) != 0) {
                return false;
            }
            into.word(i, word);
        }
        return true;
    }

    /**
     * @param voterWords words of a voter set.
     * @return length of a header with a voter set of that many words.
     */
    public static int headerLength(final int voterWords) {
        return HEADER_LENGTH + voterWords * Long.BYTES;
    }

    @Override
    public String toString() {
        return "MessageHeader{type=" + MessageType.name(type()) + ", encoding=" + encoding() + ", job=" + jobId()
            + ", round=" + round() + ", word=" + chunkWordOffset() + ", words=" + chunkWords() + ", worker=" + workerId()
            + ", slice=" + slice() + ", count=" + count() + '}';
    }
}
