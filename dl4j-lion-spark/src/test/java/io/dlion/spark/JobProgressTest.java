package io.dlion.spark;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.dlion.exchange.InProcessVoteHub;
import io.dlion.job.DLionJob;
import io.dlion.vote.VoteRule;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.dataset.DataSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The driver's progress line, fed over UDP by the jobs of 2 workers in this JVM (the tasks' side of a Spark job without
 * Spark): it shows the last round of the job, every worker's bytes summed, and drops what is not a report of its run.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JobProgressTest {
    private static final int WORKERS = 2;
    private static final int ROUNDS = 6;

    @Test
    void shouldPrintTheJobsRoundAndBytesFedByItsTasks() throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (JobProgress progress = new JobProgress("run-7", 50, new PrintStream(printed, true, StandardCharsets.UTF_8))) {
            final InetSocketAddress driver = new InetSocketAddress("127.0.0.1", progress.port());
            final InProcessVoteHub hub = new InProcessVoteHub(WORKERS, VoteRule.MAJORITY, 30_000);
            final ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
            final List<Future<long[]>> done = new ArrayList<>();
            try {
                for (int w = 0; w < WORKERS; w++) {
                    final int id = w;
                    done.add(pool.submit(() -> {
                        final List<DataSet> batches = SparkTestSupport.trainBatches(ROUNDS * 4, 4);
                        try (JobProgress.Sender sender = new JobProgress.Sender("run-7", id, 0, driver);
                             DLionJob job = DLionJob.builder(SparkTestSupport.mlp(8), new ListDataSetIterator<>(batches, 1), hub.exchange(id))
                                 .listener(sender).build()) {
                            job.fit();
                            return new long[] {job.exchange().counters().bytesUp(), job.exchange().counters().bytesDown()};
                        }
                    }));
                }
                long up = 0;
                long down = 0;
                for (final Future<long[]> f : done) {
                    final long[] bytes = f.get(60, TimeUnit.SECONDS);
                    up += bytes[0];
                    down += bytes[1];
                }
                final String want = String.format(java.util.Locale.ROOT, "round %d/%d", ROUNDS, ROUNDS);
                final String bytes = String.format(java.util.Locale.ROOT, "wire up %,d B down %,d B  (2 tasks)", up, down);
                final long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (!(progress.lastLine().contains(want) && progress.lastLine().contains(bytes)) && System.nanoTime() < until) {
                    Thread.sleep(20);
                }
                assertTrue(progress.lastLine().startsWith("D-Lion run run-7: " + want), progress.lastLine());
                assertTrue(progress.lastLine().contains(bytes), progress.lastLine() + " vs " + bytes);
                assertTrue(printed.toString(StandardCharsets.UTF_8).contains(progress.lastLine()), "the line is printed");
            } finally {
                pool.shutdownNow();
            }

            final long dropped = progress.dropped();
            try (DatagramSocket stranger = new DatagramSocket()) {
                for (final String junk : List.of("dlion-progress other-run 0 1 2 0.5 3 4", "dlion-progress run-7 0 x 2 0.5 3 4", "hello")) {
                    final byte[] b = junk.getBytes(StandardCharsets.US_ASCII);
                    stranger.send(new DatagramPacket(b, b.length, new InetSocketAddress("127.0.0.1", progress.port())));
                }
            }
            final long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (progress.dropped() < dropped + 3 && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            assertEquals(dropped + 3, progress.dropped(), "another run's, a malformed and a foreign datagram are dropped and counted");
            assertFalse(progress.accept("dlion-progress run-7 " + DLionSparkOptions.MAX_WORKERS + " 1 2 0.5 3 4"), "a worker id beyond the job's limit");
        }
    }
}
