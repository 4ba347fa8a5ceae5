package io.dlion.aeron;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.testkit.NaiveVote;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteRule;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The Aeron log-buffer memory of one process, measured: the process measured (the star's server, a star worker, or a
 * sharded rank with its slice server) gets a media driver of its own in this JVM, the rest of the job shares
 * {@value #PEER_DRIVERS} more, all talking UDP on loopback (ports 44200 and up), and after a round the log buffer files of
 * the measured driver's directory are summed (their mapped length: three terms and a metadata page each; the files are
 * sparse, so the resident memory is at most this).
 * Every log has the term length {@link Channels#termLength(int)} gives its topology's busiest link, so a process holds a
 * number of logs that grows with N (sharded: 3N + 2; the star's server N + 2; a star worker 2) of a size that falls
 * with N down to 64 KiB terms: nothing grows with N².
 * <p>
 * Prints one line per process kind; {@code docs/scaling.md} quotes them. A sharded job of 64 workers (4,096 UDP vote
 * streams and as many result images in this JVM) did not finish its round within two minutes on two shared cores, so
 * the sharded rank is measured at N = 16 only.
 */
@Tag("slow")
class LogBufferMemoryTest {
    private static final long PARAMS = 64 * 20 * 64 + 77;
    private static final int BASE_PORT = 44200;
    /** Drivers the processes not measured share (a driver per process would be 65 drivers on the machine's cores). */
    private static final int PEER_DRIVERS = 4;

    @ParameterizedTest
    @CsvSource({"STAR, 16", "STAR, 64", "SHARDED, 16"})
    void shouldHoldLogBuffersThatGrowLinearlyWithTheWorkers(final Topology.Kind kind, final int n) throws Exception {
        final List<String> hosts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            hosts.add("127.0.0.1");
        }
        final boolean sharded = kind == Topology.Kind.SHARDED;
        final Topology topology = sharded ? Topology.sharded(hosts, BASE_PORT) : Topology.star("127.0.0.1", BASE_PORT, BASE_PORT + 1);
        final int chunkWords = topology.chunkWords(PARAMS, Configuration.chunkWords());
        final List<AeronRuntime> drivers = new ArrayList<>();
        final List<AggregationServer> servers = new ArrayList<>();
        final List<AeronVoteExchange> workers = new java.util.concurrent.CopyOnWriteArrayList<>();
        final ExecutorService pool = Executors.newFixedThreadPool(n);
        final java.util.concurrent.atomic.AtomicReference<Throwable> serverError = new java.util.concurrent.atomic.AtomicReference<>();
        try {
            final AeronRuntime measured = launch(drivers);
            final AeronRuntime serverDriver = sharded ? null : launch(drivers);
            final AeronRuntime[] peers = new AeronRuntime[PEER_DRIVERS];
            for (int p = 0; p < peers.length; p++) {
                peers[p] = launch(drivers);
            }
            // the measured rank is 0: sharded, it serves slice 0 and votes in its own driver; in the star, worker 0 does
            final AeronRuntime[] rank = new AeronRuntime[n];
            for (int i = 0; i < n; i++) {
                rank[i] = i == 0 ? measured : peers[i % peers.length];
            }
            for (int s = 0; s < topology.slices(); s++) {
                final AeronRuntime owner = sharded ? rank[s] : serverDriver;
                final AggregationServer server = AggregationServer.launch(new AggregationServer.Context()
                    .aeron(owner.aeron()).jobId(3).workers(n).paramCount(PARAMS).rule(VoteRule.MAJORITY).chunkWords(Configuration.chunkWords())
                    .slice(topology, s).windowChunks(4).errorHandler(serverError::set));
                servers.add(server);
            }
            // a worker reads its results while the others connect, as a training worker does between rounds: the servers'
            // answers to the others' HELLOs share the result stream, whose flow control waits for the slowest reader
            final java.util.concurrent.CountDownLatch connected = new java.util.concurrent.CountDownLatch(n);
            final long[][] votes = NaiveVote.randomVotes(n, n, PARAMS);
            final List<Future<RoundResult>> rounds = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                final int id = i;
                rounds.add(pool.submit(() -> {
                    final AeronVoteExchange w = new AeronVoteExchange(new AeronVoteExchange.Context()
                        .aeron(rank[id].aeron()).jobId(3).workerId(id).workers(n).paramCount(PARAMS).rule(VoteRule.MAJORITY)
                        .chunkWords(chunkWords).slices(topology.endpoints(PARAMS, chunkWords, n, "127.0.0.1"))
                        .connectTimeoutNs(TimeUnit.SECONDS.toNanos(60)));
                    workers.add(w);
                    connected.countDown();
                    while (!connected.await(1, TimeUnit.MILLISECONDS)) {
                        w.pollIdle();
                    }
                    w.submit(0, votes[id], PARAMS);
                    return w.await(0, 60_000);
                }));
            }
            NaiveVote.assertMatches(votes, PARAMS, VoteRule.MAJORITY, rounds.get(0).get(120, TimeUnit.SECONDS));
            for (final Future<RoundResult> f : rounds) {
                f.get(120, TimeUnit.SECONDS);
            }

            final int term = Channels.termLength(topology.linkStreams(n));
            final long log = logLength(term);
            final long worker = logBytes(measured);
            if (sharded) {
                assertEquals((3L * n + 2) * log, worker, "rank 0: N vote publications, N vote images, N result images, the result"
                    + " and the hand-over relay's publication");
                System.out.printf("log buffers, sharded, N = %d: every rank %,d bytes (%d logs of %,d-byte terms)%n", n, worker, 3 * n + 2, term);
            } else {
                final long server = logBytes(serverDriver);
                assertEquals((n + 2L) * log, server, "the server: N vote images, the result and the hand-over relay's publication");
                assertEquals(2L * log, worker, "a worker: 1 vote publication, 1 result image");
                System.out.printf("log buffers, star, N = %d: server %,d bytes (%d logs), a worker %,d bytes (2 logs), %,d-byte terms%n", n, server,
                    n + 2, worker, term);
            }
        } finally {
            pool.shutdownNow();
            CloseHelper.closeAll(workers);
            CloseHelper.closeAll(servers);
            CloseHelper.closeAll(drivers);
        }
        assertNull(serverError.get(), "server agent error");
    }

    private static AeronRuntime launch(final List<AeronRuntime> drivers) {
        final AeronRuntime driver = AeronRuntime.launch(new AeronRuntime.Context());
        drivers.add(driver);
        return driver;
    }

    /** @return the mapped length of one log: three terms and Aeron's log metadata (one page). */
    private static long logLength(final int term) {
        return 3L * term + io.aeron.logbuffer.LogBufferDescriptor.LOG_META_DATA_LENGTH;
    }

    /** @return the summed length of the log buffer files of a driver's publications and images. */
    private static long logBytes(final AeronRuntime driver) {
        long bytes = 0;
        for (final String dir : new String[] {"publications", "images"}) {
            final File[] files = new File(driver.aeronDirectoryName(), dir).listFiles();
            if (files != null) {
                for (final File f : files) {
                    bytes += f.length();
                }
            }
        }
        return bytes;
    }
}
