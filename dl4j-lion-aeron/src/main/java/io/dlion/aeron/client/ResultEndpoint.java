package io.dlion.aeron.client;

import java.net.InetAddress;
import java.net.UnknownHostException;

import io.aeron.Subscription;

/**
 * The address and port a worker's result subscription resolved to, which its HELLO carries so that a UDP server can
 * add it as a destination of its manual multi-destination-cast. IPC subscriptions have none. One per {@link SliceLink},
 * whatever the payload.
 */
final class ResultEndpoint {
    private static final String IPC = "aeron:ipc";

    private final Subscription subscription;
    private boolean resolved;
    private byte[] address;
    private int port;

    ResultEndpoint(final Subscription subscription) {
        this.subscription = subscription;
    }

    /**
     * @param context named in the exception, e.g. the slice's endpoint.
     * @return true once known (at once for IPC); false while the driver has not yet bound the subscription's port.
     */
    boolean resolve(final Object context) {
        if (resolved) {
            return true;
        }
        if (subscription.channel().startsWith(IPC)) {
            resolved = true;
            return true;
        }
        final String endpoint = subscription.resolvedEndpoint();
        if (endpoint == null) {
            return false;
        }
        final int colon = endpoint.lastIndexOf(':');
        final String host = endpoint.charAt(0) == '[' ? endpoint.substring(1, colon - 1) : endpoint.substring(0, colon);
        try {
            address = InetAddress.getByName(host).getAddress();
        } catch (final UnknownHostException ex) {
            throw new IllegalStateException("result subscription resolved to an unknown address " + endpoint + ": " + context, ex);
        }
        port = Integer.parseInt(endpoint.substring(colon + 1));
        resolved = true;
        return true;
    }

    boolean isResolved() {
        return resolved;
    }

    /** @return the address's bytes (IPv4 or IPv6), or null for IPC or before {@link #resolve}. */
    byte[] address() {
        return address;
    }

    /** @return the port, or 0 for IPC or before {@link #resolve}. */
    int port() {
        return port;
    }
}
