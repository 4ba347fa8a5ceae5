/** Command-line entry points (picocli): server, standalone driver, synthetic vote worker, garbage sender for fault runs. */
package io.dlion.aeron.cli;
