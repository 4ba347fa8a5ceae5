package io.dlion.monitor;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.LocalAeronJob;
import io.dlion.aeron.server.ServerCounters;
import io.dlion.exchange.ExchangeCounters;
import io.dlion.job.DLionJob;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A job of 3 workers over Aeron UDP on loopback, its server and its media driver, all in this JVM, exported on one
 * {@code /metrics} endpoint: scraped over HTTP, parsed strictly ({@link TextFormat}), and compared with the counters the
 * exchange and the server keep, and with what the job must have done (epochs x batches rounds, 3 voters).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class MetricsEndpointTest {
    static final int WORKERS = 3;
    static final int EPOCHS = 2;

    @Test
    void shouldServeWhatTheExchangeAndServerCounted() throws Exception {
        final long params = TinyJob.net().numParams();
        try (LocalAeronJob aeron = LocalAeronJob.launch(new LocalAeronJob.Context().jobId(7).workers(WORKERS).paramCount(params)
                .transport(LocalAeronJob.Transport.UDP));
             DLionMetrics metrics = DLionMetrics.start(0)) {
            final DriverProbe driver = metrics.driver(aeron.aeron());
            final ServerProbe server = metrics.server(0, ServerProbe.Readings.of(aeron.server(0)));
            final List<WorkerProbe> probes = new ArrayList<>();
            final List<ExchangeCounters> counters = new ArrayList<>();
            final ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
            try {
                final List<Future<DLionJob>> trained = new ArrayList<>();
                for (int i = 0; i < WORKERS; i++) {
                    final WorkerProbe probe = metrics.worker(i);
                    probes.add(probe);
                    final int id = i;
                    trained.add(pool.submit(() -> {
                        final DLionJob job = DLionJob.builder(TinyJob.net(), TinyJob.shard(id), aeron.exchange(id)).epochs(EPOCHS)
                            .listener(probe).build();
                        probe.bind(job);
                        job.fit();
                        probe.testAccuracy(EPOCHS, 0.25 * (id + 1));
                        return job;
                    }));
                }
                for (final Future<DLionJob> f : trained) {
                    counters.add(f.get(120, TimeUnit.SECONDS).exchange().counters());
                }
            } finally {
                pool.shutdownNow();
            }

            final HttpResponse<String> response = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metrics.port() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
            assertEquals(200, response.statusCode());
            assertTrue(response.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"),
                response.headers().toString());
            final TextFormat text = TextFormat.parse(response.body());

            final long rounds = (long) EPOCHS * TinyJob.BATCHES;
            for (int i = 0; i < WORKERS; i++) {
                final String w = Integer.toString(i);
                final ExchangeCounters c = counters.get(i);
                assertEquals(rounds, c.rounds(), "the job ran epochs x batches rounds");
                assertEquals(c.rounds(), text.value("dlion_worker_rounds_total", "worker", w));
                assertEquals(c.bytesUp(), text.value("dlion_worker_sent_bytes_total", "worker", w));
                assertEquals(c.bytesDown(), text.value("dlion_worker_received_bytes_total", "worker", w));
                assertEquals(c.waitNanos() / 1e9, text.value("dlion_worker_wait_seconds_total", "worker", w), 1e-9);
                assertEquals(rounds, text.value("dlion_worker_round", "worker", w));
                assertEquals(WORKERS, text.value("dlion_worker_voters", "worker", w));
                assertEquals(EPOCHS, text.value("dlion_worker_epochs", "worker", w));
                assertEquals(0.25 * (i + 1), text.value("dlion_worker_test_accuracy", "worker", w));
                assertTrue(Double.isFinite(text.value("dlion_worker_train_loss", "worker", w)));
                assertEquals(0, text.value("dlion_worker_frames_rejected_total", "worker", w, "reason", "bad-mac"));
                for (final String phase : List.of("pack", "wait", "apply")) {
                    assertEquals(rounds, text.value("dlion_worker_round_phase_seconds_count", "worker", w, "phase", phase), phase);
                    assertEquals(rounds, text.value("dlion_worker_round_phase_seconds_bucket", "worker", w, "phase", phase, "le", "+Inf"));
                }
                // compute is the time from one round's end to the next one's packing: every round but the first
                assertEquals(rounds - 1, text.value("dlion_worker_round_phase_seconds_count", "worker", w, "phase", "compute"));
                assertBucketsCumulative(text, w);
            }
            final ServerCounters sc = aeron.serverCounters();
            assertEquals(rounds, sc.rounds().get());
            assertEquals(sc.rounds().get(), text.value("dlion_server_rounds_total", "slice", "0"));
            assertEquals(sc.bytesIn().get(), text.value("dlion_server_received_bytes_total", "slice", "0"));
            assertEquals(sc.bytesOut().get(), text.value("dlion_server_sent_bytes_total", "slice", "0"));
            assertTrue(sc.bytesIn().get() >= counters.stream().mapToLong(ExchangeCounters::bytesUp).sum(),
                "every vote byte the workers sent reached the server (which counts the HELLOs too)");
            assertEquals(WORKERS, text.value("dlion_server_voters", "slice", "0"));
            assertEquals(WORKERS, text.value("dlion_server_active_workers", "slice", "0"));
            assertEquals(0, text.value("dlion_server_workers_dropped_total", "slice", "0"));
            assertEquals(io.dlion.aeron.RejectReason.values().length, text.find("dlion_server_frames_rejected_total").size(),
                "one series per reason");
            assertTrue(text.value("dlion_driver_sent_bytes_total") >= sc.bytesOut().get() + sc.bytesIn().get(),
                "the driver sends every vote and result frame (all in this process) plus its own messages");
            final double linkSent = text.find("dlion_link_sent_bytes_total").stream().mapToDouble(TextFormat.Sample::value).sum();
            assertTrue(linkSent >= sc.bytesOut().get(), "the UDP publications sent at least the results: " + linkSent);
            assertFalse(text.find("dlion_link_received_bytes_total").isEmpty());
            assertTrue(text.types.containsKey("jvm_memory_used_bytes"), "the JVM's metrics");
            assertEquals("histogram", text.types.get("dlion_worker_round_phase_seconds"));
            assertEquals("counter", text.types.get("dlion_worker_rounds_total"));

            for (final WorkerProbe p : probes) {
                p.close();
            }
            server.close();
            driver.close();
            final TextFormat after = TextFormat.parse(HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metrics.port() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body());
            assertTrue(after.find("dlion_worker_rounds_total").isEmpty(), "closed probes are not read any more");
            assertTrue(after.find("dlion_server_rounds_total").isEmpty());
            assertTrue(after.find("dlion_driver_sent_bytes_total").isEmpty());
        }
    }

    private static void assertBucketsCumulative(final TextFormat text, final String worker) {
        for (final String phase : List.of("compute", "pack", "wait", "apply")) {
            double previous = 0;
            for (final TextFormat.Sample s : text.find("dlion_worker_round_phase_seconds_bucket", "worker", worker, "phase", phase)) {
                assertTrue(s.value() >= previous, "buckets are cumulative: " + s);
                previous = s.value();
            }
        }
    }
}
