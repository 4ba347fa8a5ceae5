package io.dlion.aeron;

import io.aeron.AeronCounters;
import org.agrona.concurrent.status.CountersReader;

/**
 * What a media driver put on and took off the network, from its own system counters in the CnC file: every UDP
 * frame it sent and received, Aeron's headers, status messages, NAKs and retransmissions included. The exchange's
 * counters ({@code bytesUp}, {@code bytesDown}, the server's {@code bytesIn}, {@code bytesOut}) count each frame of
 * ours once; the difference is what the transport added, most of it retransmissions when a link's queue overflowed.
 * An embedded driver counts this process alone; a standalone driver counts every client process on its host.
 *
 * @param bytesSent          UDP bytes the driver sent.
 * @param bytesReceived      UDP bytes the driver received.
 * @param retransmittedBytes bytes it sent again because a receiver asked for them (a NAK).
 * @param retransmitsSent    retransmissions it sent.
 * @param naksSent           NAKs its receivers sent (frames this process lost).
 * @param naksReceived       NAKs its senders received (frames another process lost).
 */
public record DriverTraffic(long bytesSent, long bytesReceived, long retransmittedBytes, long retransmitsSent, long naksSent,
    long naksReceived) {

    /**
     * @param counters the counters of the driver, {@code aeron.countersReader()}.
     * @return the driver's counts now.
     */
    public static DriverTraffic read(final CountersReader counters) {
        return new DriverTraffic(counters.getCounterValue(AeronCounters.SYSTEM_COUNTER_ID_BYTES_SENT),
            counters.getCounterValue(AeronCounters.SYSTEM_COUNTER_ID_BYTES_RECEIVED),
            counters.getCounterValue(AeronCounters.SYSTEM_COUNTER_ID_RETRANSMITTED_BYTES),
            counters.getCounterValue(AeronCounters.SYSTEM_COUNTER_ID_RETRANSMITS_SENT),
            counters.getCounterValue(AeronCounters.SYSTEM_COUNTER_ID_NAK_MESSAGES_SENT),
            counters.getCounterValue(AeronCounters.SYSTEM_COUNTER_ID_NAK_MESSAGES_RECEIVED));
    }

    /** @return the counts as {@code key=value} pairs, for status lines. */
    @Override
    public String toString() {
        return "driverBytesSent=" + bytesSent + " driverBytesReceived=" + bytesReceived + " retransmittedBytes=" + retransmittedBytes
            + " retransmits=" + retransmitsSent + " naksSent=" + naksSent + " naksReceived=" + naksReceived;
    }
}
