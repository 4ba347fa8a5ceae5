package io.dlion.aeron.wire;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import io.dlion.vote.VoterSet;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The dense data-parallel frames against hand-written golden bytes: written by the encoders the send paths use
 * ({@code AeronMeanExchange}, {@code AggregationServer} with {@code Payload.FP32}), read back by the decoders the receive paths use.
 */
class DenseWireFormatGoldenTest {

    @Test
    void shouldWriteAndReadGradientChunkAsGolden() {
        final byte[] golden = golden("gradient-chunk-v2.hex");
        final float[] gradient = new float[131];
        gradient[128] = 1.0f;
        gradient[129] = -2.5f;
        gradient[130] = 0.1f;
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[golden.length]);
        final int length = new GradientChunkFlyweight().wrap(buffer, 0).encode(77, 5, 2, 1, 3, 0, gradient, 3);
        assertEquals(golden.length, length);
        assertEquals(GradientChunkFlyweight.length(3), length);
        assertArrayEquals(golden, buffer.byteArray());

        final GradientChunkFlyweight read = new GradientChunkFlyweight().wrapForRead(new UnsafeBuffer(golden), 0);
        final MessageHeaderFlyweight header = read.header();
        assertEquals(MessageType.GRADIENT_CHUNK, header.type());
        assertEquals(Encoding.FP32, header.encoding());
        assertEquals(77, header.jobId());
        assertEquals(5, header.round());
        assertEquals(2, header.chunkWordOffset());
        assertEquals(1, header.chunkWords());
        assertEquals(3, header.workerId());
        assertEquals(0, header.slice());
        final float[] values = new float[5];
        read.decode(3, values, 1);
        assertArrayEquals(new float[] {0, 1.0f, -2.5f, 0.1f, 0}, values);
    }

    @Test
    void shouldWriteAndReadMeanChunkAsGolden() {
        final byte[] golden = golden("mean-chunk-v2.hex");
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[golden.length]);
        final int length = new MeanChunkFlyweight().wrap(buffer, 0).encode(77, 5, 2, 1, 0, VoterSet.all(3), new float[] {0.5f, -1.0f, 3.0f, 9f}, 3);
        assertEquals(golden.length, length);
        assertEquals(MessageHeaderFlyweight.HEADER_LENGTH + Long.BYTES + Encoding.bodyLength(Encoding.FP32, 1, 3, 3), length);
        assertArrayEquals(golden, buffer.byteArray());

        final MeanChunkFlyweight read = new MeanChunkFlyweight().wrapForRead(new UnsafeBuffer(golden), 0);
        assertEquals(MessageType.MEAN_CHUNK, read.header().type());
        assertEquals(Encoding.FP32, read.header().encoding());
        assertEquals(MessageHeaderFlyweight.SERVER_WORKER_ID, read.header().workerId());
        final VoterSet voters = new VoterSet(3);
        assertTrue(read.readVoters(voters, golden.length));
        assertEquals(VoterSet.all(3), voters);
        final float[] values = new float[131];
        read.decode(3, values, 128);
        assertArrayEquals(new float[] {0.5f, -1.0f, 3.0f}, java.util.Arrays.copyOfRange(values, 128, 131));
    }

    @Test
    void shouldFitOneDenseChunkInAnEightKilobyteFrame() {
        final int full = GradientChunkFlyweight.length((long) GradientChunkFlyweight.CHUNK_WORDS * 64);
        assertEquals(32 + 1280 * 4, full);
        assertEquals(5184, ChunkLayout.frameLength(full - MessageHeaderFlyweight.HEADER_LENGTH), "on the wire with Aeron's header, padded");
    }

    private static byte[] golden(final String name) {
        try (InputStream in = DenseWireFormatGoldenTest.class.getResourceAsStream("/golden/" + name)) {
            final String text = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
            final StringBuilder hex = new StringBuilder();
            for (final String line : text.split("\n")) {
                if (!line.startsWith("#")) {
                    hex.append(line.replaceAll("\\s+", ""));
                }
            }
            final byte[] bytes = new byte[hex.length() / 2];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
            }
            return bytes;
        } catch (final IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
