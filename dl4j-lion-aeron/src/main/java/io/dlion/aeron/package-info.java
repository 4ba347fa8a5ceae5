/**
 * Aeron transport of Distributed Lion: {@link io.dlion.aeron.AggregationServer} (an Agrona agent per shard),
 * the worker client in {@link io.dlion.aeron.client} (the worker's {@link io.dlion.exchange.VoteExchange}),
 * {@link io.dlion.aeron.AeronRuntime} (embedded or standalone media driver) and their counters.
 */
package io.dlion.aeron;
