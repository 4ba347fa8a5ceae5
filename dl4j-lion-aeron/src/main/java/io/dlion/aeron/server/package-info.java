/**
 * The aggregation server of one slice of a job, one engine for sign votes and for fp32 gradients:
 * <pre>
 *   votes --&gt; {@link io.dlion.aeron.server.AggregationServer}  the agent: its duty cycle polls, decides when to vote, publishes
 *               |-- {@link io.dlion.aeron.server.Membership}       HELLO, sessions, authentication, joins, laggards, drops
 *               |-- {@link io.dlion.aeron.server.HelloAnswers}     HELLO_ACKs owed; the workers' result destinations (manual MDC)
 *               |-- {@link io.dlion.aeron.server.ChunkWindow}      the open round's chunks, slot by slot; deadline and quorum
 *               |     '-- {@link io.dlion.aeron.server.Aggregation} the payload: {@link io.dlion.aeron.server.VoteAggregation} (vote)
 *               |                                                   or {@link io.dlion.aeron.server.MeanAggregation} (fp32 mean)
 *               '-- {@link io.dlion.aeron.server.ResultPublisher}  result chunks, HELLO_ACKs, JOIN_NOTICEs, ROUND_ABORTs
 *   results &lt;--------------------------------------'
 * </pre>
 * Membership admits, the window aggregates, the publisher sends; none of them calls another, the agent wires them. Its
 * {@link io.dlion.aeron.server.ServerCounters} are readable live with {@code AeronStat}. The protocol these classes
 * implement is described in {@code docs/protocol.md}.
 */
package io.dlion.aeron.server;
