package io.dlion.bench.aeron;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FragmentHandler;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Channels;
import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.wire.FrameMac;
import io.dlion.testkit.SyntheticVotes;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Round time of the Aeron transport against raw Aeron moving the same bytes, in the same run.
 * <pre>
 *   java --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -cp $(cat benchmarks/target/classpath.txt):benchmarks/target/classes \
 *       io.dlion.bench.aeron.AeronRoundBenchmark [params] [rounds] [transports] [workerCounts] [auth]
 * </pre>
 * Defaults: 10,000,000 params, 10 measured rounds after 3 warm-up rounds, transports {@code ipc,udp}, N = {@code 2,3,4,8},
 * majority vote, auth {@code none}. Auth is a list of {@code none} (no secret), {@code secret} (the job's secret: HMAC'd
 * HELLOs and answers) and {@code frame-mac} (the secret and a tag on every vote and result frame), each run in turn for
 * every transport and N, so a list such as {@code secret,frame-mac,secret,frame-mac} puts the two side by side twice;
 * with {@code frame-mac} in the list, the cost of tagging alone (sign and verify one worker's vote of {@code params}
 * parameters in 8000-byte chunks, one thread) is printed first. Round time: from a barrier all workers leave together to the last worker holding the result
 * (median over rounds). Raw: the same N vote streams of n/8 bytes pushed into one subscriber, then one stream
 * of the result bytes to N subscribers, in 8000-byte frames on the same channels (median of 5).
 */
public final class AeronRoundBenchmark {
    private static final int JOB = 1;
    private static final int WARMUP = 3;
    private static final byte[] SECRET = "benchmark secret, 32 bytes long!".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private AeronRoundBenchmark() {
    }

    public static void main(final String[] args) throws Exception {
        final long params = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
        final int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        final String[] transports = (args.length > 2 ? args[2] : "ipc,udp").split(",");
        final int[] counts = Arrays.stream((args.length > 3 ? args[3] : "2,3,4,8").split(",")).mapToInt(Integer::parseInt).toArray();
        final String[] auths = (args.length > 4 ? args[4] : "none").split(",");
        for (final String auth : auths) {
            if (!List.of("none", "secret", "frame-mac").contains(auth)) {
                throw new IllegalArgumentException("auth must be none, secret or frame-mac, got " + auth);
            }
        }
        if (Arrays.asList(auths).contains("frame-mac")) {
            tagCost(params);
        }
        System.out.println("| transport | auth | N | params | round ms (median) | raw ms (median) | ratio | up B/param | down B/param | bits/param up+down |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|");
        int port = 42_100;
        for (final String transport : transports) {
            for (final int n : counts) {
                for (final String auth : auths) {
                    port += 2;
                    try (AeronRuntime runtime = AeronRuntime.launch(new AeronRuntime.Context())) {
                        runOne(runtime.aeron(), transport, auth, n, params, rounds, port);
                    }
                }
            }
        }
    }

    /** Sign, then verify, every 8000-byte vote chunk of one worker's vote of {@code params} parameters: median of 11, after 5 warm-up. */
    private static void tagCost(final long params) {
        final int body = 8000 + 32;
        final int frames = (int)((params + 63999) / 64000);
        final UnsafeBuffer frame = new UnsafeBuffer(new byte[body + FrameMac.TAG_LENGTH]);
        final FrameMac sender = new FrameMac(SECRET);
        final FrameMac receiver = new FrameMac(SECRET);
        final long[] sign = new long[11];
        final long[] verify = new long[11];
        for (int rep = -5; rep < 11; rep++) {
            final long t0 = System.nanoTime();
            for (int i = 0; i < frames; i++) {
                frame.putInt(8, i);
                sender.sign(frame, 0, body, 7);
            }
            final long t1 = System.nanoTime();
            for (int i = 0; i < frames; i++) {
                if (!receiver.verify(frame, 0, body + FrameMac.TAG_LENGTH, 7)) {
                    throw new IllegalStateException("verify failed");
                }
            }
            final long t2 = System.nanoTime();
            if (rep >= 0) {
                sign[rep] = t1 - t0;
                verify[rep] = t2 - t1;
            }
        }
        final double mb = (double)frames * body / 1e6;
        System.out.printf(Locale.ROOT, "frame tags, %d frames of %d bytes (%.2f MB, one worker's vote of %d params), one thread: sign %.2f ms"
            + " (%.0f MB/s), verify %.2f ms (%.0f MB/s)%n%n", frames, body, mb, params, median(sign) / 1e6, mb / (median(sign) / 1e9),
            median(verify) / 1e6, mb / (median(verify) / 1e9));
    }

