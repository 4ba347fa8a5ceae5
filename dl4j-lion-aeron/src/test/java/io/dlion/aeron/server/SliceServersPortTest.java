package io.dlion.aeron.server;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.aeron.exceptions.RegistrationException;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Channels;
import io.dlion.aeron.Topology;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A slice taken over on the dead rank's own host binds the port that rank's process held, which a killed process lets go
 * only once the kernel has torn it down: the take-over is pending and tried again until the port is free
 * ({@link SliceServers#PORT_HELD_NS}), or stands down when another rank on the host bound the port first and serves the
 * slice, while a rank's own slice at the start, whose port nobody else should hold, fails at once. The port is held by a plain
 * UDP socket of this test, as by a process being torn down.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SliceServersPortTest {
    private static final long RELEASE_MS = 700;

    private AeronRuntime runtime;
    private SliceServers servers;
    private DatagramSocket held;
    private Topology topology;

    @BeforeEach
    void setUp() throws IOException {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        topology = Topology.sharded(List.of("127.0.0.1", "127.0.0.1"), Channels.freeUdpPorts(InetAddress.getLoopbackAddress(), 4));
        servers = new SliceServers(new SliceServers.Context().aeron(runtime.aeron()).topology(topology).rank(0).jobId(3).workers(2)
            .paramCount(10_000).lingerNs(0));
    }

    @AfterEach
    void tearDown() {
        CloseHelper.closeAll(held, servers, runtime);
    }

    @Test
    void shouldTakeOverOnceTheDeadProcessLetsThePortGo() throws Exception {
        held = bound(topology.votePort(1));
        assertNull(servers.takeOver(1, null), "the port is held: the take-over is pending, not blocking the training thread");
        assertTrue(servers.isPending(1));
        final long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RELEASE_MS);
        while (System.nanoTime() - until < 0) {
            assertEquals(0, servers.retryPending(slice -> true), "nothing starts while the port is held");
            Thread.sleep(20);
        }
        assertTrue(servers.isPending(1) && servers.servers().isEmpty());
        held.close();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (servers.servers().isEmpty() && System.nanoTime() - deadline < 0) {
            servers.retryPending(slice -> true);
            Thread.sleep(20);
        }
        assertEquals(1, servers.servers().size(), "the take-over started once the port was let go");
        assertEquals(1, servers.servers().get(0).context().slice());
        assertFalse(servers.isPending(1));
    }

    @Test
    void shouldStandDownWhenAnotherRankOnThisHostServesTheSlice() throws Exception {
        held = bound(topology.votePort(1)); // the other rank's server, which bound the port first
        assertNull(servers.takeOver(1, null));
        Thread.sleep(SliceServers.PORT_RETRY_MS + 20);
        assertEquals(1, servers.retryPending(slice -> slice != 1), "the view says another rank serves slice 1: the take-over stands down");
        assertFalse(servers.isPending(1));
        assertTrue(servers.servers().isEmpty());
        held.close();
        Thread.sleep(SliceServers.PORT_RETRY_MS + 20);
        assertEquals(0, servers.retryPending(slice -> true), "a take-over that stood down is not tried again");
        assertTrue(servers.servers().isEmpty());
    }

    @Test
    void shouldFailAtOnceWhenItsOwnSlicesPortIsHeldAtTheStart() throws Exception {
        held = bound(topology.votePort(0));
        final long start = System.nanoTime();
        final RegistrationException e = assertThrows(RegistrationException.class, () -> servers.serve(0));
        assertTrue(SliceServers.isPortHeld(e), e.getMessage());
        assertTrue(System.nanoTime() - start < SliceServers.PORT_HELD_NS / 2, "no retry for a rank's own slice at the start");
        assertTrue(servers.servers().isEmpty());
    }

    private static DatagramSocket bound(final int port) throws SocketException {
        final DatagramSocket socket = new DatagramSocket(null);
        socket.setReuseAddress(false);
        socket.bind(new InetSocketAddress("0.0.0.0", port));
        return socket;
    }
}
