package io.dlion.monitor;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;
import io.dlion.exchange.InProcessVoteHub;
import io.dlion.job.DLionJob;
import io.dlion.vote.VoteRule;
import org.deeplearning4j.core.storage.StatsStorage;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.ui.model.stats.StatsListener;
import org.deeplearning4j.ui.model.stats.api.StatsReport;
import org.deeplearning4j.ui.model.storage.InMemoryStatsStorage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DLionUiTest {
    static final int WORKERS = 3;
    static final String SESSION = "dlion-job-5";

    /** Trains 3 workers with the UI's listener on each, reporting through {@code ui}; returns the rounds each ran. */
    private static long train(final DLionUi ui) throws Exception {
        final InProcessVoteHub hub = new InProcessVoteHub(WORKERS, VoteRule.MAJORITY, 30_000);
        final ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
        try {
            final List<Future<Long>> done = new ArrayList<>();
            for (int i = 0; i < WORKERS; i++) {
                final int id = i;
                done.add(pool.submit(() -> {
                    final MultiLayerNetwork net = TinyJob.net();
                    ui.attach(net, id);
                    try (DLionJob job = DLionJob.builder(net, TinyJob.shard(id), hub.exchange(id)).epochs(2).build()) {
                        job.fit();
                        return job.round();
                    }
                }));
            }
            long rounds = -1;
            for (final Future<Long> f : done) {
                rounds = f.get(60, TimeUnit.SECONDS);
            }
            return rounds;
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldReportEveryWorkerUnderItsIdInOneSession() throws Exception {
        final StatsStorage storage = new InMemoryStatsStorage();
        final long rounds = train(DLionUi.to(storage, SESSION).reportEvery(1));
        assertEquals(2L * TinyJob.BATCHES, rounds);
        assertEquals(List.of(SESSION), storage.listSessionIDs());
        final List<String> workers = new ArrayList<>(storage.listWorkerIDsForSession(SESSION));
        workers.sort(null);
        assertEquals(List.of("worker-0", "worker-1", "worker-2"), workers);
        for (final String w : workers) {
            assertNotNull(storage.getStaticInfo(SESSION, StatsListener.TYPE_ID, w), "static info (model, hardware) of " + w);
            final StatsReport last = (StatsReport) storage.getLatestUpdate(SESSION, StatsListener.TYPE_ID, w);
            assertEquals(rounds - 1, last.getIterationCount(), "the last iteration's report of " + w + " (iterations count from 0)");
            assertTrue(storage.getNumUpdateRecordsFor(SESSION, StatsListener.TYPE_ID, w) >= 1);
        }
    }

    @Test
    void shouldSendEveryQueuedReportToARemoteUiBeforeClosing() throws Exception {
        final AtomicInteger updates = new AtomicInteger();
        final AtomicInteger posts = new AtomicInteger();
        final HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        receiver.createContext("/remoteReceive", exchange -> {
            try (InputStream in = exchange.getRequestBody()) {
                final String body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                posts.incrementAndGet();
                if (body.startsWith("{\"type\":\"Update\"") && body.contains("\"data\":")) {
                    updates.incrementAndGet();
                }
            }
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        receiver.start();
        try {
            final long rounds;
            try (DLionUi ui = DLionUi.remote("http://127.0.0.1:" + receiver.getAddress().getPort(), SESSION).reportEvery(1)) {
                rounds = train(ui);
            }
            assertEquals(WORKERS * rounds, updates.get(), "every worker's report of every iteration arrived (" + posts.get() + " posts)");
        } finally {
            receiver.stop(0);
        }
    }

    @Test
    void shouldRefuseAUiAddressThatIsNotHttp() {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> DLionUi.remote("uihost:9000", SESSION));
        assertTrue(ex.getMessage().contains("--ui"), ex.getMessage());
    }

}