    private static void runOne(final Aeron aeron, final String transport, final String auth, final int n, final long params, final int rounds,
        final int port) throws Exception {
        final byte[] secret = auth.equals("none") ? null : SECRET;
        final boolean frameMac = auth.equals("frame-mac");
        final boolean udp = transport.equals("udp");
        final String voteChannel = udp ? Channels.udpVotes("127.0.0.1", port, n) : Channels.ipc();
        final String serverResults = udp ? Channels.udpResultsPublication("127.0.0.1", port + 1, n) : Channels.ipc();
        final String workerResults = udp ? Channels.udpResultsSubscription("127.0.0.1", n) : Channels.ipc();
        final AggregationServer server = AggregationServer.launch(new AggregationServer.Context()
            .aeron(aeron).jobId(JOB).workers(n).paramCount(params).rule(VoteRule.MAJORITY).secret(secret).frameMac(frameMac)
            .voteChannel(voteChannel).voteStreamId(11).resultChannel(serverResults).resultStreamId(12));
        final ExecutorService pool = Executors.newFixedThreadPool(n);
        final List<AeronVoteExchange> workers = new ArrayList<>();
        try {
            final List<Future<AeronVoteExchange>> connecting = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                final int id = i;
                connecting.add(pool.submit(() -> new AeronVoteExchange(new AeronVoteExchange.Context()
                    .aeron(aeron).jobId(JOB).workerId(id).workers(n).paramCount(params).secret(secret).frameMac(frameMac)
                    .slices(List.of(new SliceEndpoint(0, 0, -1, voteChannel, 11, workerResults, 12))))));
            }
            for (final Future<AeronVoteExchange> future : connecting) {
                workers.add(future.get(30, TimeUnit.SECONDS));
            }
            final long[][] votes = new long[n][];
            for (int i = 0; i < n; i++) {
                votes[i] = SyntheticVotes.vote(7, 0, i, params);
            }
            final CyclicBarrier barrier = new CyclicBarrier(n);
            final long[][] times = new long[n][WARMUP + rounds];
            final List<Future<?>> running = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                final int id = i;
                running.add(pool.submit(() -> {
                    final AeronVoteExchange worker = workers.get(id);
                    for (int r = 0; r < WARMUP + rounds; r++) {
                        barrier.await();
                        final long start = System.nanoTime();
                        worker.submit(r, votes[id], params);
                        worker.await(r, 60_000);
                        times[id][r] = System.nanoTime() - start;
                    }
                    return null;
                }));
            }
            for (final Future<?> future : running) {
                future.get(10, TimeUnit.MINUTES);
            }
            final long[] roundNs = new long[rounds];
            for (int r = 0; r < rounds; r++) {
                for (int i = 0; i < n; i++) {
                    roundNs[r] = Math.max(roundNs[r], times[i][WARMUP + r]);
                }
            }
            final double roundMs = median(roundNs) / 1e6;
            final AeronVoteExchange w0 = workers.get(0);
            final double up = (double)w0.counters().bytesUp() / (WARMUP + rounds) / params;
            final double down = (double)w0.counters().bytesDown() / (WARMUP + rounds) / params;
            CloseHelper.closeAll(workers);
            workers.clear();
            CloseHelper.close(server);
            final long upBytes = w0.counters().bytesUp() / (WARMUP + rounds);
            final long downBytes = w0.counters().bytesDown() / (WARMUP + rounds);
            final double rawMs = raw(aeron, udp, n, upBytes, downBytes, port + 100) / 1e6;
            System.out.printf(Locale.ROOT, "| %s | %s | %d | %d | %.1f | %.1f | %.2f | %.4f | %.4f | %.3f |%n", transport, auth, n, params, roundMs, rawMs,
                roundMs / rawMs, up, down, 8 * (up + down));
        } finally {
            CloseHelper.closeAll(workers);
            CloseHelper.close(server);
            pool.shutdownNow();
        }
    }

    /** Median of 5 runs of: N streams of upBytes into one subscriber, then one stream of downBytes to N subscribers. */
    private static long raw(final Aeron aeron, final boolean udp, final int n, final long upBytes, final long downBytes, final int port)
        throws Exception {
        final String up = udp ? Channels.udpVotes("127.0.0.1", port, n) : Channels.ipc();
        final String downPub = udp ? Channels.udpResultsPublication("127.0.0.1", port + 1, n) : Channels.ipc();
        final String downSub = udp ? Channels.udpResultsSubscription("127.0.0.1", n) : Channels.ipc();
        final Subscription upSub = aeron.addSubscription(up, 21);
        final List<ExclusivePublication> upPubs = new ArrayList<>();
        final List<Subscription> downSubs = new ArrayList<>();
        final ExclusivePublication downPubl = aeron.addExclusivePublication(downPub, 22);
        final ExecutorService pool = Executors.newFixedThreadPool(n + 1);
        try {
            for (int i = 0; i < n; i++) {
                upPubs.add(aeron.addExclusivePublication(up, 21));
                downSubs.add(aeron.addSubscription(downSub, 22));
            }
            if (udp) {
                Channels.addDestinations(downPubl, downSubs);
            }
            final IdleStrategy idle = new BackoffIdleStrategy();
            while (!upSub.isConnected() || upSub.imageCount() < n || !downPubl.isConnected()
                || downSubs.stream().anyMatch(s -> !s.isConnected()) || upPubs.stream().anyMatch(p -> !p.isConnected())) {
                idle.idle();
            }
            final long[] runs = new long[5];
            for (int run = 0; run < runs.length; run++) {
                final long start = System.nanoTime();
                final AtomicLong received = new AtomicLong();
                final List<Future<?>> futures = new ArrayList<>();
                for (final ExclusivePublication pub : upPubs) {
                    futures.add(pool.submit(() -> push(pub, upBytes)));
                }
                final FragmentHandler count = (buffer, offset, length, header) -> received.addAndGet(length + 32);
                while (received.get() < n * upBytes) {
                    idle.idle(upSub.poll(count, 64));
                }
                for (final Future<?> future : futures) {
                    future.get();
                }
                futures.clear();
                final AtomicLong[] got = new AtomicLong[n];
                for (int i = 0; i < n; i++) {
                    final Subscription sub = downSubs.get(i);
                    final AtomicLong g = new AtomicLong();
                    got[i] = g;
                    futures.add(pool.submit(() -> {
                        final IdleStrategy subIdle = new BackoffIdleStrategy();
                        final FragmentHandler h = (buffer, offset, length, header) -> g.addAndGet(length + 32);
                        while (g.get() < downBytes) {
                            subIdle.idle(sub.poll(h, 64));
                        }
                        return null;
                    }));
                }
                push(downPubl, downBytes);
                for (final Future<?> future : futures) {
                    future.get();
                }
                runs[run] = System.nanoTime() - start;
            }
            return median(runs);
        } finally {
            pool.shutdownNow();
            CloseHelper.closeAll(upPubs);
            CloseHelper.closeAll(downSubs);
            CloseHelper.closeAll(upSub, downPubl);
        }
    }

    private static Void push(final ExclusivePublication pub, final long bytes) {
        final BufferClaim claim = new BufferClaim();
        final IdleStrategy idle = new BackoffIdleStrategy();
        long sent = 0;
        while (sent < bytes) {
            final int payload = 8000 + 32;
            if (pub.tryClaim(payload, claim) > 0) {
                claim.buffer().setMemory(claim.offset(), payload, (byte)1);
                claim.commit();
                sent += payload + 32;
            } else {
                idle.idle();
            }
        }
        return null;
    }

    private static long median(final long[] values) {
        final long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
