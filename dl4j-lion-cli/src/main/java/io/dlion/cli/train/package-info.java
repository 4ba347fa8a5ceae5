/**
 * One training run end to end for every sharing scheme (none, D-Lion MaVo/Avg over any transport, DL4J
 * threshold sharing), with the metrics, plots and comparison table the command line writes.
 */
package io.dlion.cli.train;
