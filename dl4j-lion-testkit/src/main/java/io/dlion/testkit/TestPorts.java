package io.dlion.testkit;

import java.net.InetAddress;

import io.dlion.aeron.Channels;

/** Free UDP ports on 127.0.0.1 for tests: {@link Channels#freeUdpPort()} and {@link Channels#freeUdpPorts}. */
public final class TestPorts {
    private TestPorts() {
    }

    /** @return a UDP port on 127.0.0.1 that was free a moment ago. */
    public static int freeUdpPort() {
        return Channels.freeUdpPort();
    }

    /**
     * @param count consecutive ports needed (a sharded job's slices: two each).
     * @return the first of {@code count} consecutive UDP ports on 127.0.0.1 that were all free just now.
     */
    public static int freeUdpPorts(final int count) {
        return Channels.freeUdpPorts(InetAddress.getLoopbackAddress(), count);
    }
}
