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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A slice taken over on the dead rank's own host binds the port that rank's process held, which a killed process lets go
 * only once the kernel has torn it down: the take-over tries again until the port is free ({@link SliceServers#PORT_HELD_NS}),
 * while a rank's own slice at the start, whose port nobody else should hold, fails at once. The port is held by a plain
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
        final Thread release = new Thread(() -> {
            try {
                Thread.sleep(RELEASE_MS);
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            held.close();
        });
        final long start = System.nanoTime();
        release.start();
        final AggregationServer server = servers.takeOver(1, null);
        final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        release.join();
        assertEquals(1, server.context().slice());
        assertTrue(tookMs >= RELEASE_MS - 50, "the take-over waited for the port: " + tookMs + " ms");
        assertEquals(1, servers.servers().size());
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
