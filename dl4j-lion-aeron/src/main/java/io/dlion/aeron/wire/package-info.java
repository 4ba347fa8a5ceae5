/**
 * Versioned binary wire format, one flyweight per frame type, used by every sender, every receiver, the fault tools
 * and the golden-file tests:
 * <ul>
 *   <li>{@link io.dlion.aeron.wire.MessageHeaderFlyweight}: the 32-byte header every message starts with;</li>
 *   <li>{@link io.dlion.aeron.wire.HelloFlyweight} (HELLO and join HELLO, with {@link io.dlion.aeron.wire.HelloCredentials}),
 *       {@link io.dlion.aeron.wire.VoteChunkFlyweight}, and for the dense baseline
 *       {@link io.dlion.aeron.wire.GradientChunkFlyweight}: worker to server;</li>
 *   <li>{@link io.dlion.aeron.wire.ResultChunkFlyweight}, {@link io.dlion.aeron.wire.JoinNoticeFlyweight},
 *       {@link io.dlion.aeron.wire.RoundAbortFlyweight}, {@link io.dlion.aeron.wire.HelloAckFlyweight} (the answer to a
 *       HELLO, signed with {@link io.dlion.aeron.wire.HelloCredentials}), and for the dense baseline
 *       {@link io.dlion.aeron.wire.MeanChunkFlyweight}: server to workers;</li>
 *   <li>{@link io.dlion.aeron.wire.HandOverBeginFlyweight} and {@link io.dlion.aeron.wire.HandOverChunkFlyweight}: a
 *       donor's state for a joining worker, relayed by slice 0's server;</li>
 *   <li>{@link io.dlion.aeron.wire.Hmac} (HMAC-SHA256 of the job's secret, the one construction behind the credentials,
 *       the frame tags and the hand-over) and {@link io.dlion.aeron.wire.FrameMac} (the per-frame tags of
 *       {@code frameMac});</li>
 *   <li>{@link io.dlion.aeron.wire.MessageType}, {@link io.dlion.aeron.wire.Encoding} (body encodings, core's codecs),
 *       {@link io.dlion.aeron.wire.ChunkLayout} (the chunk grid of a slice), {@link io.dlion.aeron.wire.WireBuffers} and
 *       {@link io.dlion.aeron.wire.LittleEndianView} (reused little-endian views of Aeron's buffers).</li>
 * </ul>
 */
package io.dlion.aeron.wire;
