package io.dlion.spark;

import org.apache.spark.Partitioner;

/** Sends example i (the key) to the worker {@code owner[i]} of a {@link io.dlion.job.Partition}'s split. */
final class LabelPartitioner extends Partitioner {
    private static final long serialVersionUID = 1L;
    private final int[] owner;
    private final int workers;

    LabelPartitioner(final int[] owner, final int workers) {
        this.owner = owner;
        this.workers = workers;
    }

    @Override
    public int numPartitions() {
        return workers;
    }

    @Override
    public int getPartition(final Object key) {
        return owner[(int) (long) (Long) key];
    }

    @Override
    public boolean equals(final Object other) {
        return other == this;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(this);
    }
}
