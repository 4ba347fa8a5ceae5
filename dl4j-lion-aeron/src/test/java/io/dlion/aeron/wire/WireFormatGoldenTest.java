package io.dlion.aeron.wire;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import io.dlion.codec.CountEncoding;
import io.dlion.codec.DownlinkEncoding;
import io.dlion.codec.SignEncoding;
import io.dlion.codec.TernaryEncoding;
import io.dlion.vote.VoteRule;
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
    void shouldWriteJoinHelloAndJoinNoticeAsGolden() {
        final byte[] hello = golden("hello-join-v1.hex");
        final UnsafeBuffer helloBuffer = new UnsafeBuffer(new byte[hello.length]);
        new MessageHeaderFlyweight().wrap(helloBuffer, 0)
            .writeHeader(MessageType.HELLO, Encoding.NONE)
            .jobId(77).round(MessageHeaderFlyweight.JOIN_ROUND).chunkWordOffset(0).chunkWords(0).workerId(2).shard(0).paramCount(10_000_000L);
        assertArrayEquals(hello, helloBuffer.byteArray());

        final byte[] notice = golden("join-notice-v1.hex");
        final UnsafeBuffer noticeBuffer = new UnsafeBuffer(new byte[notice.length]);
        new MessageHeaderFlyweight().wrap(noticeBuffer, 0)
            .writeHeader(MessageType.JOIN_NOTICE, Encoding.NONE)
            .jobId(77).round(300).chunkWordOffset(1000).chunkWords(0).workerId(0).shard(1).voterMask(0b100);
        assertArrayEquals(notice, noticeBuffer.byteArray());
        final MessageHeaderFlyweight read = new MessageHeaderFlyweight().wrap(new UnsafeBuffer(notice), 0);
        assertEquals(MessageType.JOIN_NOTICE, read.type());
        assertEquals(300, read.round());
        assertEquals(0, read.workerId());
        assertEquals(0b100, read.voterMask());
    }

    @Test
    void shouldWriteAndReadTernaryResultAsGolden() {
        final byte[] golden = golden("result-ternary-v1.hex");
        final long[] sign = {0x99L};
        final long[] tie = {0x4042L};
        final byte[] written = new byte[golden.length];
        final MessageHeaderFlyweight header = new MessageHeaderFlyweight().wrap(new UnsafeBuffer(written), 0)
            .writeHeader(MessageType.RESULT_CHUNK, Encoding.TERNARY)
            .jobId(77).round(6).chunkWordOffset(0).chunkWords(1).workerId(MessageHeaderFlyweight.SERVER_WORKER_ID).shard(0).voterMask(0b1111);
        final DownlinkEncoding encoding = DownlinkEncoding.of(VoteRule.MAJORITY, 4);
        assertEquals(TernaryEncoding.INSTANCE, encoding);
        assertEquals(2, encoding.encode(new long[][] {sign, tie}, 10, 0, 1, ByteBuffer.wrap(written), header.bodyOffset()));
        assertArrayEquals(golden, written);
        assertEquals(golden.length, MessageHeaderFlyweight.HEADER_LENGTH + Encoding.bodyLength(Encoding.TERNARY, 1, 10, 4));

        final long[][] read = new long[2][1];
        encoding.decode(ByteBuffer.wrap(golden), MessageHeaderFlyweight.HEADER_LENGTH, 10, 0, 1, read);
        assertEquals(sign[0], read[0][0], "sign: params 0, 3, 4, 7");
        assertEquals(tie[0], read[1][0], "tie: params 1, 6, 9");
    }

    @Test
    void shouldWriteAndReadCountResultAsGolden() {
        final byte[] golden = golden("result-count-v1.hex");
        final long[][] planes = {{0xA05AL}, {0x903CL}};
        final byte[] written = new byte[golden.length];
        final MessageHeaderFlyweight header = new MessageHeaderFlyweight().wrap(new UnsafeBuffer(written), 0)
            .writeHeader(MessageType.RESULT_CHUNK, Encoding.COUNT_PLANES)
            .jobId(77).round(7).chunkWordOffset(0).chunkWords(1).workerId(MessageHeaderFlyweight.SERVER_WORKER_ID).shard(0).voterMask(0b111);
        final DownlinkEncoding encoding = DownlinkEncoding.of(VoteRule.AVERAGE, 3);
        assertEquals(2, ((CountEncoding)encoding).planes());
        assertEquals(4, encoding.encode(planes, 12, 0, 1, ByteBuffer.wrap(written), header.bodyOffset()));
        assertArrayEquals(golden, written);
        assertEquals(golden.length, MessageHeaderFlyweight.HEADER_LENGTH + Encoding.bodyLength(Encoding.COUNT_PLANES, 1, 12, 3));

        final long[][] read = new long[2][1];
        encoding.decode(ByteBuffer.wrap(golden), MessageHeaderFlyweight.HEADER_LENGTH, 12, 0, 1, read);
        assertArrayEquals(planes[0], read[0]);
        assertArrayEquals(planes[1], read[1]);
    }

    @Test
    void shouldCutTheLastVoteChunkToItsBytes() {
        final byte[] golden = golden("vote-chunk-tail-v1.hex");
        final long[] vote = {0x0123456789ABCDEFL, 0x84L};
        final byte[] written = new byte[golden.length];
        final MessageHeaderFlyweight header = new MessageHeaderFlyweight().wrap(new UnsafeBuffer(written), 0)
            .writeHeader(MessageType.VOTE_CHUNK, Encoding.SIGN_BITS)
            .jobId(77).round(2).chunkWordOffset(0).chunkWords(2).workerId(1).shard(0).voterMask(0);
        assertEquals(9, SignEncoding.INSTANCE.encode(new long[][] {vote}, 70, 0, 2, ByteBuffer.wrap(written), header.bodyOffset()));
        assertArrayEquals(golden, written);
        assertEquals(golden.length, MessageHeaderFlyweight.HEADER_LENGTH + Encoding.bodyLength(Encoding.SIGN_BITS, 2, 70, 1));
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
