/**
 * Dense data-parallel training over a {@link io.dlion.exchange.MeanExchange}, the baseline Distributed Lion is
 * measured against (the paper's G-Lion and G-AdamW): every worker sends its fp32 gradient, receives the mean of all
 * of them, and applies its own updater (Lion, AdamW, any DL4J updater) to the mean, so parameters stay
 * bit-identical on every worker. {@link io.dlion.dense.DenseWorker} binds a model to an exchange.
 */
package io.dlion.dense;
