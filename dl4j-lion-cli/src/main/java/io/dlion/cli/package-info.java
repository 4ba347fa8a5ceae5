/**
 * The {@code ./dlion} command line: demo, train, compare, worker; and the example models.
 */
package io.dlion.cli;
