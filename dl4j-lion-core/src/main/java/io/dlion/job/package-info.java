/**
 * The training-job API: {@link io.dlion.job.DLionJob} trains one worker's model over its shard with Distributed
 * Lion for a number of epochs and owns what a worker on a real cluster needs besides the vote: rejoining a running
 * job with a donor's parameters ({@link io.dlion.job.HandOver}, {@link io.dlion.job.DirectoryHandOver}), periodic
 * checkpoints and resuming from them.
 */
package io.dlion.job;
