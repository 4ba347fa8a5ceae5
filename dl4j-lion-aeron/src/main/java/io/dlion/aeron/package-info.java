/**
 * Aeron transport of Distributed Lion: {@link io.dlion.aeron.AggregationServer} (an Agrona agent per shard),
 * {@link io.dlion.aeron.AeronVoteExchange} (the worker's {@link io.dlion.exchange.VoteExchange}),
 * {@link io.dlion.aeron.AeronRuntime} (embedded or standalone media driver) and their counters.
 */
package io.dlion.aeron;
