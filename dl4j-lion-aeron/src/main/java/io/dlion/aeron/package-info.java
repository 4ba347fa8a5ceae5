/**
 * Aeron transport of Distributed Lion, the worker's side and what a job shares:
 * {@link io.dlion.aeron.AeronVoteExchange} (the worker's {@link io.dlion.exchange.VoteExchange}),
 * {@link io.dlion.aeron.JobContext} (the settings every server and worker of a job agree on),
 * {@link io.dlion.aeron.Configuration} (property names and defaults), {@link io.dlion.aeron.AeronRuntime} (embedded or
 * standalone media driver), {@link io.dlion.aeron.LocalAeronJob} (a whole job in one JVM) and the worker's counters.
 * The server is in {@link io.dlion.aeron.server}, the frames in {@link io.dlion.aeron.wire}.
 */
package io.dlion.aeron;
