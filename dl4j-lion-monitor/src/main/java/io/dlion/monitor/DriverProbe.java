package io.dlion.monitor;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.aeron.AeronCounters;
import io.dlion.aeron.DriverTraffic;
import org.agrona.concurrent.status.CountersReader;

/**
 * What this process's Aeron media driver put on and took off the network ({@link DriverTraffic}: UDP bytes, headers,
 * status messages and retransmissions included), and per link: the bytes each UDP publication sent (its sender
 * position) and each image received (its receiver position), labelled by channel, stream and session. The exchange's
 * own counters count every frame of ours once; the difference to the driver's is what the transport added.
 */
public final class DriverProbe extends DLionMetrics.Source {
    /** Where a stream counter's key holds the session id, the stream id and the channel (Aeron's {@code StreamCounter}). */
    private static final int SESSION_ID_OFFSET = 8;
    private static final int STREAM_ID_OFFSET = 12;
    private static final int CHANNEL_OFFSET = 16;

    private final CountersReader counters;

    DriverProbe(final DLionMetrics owner, final CountersReader counters) {
        super(owner);
        this.counters = counters;
    }

    /** @return the driver's counts now. */
    DriverTraffic traffic() {
        return DriverTraffic.read(counters);
    }

    /**
     * @param typeId {@link AeronCounters#DRIVER_SENDER_POSITION_TYPE_ID} or {@link AeronCounters#DRIVER_RECEIVER_POS_TYPE_ID}.
     * @return position per (channel, stream, session) of the UDP streams of that kind, summed over counters with the same labels.
     */
    Map<List<String>, Long> positions(final int typeId) {
        final Map<List<String>, Long> out = new LinkedHashMap<>();
        counters.forEach((counterId, type, key, label) -> {
            if (type == typeId) {
                final String channel = key.getStringAscii(CHANNEL_OFFSET);
                if (channel.startsWith("aeron:udp")) {
                    final List<String> labels = List.of(channel, Integer.toString(key.getInt(STREAM_ID_OFFSET)),
                        Integer.toString(key.getInt(SESSION_ID_OFFSET)));
                    out.merge(labels, counters.getCounterValue(counterId), Long::sum);
                }
            }
        });
        return out;
    }

    static void register(final DLionMetrics m) {
        m.counter("dlion_driver_sent_bytes_total", "UDP bytes this process's media driver sent (headers, retransmissions included)",
            cb -> m.read(m.drivers(), d -> cb.call(d.traffic().bytesSent())));
        m.counter("dlion_driver_received_bytes_total", "UDP bytes this process's media driver received",
            cb -> m.read(m.drivers(), d -> cb.call(d.traffic().bytesReceived())));
        m.counter("dlion_driver_retransmitted_bytes_total", "Bytes the driver sent again because a receiver lost them (NAK)",
            cb -> m.read(m.drivers(), d -> cb.call(d.traffic().retransmittedBytes())));
        m.counter("dlion_driver_retransmits_total", "Retransmissions the driver sent",
            cb -> m.read(m.drivers(), d -> cb.call(d.traffic().retransmitsSent())));
        m.counter("dlion_driver_naks_sent_total", "NAKs the driver's receivers sent (frames this process lost)",
            cb -> m.read(m.drivers(), d -> cb.call(d.traffic().naksSent())));
        m.counter("dlion_driver_naks_received_total", "NAKs the driver's senders received (frames another process lost)",
            cb -> m.read(m.drivers(), d -> cb.call(d.traffic().naksReceived())));
        m.counter("dlion_link_sent_bytes_total", "Bytes a UDP publication of this process sent (its sender position), per stream",
            cb -> m.read(m.drivers(), d -> d.positions(AeronCounters.DRIVER_SENDER_POSITION_TYPE_ID)
                .forEach((labels, value) -> cb.call(value, labels.toArray(new String[0])))), "channel", "stream", "session");
        m.counter("dlion_link_received_bytes_total", "Bytes an image of this process received (its receiver position), per stream",
            cb -> m.read(m.drivers(), d -> d.positions(AeronCounters.DRIVER_RECEIVER_POS_TYPE_ID)
                .forEach((labels, value) -> cb.call(value, labels.toArray(new String[0])))), "channel", "stream", "session");
    }
}
