/**
 * A Vision Transformer for DL4J 1.0.0-M2.1, built from custom {@code SameDiffLayer}s inside a
 * {@code MultiLayerNetwork} so that it trains through DL4J's flat parameter and gradient views (updater blocks,
 * gradient accumulators, {@code ParallelWrapper}) like any other network.
 * <p>
 * {@link io.dlion.cli.vit.ViTConfig} holds the size ({@link io.dlion.cli.vit.ViTConfig#paper()}: the
 * CIFAR-10 model of the Distributed Lion paper, {@link io.dlion.cli.vit.ViTConfig#tinyFashionMnist()}: a small
 * one for Fashion-MNIST); {@link io.dlion.cli.vit.ViT#build(ViTConfig)} makes the network from
 * {@link io.dlion.cli.vit.PatchEmbedding}, {@link io.dlion.cli.vit.TransformerBlock}s,
 * {@link io.dlion.cli.vit.TokenPooling} and a softmax output layer. The layers correct a DL4J M2.1 bug that
 * doubles every {@code SameDiffLayer}'s gradients (see {@code CorrectedSameDiffLayer}). See {@code docs/vit.md}.
 */
package io.dlion.cli.vit;
