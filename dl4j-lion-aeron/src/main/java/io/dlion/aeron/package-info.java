/**
 * Aeron transport of Distributed Lion, what a job shares: {@link io.dlion.aeron.JobContext} (the settings every
 * server and worker of a job agree on), {@link io.dlion.aeron.Configuration} (property names and defaults),
 * {@link io.dlion.aeron.AeronRuntime} (embedded or standalone media driver), {@link io.dlion.aeron.Channels},
 * {@link io.dlion.aeron.LocalAeronJob} (a whole job in one JVM). The server is in {@link io.dlion.aeron.server}, the
 * worker client (the worker's {@link io.dlion.exchange.VoteExchange}) in {@link io.dlion.aeron.client}, the frames in
 * {@link io.dlion.aeron.wire}.
 */
package io.dlion.aeron;
