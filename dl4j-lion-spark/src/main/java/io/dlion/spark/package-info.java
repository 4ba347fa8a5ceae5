/**
 * Distributed Lion on Apache Spark: {@link io.dlion.spark.DLionSparkTrainer} trains a DL4J network from a
 * {@code JavaRDD<DataSet>}, one D-Lion worker per partition, in Spark's barrier execution mode. By default every task
 * also serves one slice of the parameters (the sharded topology; the slice of a task whose server died moves to the
 * next live task); with {@code topology(Topology.Kind.STAR)} task 0 runs the job's one aggregation server. Every task votes over
 * Aeron UDP, a task that lost a round rejoins inside the stage, a retried stage resumes from the tasks' checkpoints.
 */
package io.dlion.spark;
