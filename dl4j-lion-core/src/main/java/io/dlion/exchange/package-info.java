/**
 * A worker's end of the vote, independent of the transport: {@link io.dlion.exchange.VoteExchange}
 * (submit round r, await round r), the result {@link io.dlion.vote.RoundResult} with its packed bit
 * layout, byte counters, and {@link io.dlion.exchange.InProcessVoteHub} for N workers in one JVM.
 */
package io.dlion.exchange;
