package io.dlion.spark;

import java.io.IOException;
import java.io.PrintStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.dlion.exchange.ExchangeCounters;
import io.dlion.job.DLionJob;

/**
 * The driver's progress line of a Spark job, fed by its tasks: every task sends, at most every half interval, one UDP
 * datagram to the driver (round, rounds of the job, loss of its last batch, bytes up and down); the driver prints, every
 * interval, the round of the slowest task, rounds per second, the mean loss and the bytes of all tasks:
 * <pre>
 * D-Lion run app-1-fit1: round 120/400  9.8 rounds/s  loss 0.5123  wire up 1,234,567 B down 2,345,678 B  (3 of 3 tasks)
 * </pre>
 * A datagram is one line of text, {@code dlion-progress RUN WORKER ROUND TOTAL LOSS UP DOWN}; one of another run or
 * malformed is dropped and counted. The line is for people: nothing of the training depends on it.
 */
final class JobProgress implements AutoCloseable {
    static final String PREFIX = "dlion-progress";

    private final String run;
    private final long everyMillis;
    private final PrintStream out;
    private final DatagramSocket socket;
    private final Map<Integer, long[]> counts = new ConcurrentHashMap<>();
    private final Map<Integer, Double> losses = new ConcurrentHashMap<>();
    private final Thread receiver;
    private final Thread printer;
    private volatile long dropped;
    private volatile String lastLine = "";

    /**
     * The driver's end: listens on a free UDP port of every interface, prints every interval.
     *
     * @param run         the run the tasks report for.
     * @param everyMillis the interval of the line.
     * @param out         where the line goes.
     */
    JobProgress(final String run, final long everyMillis, final PrintStream out) throws SocketException {
        this.run = run;
        this.everyMillis = everyMillis;
        this.out = out;
        this.socket = new DatagramSocket(new InetSocketAddress(0));
        receiver = new Thread(this::receive, "dlion-progress-receiver");
        receiver.setDaemon(true);
        receiver.start();
        printer = new Thread(this::print, "dlion-progress-line");
        printer.setDaemon(true);
        printer.start();
    }

    /** @return the port the tasks send to. */
    int port() {
        return socket.getLocalPort();
    }

    /** @return the last line printed, "" before the first. */
    String lastLine() {
        return lastLine;
    }

    /** @return datagrams dropped: malformed, or of another run. */
    long dropped() {
        return dropped;
    }

    private void receive() {
        final byte[] buffer = new byte[512];
        final DatagramPacket packet = new DatagramPacket(buffer, buffer.length);
        while (!socket.isClosed()) {
            try {
                socket.receive(packet);
            } catch (final IOException closed) {
                return;
            }
            if (!accept(new String(packet.getData(), packet.getOffset(), packet.getLength(), StandardCharsets.US_ASCII))) {
                dropped++;
            }
        }
    }

    /** @return true when the line was a progress report of this run, now recorded. */
    boolean accept(final String line) {
        final String[] f = line.trim().split(" ");
        if (f.length != 8 || !PREFIX.equals(f[0]) || !run.equals(f[1])) {
            return false;
        }
        try {
            final int worker = Integer.parseInt(f[2]);
            final long[] c = {Long.parseLong(f[3]), Long.parseLong(f[4]), Long.parseLong(f[6]), Long.parseLong(f[7])};
            final double loss = Double.parseDouble(f[5]);
            if (worker < 0 || worker >= DLionSparkOptions.MAX_WORKERS || c[0] < 0 || c[1] < 0 || c[2] < 0 || c[3] < 0) {
                return false;
            }
            counts.put(worker, c);
            losses.put(worker, loss);
            return true;
        } catch (final NumberFormatException ex) {
            return false;
        }
    }

    private void print() {
        long lastRound = -1;
        long lastNanos = System.nanoTime();
        while (!socket.isClosed()) {
            try {
                Thread.sleep(everyMillis);
            } catch (final InterruptedException ex) {
                return;
            }
            if (counts.isEmpty()) {
                continue;
            }
            long round = Long.MAX_VALUE;
            long total = 0;
            long up = 0;
            long down = 0;
            double loss = 0;
            for (final Map.Entry<Integer, long[]> e : counts.entrySet()) {
                final long[] c = e.getValue();
                round = Math.min(round, c[0]);
                total = Math.max(total, c[1]);
                up += c[2];
                down += c[3];
                loss += losses.get(e.getKey());
            }
            final long now = System.nanoTime();
            final double rate = lastRound < 0 ? 0 : (round - lastRound) / ((now - lastNanos) / 1e9);
            lastRound = round;
            lastNanos = now;
            lastLine = String.format(Locale.ROOT, "D-Lion run %s: round %d/%d  %.1f rounds/s  loss %.4f  wire up %,d B down %,d B  (%d tasks)",
                run, round, total, rate, loss / counts.size(), up, down, counts.size());
            out.println(lastLine);
        }
    }

    @Override
    public void close() {
        socket.close();
        printer.interrupt();
    }

    /** A task's end: a {@link DLionJob.Listener} that reports its job to the driver, at most every half interval. */
    static final class Sender implements DLionJob.Listener, AutoCloseable {
        private final String run;
        private final int worker;
        private final long everyNanos;
        private final InetSocketAddress driver;
        private final DatagramSocket socket;
        private long lastSent;

        /**
         * @param run         the run.
         * @param worker      the task's worker id.
         * @param everyMillis the driver's interval.
         * @param driver      the driver's progress address.
         */
        Sender(final String run, final int worker, final long everyMillis, final InetSocketAddress driver) throws SocketException {
            this.run = run;
            this.worker = worker;
            this.everyNanos = everyMillis * 500_000L;
            this.driver = driver;
            this.socket = new DatagramSocket();
            this.lastSent = System.nanoTime() - everyNanos;
        }

        @Override
        public void onRound(final DLionJob job, final double score) {
            final long now = System.nanoTime();
            if (now - lastSent < everyNanos) {
                return;
            }
            lastSent = now;
            final ExchangeCounters c = job.exchange().counters();
            final byte[] line = String.format(Locale.ROOT, "%s %s %d %d %d %.6g %d %d", PREFIX, run, worker, job.round(),
                (long) job.epochs() * job.roundsPerEpoch(), score, c.bytesUp(), c.bytesDown()).getBytes(StandardCharsets.US_ASCII);
            try {
                socket.send(new DatagramPacket(line, line.length, driver));
            } catch (final IOException ex) {
                // the line is for people: a lost report only makes it older
            }
        }

        @Override
        public void close() {
            socket.close();
        }
    }
}
