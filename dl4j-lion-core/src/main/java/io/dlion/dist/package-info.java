/**
 * Distributed Lion as DL4J's gradient sharing: {@link io.dlion.dist.DLionAccumulator} (a
 * {@code GradientsAccumulator}), the entry points in {@link io.dlion.dist.DLion}, and
 * {@link io.dlion.dist.DLionListener} for DL4J's listener output, and
 * {@link io.dlion.dist.DLionCheckpoint} (resume a job, rejoin a worker with the job's parameters). Liu et al., arXiv 2404.00438, Algorithm 1.
 * Call order per step: updater (vote argument c) -> storeUpdate (pack, exchange, wait) -> applyUpdate.
 */
package io.dlion.dist;
