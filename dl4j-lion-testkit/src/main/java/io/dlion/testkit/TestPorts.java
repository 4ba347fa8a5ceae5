package io.dlion.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/** Free UDP ports on 127.0.0.1 for tests. */
public final class TestPorts {
    private TestPorts() {
    }

    public static int freeUdpPort() {
        try (DatagramSocket socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            return socket.getLocalPort();
        } catch (final IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * @param count consecutive ports needed (a sharded job's slices: two each).
     * @return the first of {@code count} consecutive UDP ports on 127.0.0.1 that were all free just now.
     */
    public static int freeUdpPorts(final int count) {
        for (int attempt = 0; attempt < 100; attempt++) {
            final int base = 20_000 + (int)(Math.random() * 40_000);
            if (allFree(base, count)) {
                return base;
            }
        }
        throw new IllegalStateException("no " + count + " consecutive free UDP ports found");
    }

    private static boolean allFree(final int base, final int count) {
        for (int port = base; port < base + count; port++) {
            try (DatagramSocket socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))) {
                socket.getLocalPort();
            } catch (final IOException taken) {
                return false;
            }
        }
        return true;
    }
}
