package io.dlion.aeron.wire;

/**
 * The chunk grid of one slice: the parameters {@code [fromParam, toParam)} of a vector of
 * {@code paramCount} parameters is cut into chunks of {@code chunkWords} 64-parameter words (the last one
 * may be shorter). Workers and the server compute the same grid from the same four numbers, and one chunk
 * travels in one Aeron frame.
 * <pre>
 *  word:   fromWord            fromWord + c*chunkWords                      toWord
 *          |--chunk 0--|--chunk 1--| ... |--chunk c--| ... |--last (short)--|
 * </pre>
 * {@code chunkWords} is a multiple of {@value #WORD_ALIGNMENT}: of 4 so that a vote frame (64 bytes of headers
 * plus 8 bytes a word) needs no padding to Aeron's 32-byte frame alignment, and of 20 so that chunk sizes chosen for
 * earlier builds' 5-word ternary groups stay valid.
 */
public final class ChunkLayout {
    /** Chunk lengths are multiples of this many words. */
    public static final int WORD_ALIGNMENT = 20;
    /** Words per chunk for an 8 KiB MTU: 8000 bytes of votes in an 8064-byte frame. */
    public static final int DEFAULT_CHUNK_WORDS = 1000;
    /** Length of Aeron's data frame header, counted in every byte figure this project reports. */
    public static final int AERON_DATA_HEADER_LENGTH = 32;
    /** Aeron's frame alignment: frames are padded to it in the log and on the wire. */
    public static final int FRAME_ALIGNMENT = 32;

    private final long paramCount;
    private final long fromParam;
    private final long toParam;
    private final int fromWord;
    private final int toWord;
    private final int chunkWords;
    private final int chunkCount;

    /**
     * @param paramCount parameters in the whole vector.
     * @param fromParam  first parameter of the slice, a multiple of 64.
     * @param toParam    end of the slice (exclusive), a multiple of 64 or {@code paramCount}.
     * @param chunkWords words per chunk, a positive multiple of {@value #WORD_ALIGNMENT}.
     */
    public ChunkLayout(final long paramCount, final long fromParam, final long toParam, final int chunkWords) {
        if (paramCount < 1 || paramCount > (long)Integer.MAX_VALUE * Long.SIZE) {
            throw new IllegalArgumentException("paramCount must be in [1, (2^31 - 1) * 64], got " + paramCount);
        }
        if (fromParam < 0 || fromParam >= toParam || toParam > paramCount || (fromParam & 63) != 0) {
            throw new IllegalArgumentException("slice [fromParam, toParam) must be a non-empty word-aligned slice of [0, "
                + paramCount + "), got [" + fromParam + ", " + toParam + ")");
        }
        if ((toParam & 63) != 0 && toParam != paramCount) {
            throw new IllegalArgumentException("toParam must be a multiple of 64 or paramCount, got " + toParam);
        }
        if (chunkWords < WORD_ALIGNMENT || chunkWords % WORD_ALIGNMENT != 0 || chunkWords > MessageHeaderFlyweight.MAX_CHUNK_WORDS) {
            throw new IllegalArgumentException("chunkWords must be a positive multiple of " + WORD_ALIGNMENT + " up to "
                + MessageHeaderFlyweight.MAX_CHUNK_WORDS + ", got " + chunkWords);
        }
        this.paramCount = paramCount;
        this.fromParam = fromParam;
        this.toParam = toParam;
        this.fromWord = (int)(fromParam >>> 6);
        this.toWord = (int)((toParam + 63) >>> 6);
        this.chunkWords = chunkWords;
        this.chunkCount = (int)(((long)toWord - fromWord + chunkWords - 1) / chunkWords);
    }

    /**
     * The largest chunk whose vote frame fits a publication.
     *
     * @param maxPayloadLength of the publication ({@code mtu - 32}).
     * @return words per chunk, a multiple of {@value #WORD_ALIGNMENT}.
     */
    public static int chunkWordsFor(final int maxPayloadLength) {
        final int words = Math.min((maxPayloadLength - MessageHeaderFlyweight.HEADER_LENGTH) / Long.BYTES, MessageHeaderFlyweight.MAX_CHUNK_WORDS);
        final int aligned = words - words % WORD_ALIGNMENT;
        if (aligned < WORD_ALIGNMENT) {
            throw new IllegalArgumentException("maxPayloadLength " + maxPayloadLength + " cannot hold a chunk of " + WORD_ALIGNMENT + " words");
        }
        return aligned;
    }

    /**
     * @param bodyLength of a message.
     * @return bytes the message occupies on the wire: Aeron header + our header + body, padded to 32.
     */
    public static int frameLength(final int bodyLength) {
        final int length = AERON_DATA_HEADER_LENGTH + MessageHeaderFlyweight.HEADER_LENGTH + bodyLength;
        return (length + FRAME_ALIGNMENT - 1) & -FRAME_ALIGNMENT;
    }

    /**
     * @param paramCount parameters of a vector.
     * @return mask of the bits of the vector's last word that hold parameters, in the packed layout (parameter
     *     {@code j} at bit {@code 8 * ((j >>> 3) & 7) + 7 - (j & 7)}); -1 when the last word is full.
     */
    public static long lastWordMask(final long paramCount) {
        final int tail = (int)(paramCount & 63);
        if (tail == 0) {
            return -1L;
        }
        long mask = 0;
        for (int j = 0; j < tail; j++) {
            mask |= 1L << (((j >>> 3) << 3) + 7 - (j & 7));
        }
        return mask;
    }

    public long paramCount() {
        return paramCount;
    }

    public long fromParam() {
        return fromParam;
    }

    public long toParam() {
        return toParam;
    }

    public int fromWord() {
        return fromWord;
    }

    public int toWord() {
        return toWord;
    }

    /** @return words of the slice. */
    public int words() {
        return toWord - fromWord;
    }

    public int chunkWords() {
        return chunkWords;
    }

    public int chunkCount() {
        return chunkCount;
    }

    /**
     * @param chunk index in [0, chunkCount).
     * @return global word offset of the chunk.
     */
    public int wordOffset(final int chunk) {
        return fromWord + chunk * chunkWords;
    }

    /**
     * @param chunk index in [0, chunkCount).
     * @return words in the chunk.
     */
    public int wordsOf(final int chunk) {
        return Math.min(chunkWords, toWord - wordOffset(chunk));
    }

    /**
     * @param wordOffset global word offset of some words of this slice.
     * @param words      how many.
     * @return parameters the words cover (fewer than 64 per word only at the end of the vector).
     */
    public long paramsOf(final int wordOffset, final int words) {
        return Math.min((long)words << 6, toParam - ((long)wordOffset << 6));
    }

    /**
     * @param wordOffset global word offset from a header.
     * @return the chunk starting at that word, or -1 when no chunk of this slice starts there.
     */
    public int chunkAt(final int wordOffset) {
        final long rel = (long)wordOffset - fromWord;
        if (rel < 0 || wordOffset >= toWord || rel % chunkWords != 0) {
            return -1;
        }
        return (int)(rel / chunkWords);
    }

    @Override
    public String toString() {
        return "ChunkLayout{params=" + paramCount + ", slice=[" + fromParam + ", " + toParam + "), chunkWords=" + chunkWords
            + ", chunks=" + chunkCount + '}';
    }
}
