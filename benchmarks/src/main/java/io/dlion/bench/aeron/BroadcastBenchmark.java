package io.dlion.bench.aeron;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Channels;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * How to broadcast a round's result to N workers over UDP: one multi-destination-cast publication (what
 * {@code AggregationServer} uses) against N unicast publications carrying the same bytes. One thread offers and
 * polls every subscription; the time is from the first byte offered until every subscriber has all the bytes.
 * Args: bytes (default 1,250,000 = 10M parameters at 1 bit), rounds (default 15).
 */
public final class BroadcastBenchmark {
    private static final int FRAME = 8000;
    private static final String HOST = "127.0.0.1";

    private BroadcastBenchmark() {
    }

    public static void main(final String[] args) {
        final int bytes = args.length > 0 ? Integer.parseInt(args[0]) : 1_250_000;
        final int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 15;
        System.out.println("| N | bytes per worker | MDC ms (median) | N unicast ms (median) | unicast / MDC |");
        System.out.println("|---|---|---|---|---|");
        try (AeronRuntime runtime = AeronRuntime.launch(new AeronRuntime.Context())) {
            int port = 42_000;
            for (final int n : new int[] {2, 4, 8}) {
                final double mdc = mdc(runtime.aeron(), n, bytes, rounds, port);
                port += 10;
                final double unicast = unicast(runtime.aeron(), n, bytes, rounds, port);
                port += 10 + n;
                System.out.printf(Locale.ROOT, "| %d | %,d | %.2f | %.2f | %.2f |%n", n, bytes, mdc, unicast, unicast / mdc);
            }
        }
    }

    private static double mdc(final Aeron aeron, final int n, final int bytes, final int rounds, final int port) {
        final ExclusivePublication pub = aeron.addExclusivePublication(Channels.udpResultsPublication(HOST, port, n), 1);
        final List<Subscription> subs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            subs.add(aeron.addSubscription(Channels.udpResultsSubscription(HOST, n), 1));
        }
        try {
            Channels.addDestinations(pub, subs);
            awaitConnected(List.of(pub), subs);
            return measure(List.of(pub), subs, bytes, rounds);
        } finally {
            subs.forEach(Subscription::close);
            pub.close();
        }
    }

    private static double unicast(final Aeron aeron, final int n, final int bytes, final int rounds, final int port) {
        final List<Publication> pubs = new ArrayList<>();
        final List<Subscription> subs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final String channel = "aeron:udp?endpoint=" + HOST + ':' + (port + i) + "|mtu=" + Channels.MTU + "|term-length=" + Channels.termLength(n);
            pubs.add(aeron.addExclusivePublication(channel, 1));
            subs.add(aeron.addSubscription(channel, 1));
        }
        try {
            awaitConnected(pubs, subs);
            return measure(pubs, subs, bytes, rounds);
        } finally {
            subs.forEach(Subscription::close);
            pubs.forEach(Publication::close);
        }
    }

    private static void awaitConnected(final List<? extends Publication> pubs, final List<Subscription> subs) {
        final long deadline = System.nanoTime() + 10_000_000_000L;
        while (pubs.stream().anyMatch(p -> !p.isConnected()) || subs.stream().anyMatch(s -> !s.isConnected())) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not connected within 10 s");
            }
            Thread.onSpinWait();
        }
    }

    /** @return median milliseconds to get {@code bytes} to every subscriber, over the publications given. */
    private static double measure(final List<? extends Publication> pubs, final List<Subscription> subs, final int bytes, final int rounds) {
        final UnsafeBuffer frame = new UnsafeBuffer(new byte[FRAME]);
        final double[] times = new double[rounds];
        for (int r = -3; r < rounds; r++) {
            final long[] received = new long[subs.size()];
            final int[] sent = new int[pubs.size()];
            final long start = System.nanoTime();
            boolean done = false;
            while (!done) {
                for (int p = 0; p < pubs.size(); p++) {
                    if (sent[p] < bytes) {
                        final int len = Math.min(FRAME, bytes - sent[p]);
                        if (pubs.get(p).offer(frame, 0, len) > 0) {
                            sent[p] += len;
                        }
                    }
                }
                done = true;
                for (int s = 0; s < subs.size(); s++) {
                    final int index = s;
                    subs.get(s).poll((buffer, offset, length, header) -> received[index] += length, 64);
                    done &= received[s] >= bytes;
                }
            }
            if (r >= 0) {
                times[r] = (System.nanoTime() - start) / 1e6;
            }
        }
        Arrays.sort(times);
        return times[rounds / 2];
    }
}
