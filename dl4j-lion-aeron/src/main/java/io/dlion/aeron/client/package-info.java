/**
 * The worker client: a worker's end of the exchange over Aeron, one client for both payloads (sign votes and fp32
 * gradients), one job per class.
 * <ul>
 *   <li>{@link io.dlion.aeron.client.AeronVoteExchange}: the {@link io.dlion.exchange.VoteExchange} a D-Lion worker
 *       holds. It runs the rounds ({@code submit -> await}, {@code awaitJoin}, {@code pollIdle}): checks the call order,
 *       drives the shards until the deadline and turns a server's abort or rejoin demand into
 *       {@link io.dlion.aeron.client.QuorumLostException} or {@link io.dlion.aeron.client.RejoinRequiredException}.</li>
 *   <li>{@link io.dlion.aeron.client.AeronMeanExchange}: the {@link io.dlion.exchange.MeanExchange} a dense worker
 *       holds: the same rounds over the same per-shard links, with a mean vector for the result.</li>
 *   <li>{@link io.dlion.aeron.client.ExchangeContext}: the settings both exchanges' contexts share.</li>
 *   <li>{@code ShardState}, one per shard, whatever the payload: the publication and result subscription of that
 *       shard's server, the frames sent (HELLO, chunks) and received (result chunks, ROUND_ABORT, JOIN_NOTICE) and their
 *       checks, the shard's send and receive cursors, and which server session it reads (a new one means the server
 *       restarted: HELLO again, resend the round).</li>
 *   <li>{@code SliceCodec}: what differs between the payloads on a shard's link: {@code VoteSliceCodec} (vote chunks
 *       up, result chunks into the {@code ResultAssembly}) and {@code MeanSliceCodec} (gradient chunks up, mean chunks
 *       into the mean).</li>
 *   <li>{@code WorkerSession}: the session with the job across shards: the round cursor, joining, the servers' join
 *       notices (own first round and donor, a demand to rejoin, other workers joining) and the HELLO credentials.</li>
 *   <li>{@code ResultAssembly}: the result buffers, allocated once, the shards' result chunks are decoded into, and
 *       the round's {@link io.dlion.vote.RoundResult} made of them. A round in steady state allocates nothing that
 *       grows with the parameter count; a result's arrays are overwritten by the next round (valid until the next
 *       {@code submit}).</li>
 *   <li>{@code io.dlion.aeron.wire.LittleEndianView}: one little-endian view of each Aeron term buffer for the codecs, made once instead
 *       of once per chunk.</li>
 *   <li>{@link io.dlion.aeron.client.WorkerCounters}: the worker's Aeron counters, readable with {@code AeronStat}.</li>
 * </ul>
 */
package io.dlion.aeron.client;
