/**
 * The aggregation server of one shard of a job, one class per job:
 * <pre>
 *   votes --&gt; {@link io.dlion.aeron.server.AggregationServer}  the agent: its duty cycle polls, decides when to vote, publishes
 *               |-- {@link io.dlion.aeron.server.Membership}       HELLO, sessions, authentication, joins, laggards, drops
 *               |-- {@link io.dlion.aeron.server.HelloAnswers}     HELLO_ACKs owed; the workers' result destinations (manual MDC)
 *               |-- {@link io.dlion.aeron.server.VoteWindow}       the open round's votes, chunk by chunk; deadline and quorum
 *               '-- {@link io.dlion.aeron.server.ResultPublisher}  result chunks, HELLO_ACKs, JOIN_NOTICEs, ROUND_ABORTs
 *   results &lt;--------------------------------------'
 * </pre>
 * Membership admits, the window votes, the publisher sends; none of them calls another, the agent wires them. Its
 * {@link io.dlion.aeron.server.ServerCounters} are readable live with {@code AeronStat}. The protocol these classes
 * implement is described in {@code docs/protocol.md}.
 */
package io.dlion.aeron.server;
