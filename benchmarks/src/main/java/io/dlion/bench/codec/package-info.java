/**
 * Benchmarks of the sign codec and the vote: packing and applying against a plain copy, majority vote and
 * averaging throughput, measured bits per parameter of each down-link encoding.
 */
package io.dlion.bench.codec;
