package io.dlion.aeron.wire;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The wire format against hand-written golden bytes: any change of layout or version fails here. */
class WireFormatGoldenTest {

    @Test
    void shouldWriteVoteChunkAsGolden() {
        final byte[] golden = golden("vote-chunk-v1.hex");
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[golden.length]);
        final MessageHeaderFlyweight header = new MessageHeaderFlyweight().wrap(buffer, 0)
            .writeHeader(MessageType.VOTE_CHUNK, Encoding.SIGN_BITS)
            .jobId(77).round(5).chunkWordOffset(1000).chunkWords(2).workerId(3).shard(1).voterMask(0);
        buffer.putLong(header.bodyOffset(), 0x0123456789ABCDEFL, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(header.bodyOffset() + 8, -1L, ByteOrder.LITTLE_ENDIAN);
        assertArrayEquals(golden, buffer.byteArray());
    }

    @Test
    void shouldReadResultChunkFromGolden() {
        final byte[] golden = golden("result-chunk-v1.hex");
        final MessageHeaderFlyweight header = new MessageHeaderFlyweight().wrap(new UnsafeBuffer(golden), 0);
        assertEquals(0xD1, header.magic());
        assertEquals(1, header.version());
        assertEquals(MessageType.RESULT_CHUNK, header.type());
        assertEquals(Encoding.SIGN_BITS, header.encoding());
        assertEquals(77, header.jobId());
        assertEquals(5, header.round());
        assertEquals(1000, header.chunkWordOffset());
        assertEquals(1, header.chunkWords());
        assertEquals(MessageHeaderFlyweight.SERVER_WORKER_ID, header.workerId());
        assertEquals(1, header.shard());
        assertEquals(0b111, header.voterMask());
        final long word = header.buffer().getLong(header.bodyOffset(), ByteOrder.LITTLE_ENDIAN);
        assertEquals(0x0100000000000080L, word, "param 0 (MSB of byte 0) and param 63 (LSB of byte 7) set");
        assertEquals(golden.length, MessageHeaderFlyweight.HEADER_LENGTH + Encoding.bodyLength(Encoding.SIGN_BITS, 1, 64, 3));
    }

    @Test
    void shouldWriteHelloAsGolden() {
        final byte[] golden = golden("hello-v1.hex");
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[golden.length]);
        new MessageHeaderFlyweight().wrap(buffer, 0)
            .writeHeader(MessageType.HELLO, Encoding.NONE)
            .jobId(77).round(0).chunkWordOffset(0).chunkWords(0).workerId(2).shard(0).paramCount(10_000_000L);
        assertArrayEquals(golden, buffer.byteArray());
    }

    @Test
    void shouldKeepHeadersUnderOnePercentOfDefaultChunk() {
        final int body = ChunkLayout.DEFAULT_CHUNK_WORDS * Long.BYTES;
        final int frame = ChunkLayout.frameLength(body);
        assertEquals(8064, frame);
        assertEquals(ChunkLayout.DEFAULT_CHUNK_WORDS, ChunkLayout.chunkWordsFor(8192 - 32));
        assertEquals(0.008, (frame - body) / (double)body, 1e-12);
    }

    private static byte[] golden(final String name) {
        try (InputStream in = WireFormatGoldenTest.class.getResourceAsStream("/golden/" + name)) {
            final String text = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
            final StringBuilder hex = new StringBuilder();
            for (final String line : text.split("\n")) {
                if (!line.startsWith("#")) {
                    hex.append(line.replaceAll("\\s+", ""));
                }
            }
            final byte[] bytes = new byte[hex.length() / 2];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = (byte)Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
            }
            return bytes;
        } catch (final IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
