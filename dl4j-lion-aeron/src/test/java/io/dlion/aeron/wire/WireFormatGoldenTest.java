package io.dlion.aeron.wire;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import io.dlion.codec.CountEncoding;
import io.dlion.codec.DownlinkEncoding;
import io.dlion.codec.SignEncoding;
import io.dlion.codec.TernaryEncoding;
import io.dlion.vote.VoteRule;
import io.dlion.vote.VoterSet;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The wire format against hand-written golden bytes: every frame is written by the flyweight the send path uses and
 * compared with its golden file, then read back by the flyweight the receive path uses. Any change of layout or version
 * fails here.
 */
class WireFormatGoldenTest {
    private static final byte[] SECRET = "dl4j-lion test secret, 32 bytes!".getBytes(StandardCharsets.US_ASCII);

    @Test
    void shouldWriteVoteChunkAsGolden() {
        final byte[] golden = golden("vote-chunk-v2.hex");
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[golden.length]);
        final long[] vote = new long[1002];
        vote[1000] = 0x0123456789ABCDEFL;
        vote[1001] = -1L;
        final int length = new VoteChunkFlyweight().wrap(buffer, 0).encode(77, 5, 1000, 2, 3, 1, new long[][] {vote}, 1002 * 64L, 1000);
        assertEquals(golden.length, length);
        assertEquals(VoteChunkFlyweight.length(128), length);
        assertArrayEquals(golden, buffer.byteArray());
    }

    @Test
    void shouldReadVoteChunkFromGolden() {
        final VoteChunkFlyweight vote = new VoteChunkFlyweight().wrapForRead(new UnsafeBuffer(golden("vote-chunk-v2.hex")), 0);
        final MessageHeaderFlyweight header = vote.header();
        assertEquals(MessageType.VOTE_CHUNK, header.type());
        assertEquals(Encoding.SIGN_BITS, header.encoding());
        assertEquals(77, header.jobId());
        assertEquals(5, header.round());
        assertEquals(1000, header.chunkWordOffset());
        assertEquals(2, header.chunkWords());
        assertEquals(3, header.workerId());
        assertEquals(1, header.slice());
        final long[][] signs = new long[1][2];
        vote.decodeSigns(128, signs);
        assertArrayEquals(new long[] {0x0123456789ABCDEFL, -1L}, signs[0]);
    }

    @Test
    void shouldWriteAndReadResultChunkAsGolden() {
        final byte[] golden = golden("result-chunk-v2.hex");
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[golden.length]);
        final long[] sign = {0x0100000000000080L};
        final int length = new ResultChunkFlyweight().wrap(buffer, 0).encode(Encoding.SIGN_BITS, 77, 5, 1000, 1, 1, VoterSet.all(3),
            SignEncoding.INSTANCE, new long[][] {sign}, 64, 0);
        assertEquals(golden.length, length);
        assertEquals(ResultChunkFlyweight.length(1, SignEncoding.INSTANCE, 64, 0, 1), length);
        assertArrayEquals(golden, buffer.byteArray());

        final ResultChunkFlyweight result = new ResultChunkFlyweight().wrapForRead(new UnsafeBuffer(golden), 0);
        final MessageHeaderFlyweight header = result.header();
        assertEquals(0xD1, header.magic());
        assertEquals(2, header.version());
        assertEquals(MessageType.RESULT_CHUNK, header.type());
        assertEquals(Encoding.SIGN_BITS, header.encoding());
        assertEquals(77, header.jobId());
        assertEquals(5, header.round());
        assertEquals(1000, header.chunkWordOffset());
        assertEquals(1, header.chunkWords());
        assertEquals(MessageHeaderFlyweight.SERVER_WORKER_ID, header.workerId());
        assertEquals(1, header.slice());
        final VoterSet voters = new VoterSet(3);
        assertTrue(result.readVoters(voters, golden.length));
        assertEquals(VoterSet.all(3), voters);
        assertFalse(result.readVoters(new VoterSet(65), golden.length), "a job of 65 workers has two-word voter sets");
        assertFalse(result.readVoters(new VoterSet(2), golden.length), "worker 2 is past a job of two");
        final long[][] read = new long[1][1];
        result.decode(SignEncoding.INSTANCE, 64, read);
        assertEquals(0x0100000000000080L, read[0][0], "param 0 (MSB of byte 0) and param 63 (LSB of byte 7) set");
    }

    @Test
    void shouldWriteAndReadHelloAsGolden() {
        final byte[] golden = golden("hello-v2.hex");
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[golden.length]);
        assertEquals(HelloFlyweight.LENGTH, new HelloFlyweight().wrap(buffer, 0).encode(77, 0, 0, 2, 0, 10_000_000L, 0x0A0B0C0D,
            new byte[] {10, 0, 0, 7}, 40125, null, 0x1122334455667788L, 1_700_000_000_000L));
        assertEquals(golden.length, HelloFlyweight.LENGTH);
        assertArrayEquals(golden, buffer.byteArray());

        final HelloFlyweight hello = new HelloFlyweight().wrapForRead(new UnsafeBuffer(golden), 0);
        assertEquals(MessageType.HELLO, hello.header().type());
        assertEquals(Encoding.NONE, hello.header().encoding());
        assertEquals(77, hello.header().jobId());
        assertEquals(0, hello.round());
        assertFalse(hello.isJoin());
        assertEquals(2, hello.header().workerId());
        assertEquals(0, hello.header().slice());
        assertEquals(10_000_000L, hello.paramCount());
        assertEquals(0x1122334455667788L, hello.nonce());
        assertEquals(1_700_000_000_000L, hello.timestampMs());
        assertEquals(0x0A0B0C0D, hello.voteSessionId());
        assertEquals(4, hello.resultAddressLength());
        final byte[] address = new byte[4];
        hello.resultAddress(address);
        assertArrayEquals(new byte[] {10, 0, 0, 7}, address);
        assertEquals(40125, hello.resultPort());
    }

    @Test
    void shouldWriteAndReadHelloAckAsGolden() {
        final byte[] golden = golden("hello-ack-v2.hex");
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[golden.length]);
        assertEquals(HelloAckFlyweight.LENGTH, new HelloAckFlyweight().wrap(buffer, 0).encode(77, 300, 1000, 0, 2, 1, 10_000_000L,
            0x1122334455667788L, 0x01020304, null));
        assertEquals(golden.length, HelloAckFlyweight.LENGTH);
        assertArrayEquals(golden, buffer.byteArray());

        final HelloAckFlyweight ack = new HelloAckFlyweight().wrapForRead(new UnsafeBuffer(golden), 0);
        assertEquals(MessageType.HELLO_ACK, ack.header().type());
        assertEquals(Encoding.NONE, ack.header().encoding());
        assertEquals(77, ack.header().jobId());
        assertEquals(300, ack.joinRound());
        assertEquals(0, ack.donor());
        assertEquals(2, ack.header().workerId());
        assertEquals(1, ack.header().slice());
        assertEquals(1000, ack.header().chunkWordOffset());
        assertEquals(10_000_000L, ack.header().paramCount());
        assertEquals(0x1122334455667788L, ack.nonce());
        assertEquals(0x01020304, ack.serverSessionId());
        assertEquals(-1, ack.servingRank(), "a server of no rank: the golden file's word after the session is 0");
    }

    /** The serving rank, in the word the golden answer has 0: rank + 1, little-endian, covered by the MAC. */
    @Test
    void shouldNameTheServingRankInTheWordAfterTheSession() {
        final byte[] golden = golden("hello-ack-v2.hex");
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[HelloAckFlyweight.SIGNED_LENGTH]);
        final HelloAckFlyweight ack = new HelloAckFlyweight().wrap(buffer, 0);
        ack.encode(77, 300, 1000, 0, 2, 1, 10_000_000L, 0x1122334455667788L, 0x01020304, 5, null);
        final byte[] expected = golden.clone();
        expected[44] = 6; // rank 5 + 1
        assertArrayEquals(expected, java.util.Arrays.copyOf(buffer.byteArray(), HelloAckFlyweight.LENGTH));
        assertEquals(5, new HelloAckFlyweight().wrapForRead(buffer, 0).servingRank());

        final HelloCredentials credentials = new HelloCredentials(SECRET);
        ack.encode(77, HelloAckFlyweight.NO_JOIN, 0, JoinNoticeFlyweight.NO_DONOR, 2, 0, 10_000_000L, 42L, 0x01020304, 3, credentials);
        assertTrue(ack.verify(credentials));
        buffer.putInt(HelloAckFlyweight.SERVING_RANK_OFFSET, 1, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertFalse(ack.verify(credentials), "the MAC covers the serving rank");
    }

    @Test
    void shouldSignHelloAckOverHeaderNonceAndServerSession() {
        final HelloCredentials credentials = new HelloCredentials(SECRET);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[HelloAckFlyweight.SIGNED_LENGTH]);
        final HelloAckFlyweight ack = new HelloAckFlyweight().wrap(buffer, 0);
        assertEquals(HelloAckFlyweight.SIGNED_LENGTH, ack.encode(77, HelloAckFlyweight.NO_JOIN, 0, JoinNoticeFlyweight.NO_DONOR, 2, 0,
            10_000_000L, 42L, 0x01020304, credentials));
        assertEquals(Encoding.HMAC_SHA256, ack.header().encoding());
        assertTrue(ack.verify(credentials));
        assertFalse(ack.verify(new HelloCredentials("another job's secret, 32 bytes!".getBytes(StandardCharsets.US_ASCII))));
        buffer.putInt(HelloAckFlyweight.SERVER_SESSION_OFFSET, 0x01020305, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertFalse(ack.verify(credentials), "the MAC covers the server's session");
        buffer.putInt(HelloAckFlyweight.SERVER_SESSION_OFFSET, 0x01020304, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertTrue(ack.verify(credentials));
        buffer.putLong(HelloAckFlyweight.NONCE_OFFSET, 43L, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertFalse(ack.verify(credentials), "the MAC covers the nonce");
    }

    @Test
    void shouldWriteJoinHelloAndJoinNoticeAsGolden() {
        final byte[] hello = golden("hello-join-v2.hex");
        final UnsafeBuffer helloBuffer = new UnsafeBuffer(new byte[hello.length]);
        final byte[] ipv6 = new byte[16];
        ipv6[0] = (byte)0xFD;
        ipv6[15] = 7;
        new HelloFlyweight().wrap(helloBuffer, 0).encode(77, HelloFlyweight.JOIN_ROUND, 0, 2, 0, 10_000_000L, 0x0A0B0C0D, ipv6, 40126, null,
            0x1122334455667788L, 1_700_000_000_000L);
        assertArrayEquals(hello, helloBuffer.byteArray());
        final HelloFlyweight readHello = new HelloFlyweight().wrapForRead(new UnsafeBuffer(hello), 0);
        assertTrue(readHello.isJoin());
        assertEquals(2, readHello.header().workerId());
        assertEquals(16, readHello.resultAddressLength());
        final byte[] address = new byte[16];
        readHello.resultAddress(address);
        assertArrayEquals(ipv6, address);
        assertEquals(40126, readHello.resultPort());

        final byte[] notice = golden("join-notice-v2.hex");
        final UnsafeBuffer noticeBuffer = new UnsafeBuffer(new byte[notice.length]);
        assertEquals(JoinNoticeFlyweight.LENGTH, new JoinNoticeFlyweight().wrap(noticeBuffer, 0).encode(77, 300, 1000, 0, 1, 2));
        assertArrayEquals(notice, noticeBuffer.byteArray());
        final JoinNoticeFlyweight read = new JoinNoticeFlyweight().wrapForRead(new UnsafeBuffer(notice), 0);
        assertEquals(MessageType.JOIN_NOTICE, read.header().type());
        assertEquals(300, read.firstRound());
        assertEquals(0, read.donor());
        assertEquals(2, read.joiningWorker());
        assertEquals(1, read.header().slice());
        assertEquals(1000, read.header().chunkWordOffset());
    }

    @Test
    void shouldWriteAndReadSignedHandOverBeginAsGolden() {
        final byte[] golden = golden("handover-begin-v2.hex");
        final byte[] digest = new byte[HandOverBeginFlyweight.DIGEST_LENGTH];
        for (int i = 0; i < digest.length; i++) {
            digest[i] = (byte)i;
        }
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[golden.length]);
        final int length = new HandOverBeginFlyweight().wrap(buffer, 0).encode(77, 300, 0, 0, 2, 0x0123456789ABCDEFL, 1_000_000L, digest,
            HandOverBeginFlyweight.mac(SECRET));
        assertEquals(HandOverBeginFlyweight.SIGNED_LENGTH, length);
        assertArrayEquals(golden, buffer.byteArray());

        final HandOverBeginFlyweight read = new HandOverBeginFlyweight().wrapForRead(new UnsafeBuffer(golden), 0);
        assertEquals(MessageType.HANDOVER_BEGIN, read.header().type());
        assertEquals(Encoding.HMAC_SHA256, read.header().encoding());
        assertTrue(read.hasValidLength(golden.length));
        assertEquals(77, read.header().jobId());
        assertEquals(300, read.firstRound());
        assertEquals(0, read.donor());
        assertEquals(2, read.joiningWorker());
        assertEquals(0x0123456789ABCDEFL, read.runId());
        assertEquals(1_000_000L, read.payloadLength());
        final byte[] readDigest = new byte[HandOverBeginFlyweight.DIGEST_LENGTH];
        read.digest(readDigest);
        assertArrayEquals(digest, readDigest);
        assertTrue(read.verify(HandOverBeginFlyweight.mac(SECRET)));
        assertFalse(read.verify(HandOverBeginFlyweight.mac("another secret of 32 bytes......".getBytes(StandardCharsets.US_ASCII))));
        read.header().buffer().putByte(HandOverBeginFlyweight.DIGEST_OFFSET, (byte)0x55);
        assertFalse(read.verify(HandOverBeginFlyweight.mac(SECRET)), "the MAC covers the digest");
    }

    @Test
    void shouldWriteHandOverBeginWithoutMacShorter() {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[HandOverBeginFlyweight.SIGNED_LENGTH]);
        final HandOverBeginFlyweight begin = new HandOverBeginFlyweight().wrap(buffer, 0);
        assertEquals(HandOverBeginFlyweight.LENGTH, begin.encode(77, 300, 0, 0, 2, 5, 10, new byte[32], null));
        assertEquals(Encoding.NONE, begin.header().encoding());
        assertTrue(begin.hasValidLength(HandOverBeginFlyweight.LENGTH));
        assertFalse(begin.hasValidLength(HandOverBeginFlyweight.SIGNED_LENGTH));
        assertFalse(begin.verify(HandOverBeginFlyweight.mac(SECRET)), "no MAC to verify");
    }

    @Test
    void shouldWriteAndReadHandOverChunkAsGolden() {
        final byte[] golden = golden("handover-chunk-v2.hex");
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[golden.length]);
        final byte[] piece = "xxdlion".getBytes(StandardCharsets.US_ASCII);
        assertEquals(golden.length, new HandOverChunkFlyweight().wrap(buffer, 0).encode(77, 300, 0, 0, 2, 8160, piece, 2, 5));
        assertArrayEquals(golden, buffer.byteArray());

        final HandOverChunkFlyweight read = new HandOverChunkFlyweight().wrapForRead(new UnsafeBuffer(golden), 0);
        assertEquals(MessageType.HANDOVER_CHUNK, read.header().type());
        assertEquals(300, read.firstRound());
        assertEquals(0, read.donor());
        assertEquals(2, read.joiningWorker());
        assertEquals(8160, read.payloadOffset());
        final byte[] data = new byte[golden.length - HandOverChunkFlyweight.DATA_OFFSET];
        read.header().buffer().getBytes(read.dataOffset(), data);
        assertEquals("dlion", new String(data, StandardCharsets.US_ASCII));
    }

    @Test
    void shouldWriteAndReadRoundAbortAsGolden() {
        final byte[] golden = golden("round-abort-v2.hex");
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[golden.length]);
        assertEquals(RoundAbortFlyweight.length(1), new RoundAbortFlyweight().wrap(buffer, 0).encode(77, 9, 1000, 1, VoterSet.of(3, 0, 1)));
        assertArrayEquals(golden, buffer.byteArray());
        final RoundAbortFlyweight read = new RoundAbortFlyweight().wrapForRead(new UnsafeBuffer(golden), 0);
        assertEquals(MessageType.ROUND_ABORT, read.header().type());
        assertEquals(9, read.round());
        final VoterSet voters = new VoterSet(3);
        assertTrue(read.readVoters(voters, golden.length));
        assertEquals(VoterSet.of(3, 0, 1), voters);
        assertEquals(MessageHeaderFlyweight.SERVER_WORKER_ID, read.header().workerId());
    }

    @Test
    void shouldSignHelloOverHeaderNonceTimestampSessionAndEndpoint() {
        final HelloCredentials credentials = new HelloCredentials(SECRET);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[HelloFlyweight.SIGNED_LENGTH]);
        final HelloFlyweight hello = new HelloFlyweight().wrap(buffer, 0);
        assertEquals(HelloFlyweight.SIGNED_LENGTH, hello.encode(77, 4, 1000, 2, 1, 10_000_000L, 0x0A0B0C0D, new byte[] {127, 0, 0, 1}, 40125,
            credentials, 0x1122334455667788L, 1_700_000_000_000L));
        assertEquals(Encoding.HMAC_SHA256, hello.header().encoding());
        assertEquals(0x1122334455667788L, hello.nonce());
        assertEquals(1_700_000_000_000L, hello.timestampMs());
        assertTrue(hello.verify(credentials));
        buffer.putShort(HelloFlyweight.RESULT_PORT_OFFSET, (short)40126, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertFalse(hello.verify(credentials), "the MAC covers the result endpoint");
        buffer.putShort(HelloFlyweight.RESULT_PORT_OFFSET, (short)40125, java.nio.ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(HelloFlyweight.VOTE_SESSION_OFFSET, 0x0A0B0C0E, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertFalse(hello.verify(credentials), "the MAC covers the vote session");
        buffer.putInt(HelloFlyweight.VOTE_SESSION_OFFSET, 0x0A0B0C0D, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertTrue(hello.verify(credentials));
        hello.header().round(5);
        assertFalse(hello.verify(credentials), "the MAC covers the header");
    }

    @Test
    void shouldWriteAndReadTernaryResultAsGolden() {
        final byte[] golden = golden("result-ternary-v2.hex");
        final long[] sign = {0x90L, 0x50L, 0x10L, 0x80L};
        final long[] tie = {0x20L, 0x80L, 0xA0L, 0x40L};
        final byte[] written = new byte[golden.length];
        final DownlinkEncoding encoding = DownlinkEncoding.of(VoteRule.MAJORITY, 4);
        assertEquals(TernaryEncoding.INSTANCE, encoding);
        final int length = new ResultChunkFlyweight().wrap(new UnsafeBuffer(written), 0).encode(Encoding.TERNARY, 77, 6, 0, 4, 0, VoterSet.all(4),
            encoding, new long[][] {sign, tie}, 200, 0);
        assertEquals(golden.length, length);
        assertArrayEquals(golden, written);
        assertEquals(golden.length, MessageHeaderFlyweight.headerLength(1) + Encoding.bodyLength(Encoding.TERNARY, 4, 200, 4));

        final long[][] read = new long[2][4];
        new ResultChunkFlyweight().wrapForRead(new UnsafeBuffer(golden), 0).decode(encoding, 200, read);
        assertArrayEquals(sign, read[0], "sign");
        assertArrayEquals(tie, read[1], "tie");
    }

    @Test
    void shouldWriteAndReadCountResultAsGolden() {
        final byte[] golden = golden("result-count-v2.hex");
        final long[][] planes = {{0xA05AL}, {0x903CL}};
        final byte[] written = new byte[golden.length];
        final DownlinkEncoding encoding = DownlinkEncoding.of(VoteRule.AVERAGE, 3);
        assertEquals(2, ((CountEncoding)encoding).planes());
        final int length = new ResultChunkFlyweight().wrap(new UnsafeBuffer(written), 0).encode(Encoding.COUNT_PLANES, 77, 7, 0, 1, 0, VoterSet.all(3),
            encoding, planes, 12, 0);
        assertEquals(golden.length, length);
        assertArrayEquals(golden, written);
        assertEquals(golden.length, MessageHeaderFlyweight.headerLength(1) + Encoding.bodyLength(Encoding.COUNT_PLANES, 1, 12, 3));

        final long[][] read = new long[2][1];
        new ResultChunkFlyweight().wrapForRead(new UnsafeBuffer(golden), 0).decode(encoding, 12, read);
        assertArrayEquals(planes[0], read[0]);
        assertArrayEquals(planes[1], read[1]);
    }

    @Test
    void shouldCutTheLastVoteChunkToItsBytes() {
        final byte[] golden = golden("vote-chunk-tail-v2.hex");
        final long[] vote = {0x0123456789ABCDEFL, 0x84L};
        final byte[] written = new byte[golden.length];
        final int length = new VoteChunkFlyweight().wrap(new UnsafeBuffer(written), 0).encode(77, 2, 0, 2, 1, 0, new long[][] {vote}, 70, 0);
        assertEquals(MessageHeaderFlyweight.HEADER_LENGTH + 9, length);
        assertArrayEquals(golden, written);
        assertEquals(golden.length, VoteChunkFlyweight.length(70));
        final long[][] read = new long[1][2];
        new VoteChunkFlyweight().wrapForRead(new UnsafeBuffer(golden), 0).decodeSigns(70, read);
        assertArrayEquals(vote, read[0]);
    }

    @Test
    void shouldKeepEveryVersionOneFrameAnotherVersion() {
        for (final String name : new String[] {"vote-chunk-v1.hex", "result-chunk-v1.hex", "hello-v1.hex", "hello-ack-v1.hex",
            "round-abort-v1.hex", "join-notice-v1.hex", "mean-chunk-v1.hex", "gradient-chunk-v1.hex", "handover-begin-v1.hex"}) {
            final MessageHeaderFlyweight header = new MessageHeaderFlyweight().wrapForRead(new UnsafeBuffer(golden(name)), 0);
            assertEquals(0xD1, header.magic(), name);
            assertEquals(1, header.version(), name);
            assertTrue(header.version() != MessageHeaderFlyweight.VERSION, name + ": refused as bad-version by every receiver");
        }
    }

    /**
     * At 1,024 workers a result frame carries a voter set of 16 words (128 bytes): with Aeron's header and ours, 192 bytes
     * of a full 8 KiB frame, 2.34%, for every encoding the server cuts a chunk into (an 8k MTU, the default chunk).
     */
    @Test
    void shouldKeepHeadersAndVoterSetUnderThreePercentOfAResultFrameAtOneThousandTwentyFourWorkers() {
        final int workers = 1024;
        final VoterSet voters = VoterSet.all(workers);
        final int maxPayload = 8192 - ChunkLayout.AERON_DATA_HEADER_LENGTH;
        final int headers = ChunkLayout.AERON_DATA_HEADER_LENGTH + MessageHeaderFlyweight.HEADER_LENGTH + 16 * Long.BYTES;
        assertEquals(192, headers);
        final int words = ChunkLayout.DEFAULT_CHUNK_WORDS;
        final long params = (long)words * 64;
        final long[][] planes = new long[11][words];
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[maxPayload]);
        final int[][] frames = {
            // encoding, words in the largest frame the server sends: signs (odd N), ternary (even N, 3-word groups), 11 count planes
            {Encoding.SIGN_BITS, words}, {Encoding.TERNARY, 600}, {Encoding.COUNT_PLANES, 90}};
        for (final int[] f : frames) {
            final DownlinkEncoding encoding = f[0] == Encoding.SIGN_BITS ? SignEncoding.INSTANCE
                : f[0] == Encoding.TERNARY ? TernaryEncoding.INSTANCE : new CountEncoding(workers);
            final int length = new ResultChunkFlyweight().wrap(buffer, 0).encode(f[0], 77, 1, 0, f[1], 0, voters, encoding, planes,
                params, 0);
            assertTrue(length <= maxPayload, "encoding " + f[0] + ": one frame of an 8k MTU, " + length + " bytes");
            final int onWire = length + ChunkLayout.AERON_DATA_HEADER_LENGTH;
            assertTrue(headers / (double)onWire <= 0.03, "encoding " + f[0] + ": headers " + headers + " of " + onWire);
        }
        assertEquals(0.0234375, headers / 8192.0, 1e-12, "signs: 192 of 8,192 bytes");
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
