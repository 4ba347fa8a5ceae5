/**
 * Distributed Lion on Apache Spark: {@link io.dlion.spark.DLionSparkTrainer} trains a DL4J network from a
 * {@code JavaRDD<DataSet>}, one D-Lion worker per partition, in Spark's barrier execution mode; task 0 also runs the
 * aggregation server, every task votes over Aeron UDP, a task that lost a round rejoins inside the stage, a retried
 * stage resumes from the tasks' checkpoints.
 */
package io.dlion.spark;
