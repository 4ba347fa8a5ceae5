/**
 * Offline data readers: Fashion-MNIST (IDX files, Debian package dataset-fashion-mnist) and CIFAR-10
 * (the binary distribution), with CIFAR-10's crop-and-flip augmentation.
 */
package io.dlion.cli.data;
