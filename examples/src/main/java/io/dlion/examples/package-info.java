/**
 * Short programs to read and copy: {@link io.dlion.examples.OneModelPerProcess} trains a user's own network as one
 * worker process of a D-Lion job over Aeron UDP, with the library's training job (rejoin with a donor's parameters);
 * {@link io.dlion.examples.NetworkRejoin} does so with the hand-over through the server;
 * {@link io.dlion.examples.ShardedJob} is a sharded job of worker processes, each serving a slice, that survives a dead
 * rank (its slice moves, the rank rejoins), from the library alone; {@link io.dlion.examples.SparkFashionMnist} trains
 * one on a Spark cluster ({@code dl4j-lion-spark}).
 */
package io.dlion.examples;
