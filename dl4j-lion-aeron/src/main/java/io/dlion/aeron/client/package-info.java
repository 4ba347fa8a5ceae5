/**
 * The worker client: a worker's end of the exchange over Aeron, one client for both payloads (sign votes and fp32
 * gradients), one job per class.
 * <ul>
 *   <li>{@link io.dlion.aeron.client.AeronVoteExchange}: the {@link io.dlion.exchange.VoteExchange} a D-Lion worker
 *       holds. It checks the call order ({@code submit -> await}, {@code awaitJoin}, {@code pollIdle}) and adds what only
 *       the vote has: joining, rejoin, slice failover and side work.</li>
 *   <li>{@link io.dlion.aeron.client.AeronMeanExchange}: the {@link io.dlion.exchange.MeanExchange} a dense worker
 *       holds: the same rounds over the same links, with a mean vector for the result.</li>
 *   <li>{@link io.dlion.aeron.client.ExchangeContext}: the settings both exchanges' contexts share.</li>
 *   <li>{@code RoundLoop}: the rounds, one loop for both payloads: the slices' links, the session and the counters, from
 *       connect through every round's {@code submit -> await}; a server's abort or rejoin demand becomes
 *       {@link io.dlion.aeron.client.QuorumLostException} or {@link io.dlion.aeron.client.RejoinRequiredException}.</li>
 *   <li>{@code RoundPayload}: what differs between the payloads over the whole vector: {@code VotePayload} (the vote
 *       words, the {@code ResultAssembly}, each slice's part given as it completes) and {@code MeanPayload} (the gradient
 *       and the mean).</li>
 *   <li>{@code SliceLink}, one per slice, whatever the payload: the publication and result subscription of that
 *       slice's server, the frames sent (HELLO, chunks) and received (result chunks, ROUND_ABORT, JOIN_NOTICE) and their
 *       checks, and the slice's send and receive cursors.</li>
 *   <li>{@code ServerProof}, one per link: which server session the link believes, proven by a HELLO_ACK; the HELLO
 *       schedule, unproven and forged images refused, the server's silence, a new session (a restarted or moved server:
 *       the round is sent again).</li>
 *   <li>{@code SliceCodec}: what differs between the payloads on a slice's link: {@code VoteSliceCodec} (vote chunks
 *       up, result chunks into the {@code ResultAssembly}) and {@code MeanSliceCodec} (gradient chunks up, mean chunks
 *       into the mean).</li>
 *   <li>{@code WorkerSession}: the session with the job across slices: the round cursor, joining, the servers' join
 *       notices (own first round and donor, a demand to rejoin, other workers joining) and the HELLO credentials.</li>
 *   <li>{@code ResultAssembly}: the result buffers, allocated once, the slices' result chunks are decoded into, and
 *       the round's {@link io.dlion.vote.RoundResult} made of them. A round in steady state allocates nothing that
 *       grows with the parameter count; a result's arrays are overwritten by the next round (valid until the next
 *       {@code submit}).</li>
 *   <li>{@code ResultEndpoint}: the address and port a link's result subscription resolved to, which its HELLO
 *       carries.</li>
 *   <li>{@code io.dlion.aeron.wire.LittleEndianView}: little-endian views of each Aeron term buffer for the codecs
 *       ({@link io.dlion.codec.WordViews}), made once instead of once per chunk.</li>
 *   <li>{@link io.dlion.aeron.client.WorkerCounters}: the worker's Aeron counters, readable with {@code AeronStat}.</li>
 * </ul>
 * The hand-over over Aeron is {@link io.dlion.aeron.client.AeronHandOver}, split by role into {@code HandOverDonor}
 * and {@code HandOverJoiner}.
 */
package io.dlion.aeron.client;
