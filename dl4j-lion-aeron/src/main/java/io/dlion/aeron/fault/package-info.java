/**
 * Fault injection for real runs: {@link io.dlion.aeron.fault.GarbageFrames}, seeded garbage that looks like a job's
 * traffic, whose every frame a server with a secret rejects under
 * {@link io.dlion.aeron.fault.GarbageFrames#GARBAGE_REASONS} (sent by {@code io.dlion.aeron.cli.GarbageMain}). Its frames
 * are written by the same {@link io.dlion.aeron.wire} flyweights as the workers', then mutated.
 */
package io.dlion.aeron.fault;
