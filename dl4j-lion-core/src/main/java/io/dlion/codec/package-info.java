/**
 * The sign codec of Distributed Lion: packing a worker's vote vector into one bit per parameter
 * ({@link io.dlion.codec.SignPacker}), adding a round's result into the update
 * ({@link io.dlion.codec.DeltaApplier}), and the down-link encodings of a result
 * ({@link io.dlion.codec.DownlinkEncoding}: {@link io.dlion.codec.SignEncoding} 1 bit,
 * {@link io.dlion.codec.TernaryEncoding} 1.67 bits, {@link io.dlion.codec.CountEncoding}
 * ceil(log2(N + 1)) bits per parameter, read and written through a transport's {@link io.dlion.codec.WordViews}).
 * <p>
 * All host-side vectors use the packed layout of {@link io.dlion.vote.RoundResult}: {@code long[]} words,
 * parameter j in word {@code j >>> 6}, byte {@code (j >>> 3) & 7} (little-endian), bit {@code 7 - (j & 7)};
 * padding bits past the parameter count are zero. No transport is involved here.
 * <p>
 * On ND4J's CPU backend, packing and applying contiguous FLOAT and DOUBLE vectors run as host kernels over the
 * off-heap buffers, split over {@link io.dlion.codec.KernelThreads} ({@code HostSignPacker}, {@code HostDeltaApplier}),
 * with the Vector API for whole words when the JVM runs with {@code --add-modules jdk.incubator.vector}
 * ({@code VectorCodec}); the results are the same bits on every path, device ops included.
 */
package io.dlion.codec;
