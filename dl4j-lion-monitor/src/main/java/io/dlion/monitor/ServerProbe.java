package io.dlion.monitor;

import java.util.function.IntSupplier;
import java.util.function.Supplier;

import io.dlion.aeron.RejectReason;
import io.dlion.aeron.server.AggregationServer;
import io.dlion.aeron.server.ServerCounters;
import io.prometheus.metrics.core.metrics.CounterWithCallback;

/**
 * The metrics of one aggregation server (one slice), labelled {@code slice="<slice>"}, read from its Aeron counters when
 * Prometheus scrapes: rounds, bytes in and out, voters of the last round, workers the next round waits for, workers
 * dropped and back, joins announced (each a hand-over from a donor), hand-over traffic relayed, and frames rejected by
 * reason ({@link RejectReason} labels).
 */
public final class ServerProbe extends DLionMetrics.Source {
    private final String label;
    private final Readings source;

    /**
     * What a server probe reads.
     *
     * @param counters      the server's counters.
     * @param activeWorkers how many workers the next round waits for.
     * @param handOver      hand-over frames relayed, payload bytes relayed, hand-over frames rejected.
     */
    public record Readings(ServerCounters counters, IntSupplier activeWorkers, Supplier<long[]> handOver) {
        /**
         * @param server a slice server, of votes or of the dense baseline's gradients.
         * @return its readings. The active workers are read from the server's own set on the scrape thread: each of its
         *     64-bit words is read whole, so the count is one a recent duty cycle had, good enough for a gauge.
         */
        public static Readings of(final AggregationServer server) {
            return new Readings(server.counters(), () -> server.activeWorkers().count(), server::handOverCounts);
        }
    }

    ServerProbe(final DLionMetrics owner, final int slice, final Readings source) {
        super(owner);
        this.label = Integer.toString(slice);
        this.source = source;
    }

    private static void each(final DLionMetrics m, final CounterWithCallback.Callback cb,
        final java.util.function.ToLongFunction<ServerCounters> value) {
        m.read(m.servers(), s -> cb.call(value.applyAsLong(s.source.counters()), s.label));
    }

    static void register(final DLionMetrics m) {
        m.counter("dlion_server_rounds_total", "Rounds this server completed (every result chunk published)",
            cb -> each(m, cb, c -> c.rounds().get()), "slice");
        m.counter("dlion_server_received_bytes_total", "Bytes of vote frames received, headers included",
            cb -> each(m, cb, c -> c.bytesIn().get()), "slice");
        m.counter("dlion_server_sent_bytes_total", "Bytes of result frames published, headers included, once per frame",
            cb -> each(m, cb, c -> c.bytesOut().get()), "slice");
        m.counter("dlion_server_tied_parameters_total", "Parameters whose majority vote was a tie",
            cb -> each(m, cb, c -> c.ties().get()), "slice");
        m.counter("dlion_server_rounds_aborted_total", "Rounds aborted at the deadline with fewer voters than the quorum",
            cb -> each(m, cb, c -> c.roundsAbandoned().get()), "slice");
        m.counter("dlion_server_workers_dropped_total", "Times a worker was dropped for missing a round deadline",
            cb -> each(m, cb, c -> c.workersDropped().get()), "slice");
        m.counter("dlion_server_workers_rejoined_total", "Times a dropped worker voted in time again",
            cb -> each(m, cb, c -> c.workersRejoined().get()), "slice");
        m.counter("dlion_server_workers_joined_total", "HELLOs that bound a worker id to a new session (a worker started or restarted)",
            cb -> each(m, cb, c -> c.workersJoined().get()), "slice");
        m.counter("dlion_server_joins_announced_total", "Restarted workers told their first round and donor (each one hand-over)",
            cb -> each(m, cb, c -> c.joinsAnnounced().get()), "slice");
        m.counter("dlion_server_workers_told_to_rejoin_total", "Workers a restarted server told to rejoin (they missed a result)",
            cb -> each(m, cb, c -> c.laggardsResynced().get()), "slice");
        m.counter("dlion_server_workers_sent_held_result_total", "Workers a slice's new server sent the dead server's last result again",
            cb -> each(m, cb, c -> c.laggardsServed().get()), "slice");
        m.counter("dlion_server_result_offers_refused_total", "Result offers the publication did not take (back pressure)",
            cb -> each(m, cb, c -> c.backPressure().get()), "slice");
        m.gauge("dlion_server_voters", "Voters of the last completed round",
            cb -> m.read(m.servers(), s -> cb.call(s.source.counters().votersLastRound().get(), s.label)), "slice");
        m.gauge("dlion_server_result_destinations", "Workers the results go to now",
            cb -> m.read(m.servers(), s -> cb.call(s.source.counters().resultDestinations().get(), s.label)), "slice");
        m.gauge("dlion_server_active_workers", "Workers the next round waits for (not dropped for a missed deadline)",
            cb -> m.read(m.servers(), s -> cb.call(s.source.activeWorkers().getAsInt(), s.label)), "slice");
        m.counter("dlion_server_frames_rejected_total", "Frames rejected and dropped, by reason",
            cb -> m.read(m.servers(), s -> {
                for (final RejectReason r : RejectReason.values()) {
                    cb.call(s.source.counters().rejected(r).get(), s.label, r.label());
                }
            }), "slice", "reason");
        m.counter("dlion_server_handover_frames_total", "Hand-over frames relayed from donors to rejoining workers",
            cb -> m.read(m.servers(), s -> cb.call(s.source.handOver().get()[0], s.label)), "slice");
        m.counter("dlion_server_handover_bytes_total", "Hand-over payload bytes relayed",
            cb -> m.read(m.servers(), s -> cb.call(s.source.handOver().get()[1], s.label)), "slice");
        m.counter("dlion_server_handover_frames_rejected_total", "Hand-over frames rejected",
            cb -> m.read(m.servers(), s -> cb.call(s.source.handOver().get()[2], s.label)), "slice");
    }
}
