/**
 * The Lion optimizer for DL4J: {@link io.dlion.Lion} (the {@code IUpdater} a configuration names) and
 * {@link io.dlion.LionUpdater} (the step, composed of in-place ND4J ops). Chen et al., arXiv 2302.06675.
 */
package io.dlion;
