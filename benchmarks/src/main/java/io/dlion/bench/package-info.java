/**
 * Benchmarks of the optimizer step (Lion vs DL4J's Adam) and of the updater state.
 */
package io.dlion.bench;
