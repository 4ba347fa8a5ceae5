package io.dlion.aeron;

import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.util.Collections;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.aeron.ChannelUri;
import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The UDP channels carry the link settings: a receiver window of the link budget divided by the streams that share
 * the link (whole 8 KiB frames, at least one), CUBIC congestion control and socket buffers of the budget; and a real
 * media driver takes them and runs the image with that window.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ChannelsTest {
    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void close() {
        for (int i = resources.size() - 1; i >= 0; i--) {
            CloseHelper.quietClose(resources.get(i));
        }
    }

    /** Expected windows worked out by hand: 524,288 / streams, rounded down to a multiple of 8,192, at least 8,192. */
    @ParameterizedTest
    @CsvSource({"1, 524288", "2, 262144", "3, 172032", "4, 131072", "5, 98304", "8, 65536", "16, 32768", "63, 8192", "64, 8192",
        "65, 8192", "1024, 8192"})
    void shouldCutTheLinkBudgetIntoWholeFramesPerStream(final int streams, final int expected) {
        assertEquals(expected, Channels.receiverWindow(524_288, streams));
        assertEquals(expected, Channels.receiverWindow(streams), "the default budget is 512 KiB");
    }

    /** Worked out by hand: the next power of two of four windows, at least 65,536. */
    @ParameterizedTest
    @CsvSource({"1, 2097152", "2, 1048576", "3, 1048576", "4, 524288", "8, 262144", "16, 131072", "32, 65536", "1024, 65536"})
    void shouldCutTheTermToFourWindows(final int streams, final int expected) {
        assertEquals(expected, Channels.termLength(streams));
        assertEquals(String.valueOf(expected), ChannelUri.parse(Channels.udpVotes("127.0.0.1", 40123, streams)).get("term-length"));
        assertEquals(String.valueOf(expected), ChannelUri.parse(Channels.udpResultsPublication("127.0.0.1", 40124, streams)).get("term-length"));
    }

    /** Worked out by hand: an eighth of the term above, at most 65,504 (Aeron's longest UDP payload), so at least 8 KiB. */
    @ParameterizedTest
    @CsvSource({"1, 65504", "4, 65504", "8, 32768", "16, 16384", "32, 8192", "1024, 8192"})
    void shouldGiveChannelsThatStayOnThisHostTheLongestMtuTheirTermAllows(final int streams, final int expected) {
        assertEquals(expected, Channels.localMtu(streams));
        assertTrue(expected <= Channels.receiverWindow(streams), "Aeron refuses an image whose sender's MTU exceeds its window");
        assertEquals(String.valueOf(expected), ChannelUri.parse(Channels.udpVotes("127.0.0.1", 40123, streams)).get("mtu"));
        assertEquals(String.valueOf(expected), ChannelUri.parse(Channels.udpResultsPublication("127.0.0.1", 40124, streams, true)).get("mtu"));
        assertEquals(Channels.MTU, ChannelUri.parse(Channels.udpResultsPublication("127.0.0.1", 40124, streams)).get("mtu"),
            "without knowing where the workers are: the jumbo-frame MTU");
        assertEquals(Channels.MTU, ChannelUri.parse(Channels.udpVotes("192.0.2.7", 40123, streams)).get("mtu"), "another host");
    }

    /** 192.0.2.0/24 is reserved for documentation (RFC 5737); {@code .invalid} never resolves (RFC 2606). */
    @Test
    void shouldTellAnAddressOfThisHostFromAnyOther() throws Exception {
        assertTrue(Channels.isLocal("127.0.0.1"));
        assertTrue(Channels.isLocal("localhost"));
        assertTrue(Channels.isLocal("127.0.0.2"), "all of 127/8 is loopback");
        assertFalse(Channels.isLocal("192.0.2.7"));
        assertFalse(Channels.isLocal("0.0.0.0"), "the wildcard is where a server binds, not where a datagram goes");
        assertFalse(Channels.isLocal("no-such-host.invalid"));
        for (final NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            for (final InetAddress address : Collections.list(nic.getInetAddresses())) {
                if (nic.isUp() && !address.isLinkLocalAddress()) {
                    assertTrue(Channels.isLocal(address.getHostAddress()), "an address of " + nic.getName() + ": " + address);
                }
            }
        }
    }

    @Test
    void shouldRefuseNoStreamsAndABudgetBelowOneFrame() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Channels.receiverWindow(0)).getMessage().contains("streams"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Channels.receiverWindow(4096, 1)).getMessage()
            .contains(Configuration.LINK_WINDOW_PROP_NAME));
    }

    @ParameterizedTest
    @CsvSource({"1, 524288", "8, 65536", "1024, 8192"})
    void shouldPutTheWindowCongestionControlAndBuffersInEverySubscriptionChannel(final int workers, final String window) {
        for (final String channel : List.of(Channels.udpVotes("127.0.0.1", 40123, workers), Channels.udpResultsSubscription("127.0.0.1", workers),
            Channels.udpResultsSubscription("127.0.0.1", workers, 7))) {
            final ChannelUri uri = ChannelUri.parse(channel);
            assertEquals("cubic", uri.get("cc"), channel);
            assertEquals(window, uri.get("rcv-wnd"), channel);
            assertEquals("1048576", uri.get("so-rcvbuf"), channel);
            assertEquals("524288", uri.get("so-sndbuf"), channel);
        }
        assertEquals("524288", ChannelUri.parse(Channels.udpResultsPublication("127.0.0.1", 40124, workers)).get("so-sndbuf"));
    }

    /** The driver refuses a window above the socket buffer or below the MTU: it takes both ends of the range. */
    @ParameterizedTest
    @CsvSource({"1, 524288", "16, 32768", "1024, 8192"})
    void shouldRunAnImageWithCubicAndTheWindowOnARealDriver(final int workers, final long window) throws Exception {
        final AeronRuntime runtime = AeronRuntime.launch(new AeronRuntime.Context());
        resources.add(runtime);
        final int port;
        try (DatagramSocket probe = new DatagramSocket(0)) {
            port = probe.getLocalPort();
        }
        final String channel = Channels.udpVotes("127.0.0.1", port, workers);
        final Subscription subscription = runtime.aeron().addSubscription(channel, 1);
        resources.add(subscription);
        final ExclusivePublication publication = runtime.aeron().addExclusivePublication(channel, 1);
        resources.add(publication);
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!publication.isConnected() || subscription.imageCount() == 0) {
            assertTrue(System.nanoTime() < deadline, "connected");
            Thread.sleep(1);
        }
        // connected, the publisher's limit may still wait for the driver's next duty cycle: offer until one goes out
        long position;
        while ((position = publication.offer(new UnsafeBuffer(new byte[64]))) < 0) {
            assertTrue(System.nanoTime() < deadline, "a frame goes out: " + position);
            Thread.sleep(1);
        }
        final long[] cubicWindow = {-1};
        runtime.aeron().countersReader().forEach((counterId, typeId, keyBuffer, label) -> {
            if (label.startsWith("rcv-cc-cubic-wnd")) {
                cubicWindow[0] = runtime.aeron().countersReader().getCounterValue(counterId);
            }
        });
        assertTrue(cubicWindow[0] > 0, "the image runs CUBIC congestion control");
        assertTrue(cubicWindow[0] <= window, "CUBIC's window " + cubicWindow[0] + " stays within the channel's " + window);
    }

    @Test
    void shouldGiveIpcStreamsTheTermsOfTheirBusiestLink() {
        assertEquals("aeron:ipc?mtu=8k|term-length=2097152", Channels.ipc(1), "one stream: four 512 KiB windows");
        assertEquals("aeron:ipc?mtu=8k|term-length=131072", Channels.ipc(16));
        assertEquals("aeron:ipc?mtu=8k|term-length=65536", Channels.ipc(130), "65 sharded workers: Aeron's smallest term");
    }
}
