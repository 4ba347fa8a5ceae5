package io.dlion.aeron.wire;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Flyweight over the 32-byte header that starts every Distributed Lion message, version {@value #VERSION}.
 * All fields are little-endian. The message body follows the header at {@link #HEADER_LENGTH}.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  |  Magic 0xD1   |    Version    |     Type      |   Encoding    |  0
 *  +---------------+---------------+---------------+---------------+
 *  |                            Job Id                             |  4
 *  +---------------------------------------------------------------+
 *  |                         Round Number                          |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  Chunk Word Offset (global)                   | 16
 *  +-------------------------------+---------------+---------------+
 *  |     Chunk Length in Words     |   Worker Id   |  Shard Index  | 20
 *  +-------------------------------+---------------+---------------+
 *  |        Voter Mask (RESULT_CHUNK) / Param Count (HELLO)        | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                          Body ...                            ... 32
 *  +---------------------------------------------------------------+
 * </pre>
 * <ul>
 *   <li><b>Type</b>: {@link MessageType}.</li>
 *   <li><b>Encoding</b>: {@link Encoding} of the body.</li>
 *   <li><b>Job Id</b>: the job this message belongs to; messages of another job are rejected.</li>
 *   <li><b>Round Number</b>: the training round (0, 1, 2, ...); on a HELLO the round the worker votes in next, or
 *       {@link #JOIN_ROUND} from a worker that (re)joins a running job and must first be given its parameters.</li>
 *   <li><b>Chunk Word Offset</b>: index of the first 64-parameter word the body covers, counted from
 *       parameter 0 of the whole vector (not of the shard), so parameter {@code j} is covered when
 *       {@code offset <= j >>> 6 < offset + length}.</li>
 *   <li><b>Chunk Length in Words</b>: number of 64-parameter words covered (unsigned 16 bits).</li>
 *   <li><b>Worker Id</b>: sender of a VOTE_CHUNK or HELLO; {@link #SERVER_WORKER_ID} on a RESULT_CHUNK; the donor
 *       worker on a JOIN_NOTICE.</li>
 *   <li><b>Shard Index</b>: which server's parameter slice the chunk belongs to.</li>
 *   <li><b>Voter Mask</b>: on a RESULT_CHUNK, bit i set when worker i voted in this chunk; on a HELLO, the
 *       worker's total parameter count; on a JOIN_NOTICE the joining worker's bit; zero on a VOTE_CHUNK.</li>
 * </ul>
 * Together with Aeron's 32-byte data frame header a chunk carries 64 bytes of headers; with the default
 * chunk of {@value io.dlion.aeron.wire.ChunkLayout#DEFAULT_CHUNK_WORDS} words (8000 bytes) that is 0.8%.
 */
public final class MessageHeaderFlyweight {
    /** First byte of every message. */
    public static final byte MAGIC = (byte)0xD1;
    /** Protocol version written by this code; any other version is rejected. */
    public static final byte VERSION = 1;
    /** Worker id used by the server on the messages it sends. */
    public static final int SERVER_WORKER_ID = 0xFF;
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
    public static final int SHARD_OFFSET = 23;
    public static final int VOTER_MASK_OFFSET = 24;
    public static final int PARAM_COUNT_OFFSET = VOTER_MASK_OFFSET;
    /** Length of the header; the body starts here. */
    public static final int HEADER_LENGTH = 32;

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
        return buffer.getByte(offset + WORKER_ID_OFFSET) & 0xFF;
    }

    /**
     * @param workerId sender, or {@link #SERVER_WORKER_ID}.
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight workerId(final int workerId) {
        buffer.putByte(offset + WORKER_ID_OFFSET, (byte)workerId);
        return this;
    }

    public int shard() {
        return buffer.getByte(offset + SHARD_OFFSET) & 0xFF;
    }

    /**
     * @param shard index of the server's slice.
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight shard(final int shard) {
        buffer.putByte(offset + SHARD_OFFSET, (byte)shard);
        return this;
    }

    public long voterMask() {
        return buffer.getLong(offset + VOTER_MASK_OFFSET, ORDER);
    }

    /**
     * @param mask bit i set when worker i voted (RESULT_CHUNK), or zero.
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight voterMask(final long mask) {
        buffer.putLong(offset + VOTER_MASK_OFFSET, mask, ORDER);
        return this;
    }

    public long paramCount() {
        return buffer.getLong(offset + PARAM_COUNT_OFFSET, ORDER);
    }

    /**
     * @param paramCount of the worker's whole vector (HELLO).
     * @return this for a fluent API.
     */
    public MessageHeaderFlyweight paramCount(final long paramCount) {
        buffer.putLong(offset + PARAM_COUNT_OFFSET, paramCount, ORDER);
        return this;
    }

    @Override
    public String toString() {
        return "MessageHeader{type=" + MessageType.name(type()) + ", encoding=" + encoding() + ", job=" + jobId()
            + ", round=" + round() + ", word=" + chunkWordOffset() + ", words=" + chunkWords() + ", worker=" + workerId()
            + ", shard=" + shard() + ", mask/params=0x" + Long.toHexString(voterMask()) + '}';
    }
}
