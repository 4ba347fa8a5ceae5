/**
 * Short programs to read and copy: {@link io.dlion.examples.OneModelPerProcess} trains a user's own network as one
 * worker process of a D-Lion job over Aeron UDP, with the library's training job (rejoin with a donor's parameters);
 * {@link io.dlion.examples.SparkFashionMnist} trains one on a Spark cluster ({@code dl4j-lion-spark}).
 */
package io.dlion.examples;
