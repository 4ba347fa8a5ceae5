/**
 * Round time of the Aeron transport against raw Aeron throughput of the same bytes, and wire bytes per parameter.
 */
package io.dlion.bench.aeron;
