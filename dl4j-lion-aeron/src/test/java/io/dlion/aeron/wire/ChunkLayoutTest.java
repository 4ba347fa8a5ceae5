package io.dlion.aeron.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The chunk grid's arithmetic at the sizes of large models, against plain long arithmetic written here. */
class ChunkLayoutTest {

    @Test
    void shouldCountChunksOfAThreeBillionParameterVector() {
        final long params = 3_000_000_000L;
        final ChunkLayout layout = new ChunkLayout(params, 0, params, ChunkLayout.DEFAULT_CHUNK_WORDS);
        final long words = (params + 63) / 64;
        final long chunks = (words + 999) / 1000;
        assertEquals(words, layout.words());
        assertEquals(chunks, layout.chunkCount());
        final int last = layout.chunkCount() - 1;
        assertEquals(words - 1000L * last, layout.wordsOf(last));
        assertEquals(1000L * last, layout.wordOffset(last));
        assertEquals(last, layout.chunkAt(layout.wordOffset(last)));
        assertEquals(params - 64L * layout.wordOffset(last), layout.paramsOf(layout.wordOffset(last), layout.wordsOf(last)));
    }

    @Test
    void shouldCountChunksWhereTheWordCountIsNearTwoToTheThirtyOne() {
        final long maxWords = Integer.MAX_VALUE;
        final long params = maxWords * 64;
        final int chunkWords = ChunkLayout.DEFAULT_CHUNK_WORDS;
        final ChunkLayout whole = new ChunkLayout(params, 0, params, chunkWords);
        assertEquals((maxWords + chunkWords - 1) / chunkWords, whole.chunkCount(), "word count + chunkWords overflows an int");
        assertEquals(maxWords - (long) chunkWords * (whole.chunkCount() - 1), whole.wordsOf(whole.chunkCount() - 1));

        final long from = (maxWords - 5000) * 64;
        final ChunkLayout lastSlice = new ChunkLayout(params, from, params, chunkWords);
        assertEquals(5, lastSlice.chunkCount());
        assertEquals(maxWords - 1000, lastSlice.wordOffset(4));
        assertEquals(4, lastSlice.chunkAt((int) (maxWords - 1000)));
    }

    @Test
    void shouldRefuseVectorsWhoseWordsDoNotFitTheHeader() {
        final long tooMany = (long) Integer.MAX_VALUE * 64 + 1;
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> new ChunkLayout(tooMany, 0, tooMany, ChunkLayout.DEFAULT_CHUNK_WORDS));
        assertEquals(true, e.getMessage().contains("paramCount"), e.getMessage());
    }
}
