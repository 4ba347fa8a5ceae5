/** Command-line entry points (picocli): server, standalone driver, synthetic vote worker. */
package io.dlion.aeron.cli;
