package io.dlion.aeron;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.protocol.DataHeaderFlyweight;

/**
 * Channel strings for the transport's deployments, so the choices are made once:
 * <ul>
 *   <li><b>IPC</b> (workers and server on one host): one {@code aeron:ipc} stream for votes (every worker an
 *       exclusive publication of it) and one for results that every worker subscribes to.</li>
 *   <li><b>UDP, results by manual multi-destination-cast</b> (several hosts): workers send votes by unicast to the
 *       server's endpoint; the server publishes results once on an MDC publication with manual control
 *       ({@code control-mode=manual}): the driver sends to the destinations the server added, and the server adds a
 *       worker's result endpoint (its subscription's address and ephemeral port, carried by its HELLO) only after it
 *       accepted that worker's HELLO. A process that subscribes on its own is never sent a frame and never counts in flow
 *       control. {@code fc=min} lets the slowest live worker pace the broadcast, with a receiver timeout of
 *       {@value #RESULT_RECEIVER_TIMEOUT} ({@code t:}) so a dead worker stops pacing it that long after its last status
 *       message. There is deliberately no group minimum ({@code g:/N}): with one, the broadcast stops for good once a
 *       worker dies (measured by {@code WorkerKillTest}); no result is sent before every expected worker has voted, so
 *       none is missed.</li>
 *   <li><b>UDP, results by unicast</b>: one publication per worker would have the server claim and copy each
 *       result N times; MDC does the fan-out in the driver from one log, which is why it is used.</li>
 * </ul>
 * Every publication carries {@code mtu=8k}: a 1000-word chunk is one 8064-byte frame, headers 0.8% of the body, and a
 * term length cut to its window ({@link #termLength(int)}). A UDP publication whose datagrams never leave this host
 * (to an address of its own: workers of one node, or a job on one machine) carries {@link #localMtu(int)} instead, up
 * to 64 KiB: the kernel's loopback takes datagrams that long, and the driver packs up to eight chunks in each, an
 * eighth of the system calls and wake-ups per round (measured in docs/benchmarks.md).
 *
 * <p><b>Links that never flood.</b> Aeron sends up to the receiver's window with no regard for a queue on the way, so
 * when several streams share one link (N workers' votes into the server's link; the N copies of the result leaving
 * it) their windows add up in that link's queue, and what overflows is lost and sent again (to every destination, for
 * a multi-destination-cast). Every UDP subscription built here therefore carries, in its channel:
 * <ul>
 *   <li>{@code rcv-wnd}: {@link #receiverWindow(int)}, the job's link budget ({@link Configuration#linkWindow()})
 *       divided by the streams that share the link, so that together they never hold more than the budget;</li>
 *   <li>{@code cc=cubic}: Aeron's receiver-side CUBIC congestion control, which shrinks a window on loss, for links
 *       whose queues are shorter than the budget;</li>
 *   <li>{@code so-sndbuf} of the budget and {@code so-rcvbuf} of twice the budget: the kernel charges a socket's
 *       buffer with its memory for each datagram, about twice an 8 KiB frame on a jumbo-frame link, and the buffer must
 *       hold the windows of every stream it takes while the driver's receiver thread waits for a core.</li>
 * </ul>
 * Measured in the lab of {@code scripts/netlab.sh} (docs/benchmarks.md): with Aeron's defaults, 8 workers on a
 * 100 Mbit/s link sent 3.2 times their payload; with these settings 1.01 times, with no drops. The publications ignore
 * the receiver settings, so one vote channel string serves the workers' publications and the server's subscription.
 */
public final class Channels {
    /** MTU of every channel built here but one that stays on this host ({@link #localMtu(int)}). */
    public static final String MTU = "8k";
    /** Flow-control receiver timeout of the result publication: how long a dead worker still paces the broadcast. */
    public static final String RESULT_RECEIVER_TIMEOUT = "1s";
    /** The smallest term Aeron takes. */
    public static final int MIN_TERM_LENGTH = 64 * 1024;
    /** Bytes of the MTU: the smallest receiver window, one frame. */
    public static final int MTU_BYTES = 8192;
    /**
     * The longest frame any stream of the job carries: the payload of one {@link #MTU} frame. A channel with a longer MTU
     * ({@link #localMtu(int)}) packs several frames into a datagram; its frames are no longer, so every frame fits every
     * path (a result relayed from IPC to UDP, a hand-over piece relayed to workers elsewhere).
     */
    public static final int MAX_FRAME_LENGTH = MTU_BYTES - DataHeaderFlyweight.HEADER_LENGTH;
    /** The longest UDP payload Aeron sends: the MTU of a channel that stays on this host, where its term allows. */
    public static final int LOCAL_MTU_MAX = 65_504;
    /** Aeron's receiver-side congestion control on every UDP subscription. */
    public static final String CONGESTION_CONTROL = "cubic";

    private Channels() {
    }

    /** @return the IPC channel for votes and results (Aeron's default IPC term, 64 MiB). */
    public static String ipc() {
        return "aeron:ipc?mtu=" + MTU;
    }

    /**
     * An IPC channel with the term length of {@link #termLength(int)}: a job of many workers in one driver holds a log of
     * three terms per stream (in the sharded topology N² vote streams), which Aeron's default IPC term of 64 MiB would make
     * gigabytes; cut by the same streams as a UDP window, the term is 64 KiB from 32 streams on.
     *
     * @param streams streams of the job that share the busiest link (as over UDP: {@link Topology#linkStreams(int)}).
     * @return the IPC channel.
     */
    public static String ipc(final int streams) {
        return ipc() + "|term-length=" + termLength(streams);
    }

    /**
     * The receiver window of a subscription whose link {@code streams} streams of the job share: the link budget
     * ({@link Configuration#linkWindow()}) divided by them, in whole frames, and at least one frame.
     *
     * @param streams streams of the job that share the receiver's link, at least 1.
     * @return the window in bytes, a multiple of {@link #MTU_BYTES}.
     */
    public static int receiverWindow(final int streams) {
        return receiverWindow(Configuration.linkWindow(), streams);
    }

    /**
     * @param linkWindow bytes the job lets be in flight into one link, at least {@link #MTU_BYTES}.
     * @param streams    streams of the job that share the receiver's link, at least 1.
     * @return the window in bytes, a multiple of {@link #MTU_BYTES}.
     */
    public static int receiverWindow(final int linkWindow, final int streams) {
        if (streams < 1) {
            throw new IllegalArgumentException("streams must be >= 1, got " + streams);
        }
        if (linkWindow < MTU_BYTES) {
            throw new IllegalArgumentException(Configuration.LINK_WINDOW_PROP_NAME + " must hold one frame (" + MTU_BYTES
                + " bytes), got " + linkWindow);
        }
        return Math.max(1, linkWindow / streams / MTU_BYTES) * MTU_BYTES;
    }

    /**
     * The term length of a UDP stream that {@code streams} streams of the job share a link with: the next power of two
     * of four receiver windows, at least Aeron's 64 KiB. A stream never has more than one window in flight, and the
     * publication may run half a term ahead of what was sent, so four windows keep the sender fed; a longer term would
     * only cost memory: a process holds three terms for each of its publications and images, so with the terms cut by
     * the same N as the windows, a process's log buffers stay about the same size as N grows (2 MiB terms at N = 1,
     * 128 KiB at N = 16, 64 KiB from N = 32).
     *
     * @param streams streams of the job that share the link, at least 1.
     * @return the term length in bytes, a power of two.
     */
    public static int termLength(final int streams) {
        final int fourWindows = 4 * receiverWindow(streams);
        return Math.max(MIN_TERM_LENGTH, Integer.highestOneBit(fourWindows - 1) << 1);
    }

    /**
     * The MTU of a UDP stream whose datagrams stay on this host: {@value #LOCAL_MTU_MAX} bytes, cut to an eighth of the
     * stream's term ({@link #termLength(int)}; Aeron's longest frame), which also keeps it within the receiver's window
     * ({@link #receiverWindow(int)}: the term is less than eight windows), as Aeron requires of a sender's MTU.
     *
     * @param streams streams of the job that share the link, at least 1.
     * @return the MTU in bytes, from 8 KiB at 32 or more streams (the default link window; 16 KiB at 16) to {@value #LOCAL_MTU_MAX}.
     */
    public static int localMtu(final int streams) {
        return Math.min(LOCAL_MTU_MAX, termLength(streams) / 8);
    }

    /**
     * Whether datagrams to {@code host} stay on this host: a loopback address, or an address of one of its interfaces
     * (where the kernel routes them over loopback, whatever that interface's own MTU). A name that does not resolve, and
     * the wildcard address, are not.
     *
     * @param host an address or a name.
     * @return true when {@code host} is this host.
     */
    public static boolean isLocal(final String host) {
        try {
            final InetAddress address = InetAddress.getByName(host);
            return address.isLoopbackAddress() || !address.isAnyLocalAddress() && NetworkInterface.getByInetAddress(address) != null;
        } catch (final UnknownHostException | SocketException ex) {
            return false;
        }
    }

    private static String mtu(final boolean local, final int streams) {
        return "|mtu=" + (local ? String.valueOf(localMtu(streams)) : MTU);
    }

    /** @return the channel parameters of a UDP subscription that {@code streams} streams of the job share a link with. */
    private static String receiver(final int streams) {
        final int linkWindow = Configuration.linkWindow();
        return "|cc=" + CONGESTION_CONTROL + "|rcv-wnd=" + receiverWindow(linkWindow, streams) + "|so-rcvbuf=" + 2 * linkWindow
            + "|so-sndbuf=" + linkWindow;
    }

    /**
     * @param host    the server's address.
     * @param port    the server's vote port.
     * @param streams the streams of the job that share the busiest link, at least 1: the workers in the star
     *                ({@link Topology#linkStreams(int)}).
     * @return the channel workers publish votes on and the server subscribes to, with the MTU of
     *     {@link #localMtu(int)} when {@code host} is this host ({@link #isLocal(String)}).
     */
    public static String udpVotes(final String host, final int port, final int streams) {
        return udpVotes(host, port, streams, isLocal(host));
    }

    /**
     * @param host    the server's address.
     * @param port    the server's vote port.
     * @param streams the streams of the job that share the busiest link, at least 1.
     * @param local   whether {@code host} is this host ({@link #isLocal(String)}, looked up by the caller): the MTU of
     *                {@link #localMtu(int)}.
     * @return the channel workers publish votes on and the server subscribes to.
     */
    public static String udpVotes(final String host, final int port, final int streams, final boolean local) {
        return "aeron:udp?endpoint=" + host + ':' + port + mtu(local, streams) + "|term-length=" + termLength(streams)
            + receiver(streams);
    }

    /**
     * @param host    the server's address.
     * @param port    the port the server sends results from (its workers' status messages come back to it).
     * @param streams the streams of the job that share the busiest link, at least 1: the workers in the star
     *                ({@link Topology#linkStreams(int)}).
     * @return the server's result publication: multi-destination-cast with manual control.
     */
    public static String udpResultsPublication(final String host, final int port, final int streams) {
        return udpResultsPublication(host, port, streams, false);
    }

    /**
     * @param host    the server's address.
     * @param port    the port the server sends results from.
     * @param streams the streams of the job that share the busiest link, at least 1.
     * @param local   whether every worker it will send to is on this host: the MTU of {@link #localMtu(int)}.
     * @return the server's result publication: multi-destination-cast with manual control.
     */
    public static String udpResultsPublication(final String host, final int port, final int streams, final boolean local) {
        return "aeron:udp?control=" + host + ':' + port + "|control-mode=manual|fc=min,t:" + RESULT_RECEIVER_TIMEOUT
            + mtu(local, streams) + "|term-length=" + termLength(streams) + "|so-sndbuf=" + Configuration.linkWindow();
    }

    /**
     * @param endpoint a result subscription's resolved endpoint, {@code host:port} ({@code [v6]:port} for IPv6).
     * @return the destination to add to the result publication so that the subscription receives its frames.
     */
    public static String udpDestination(final String endpoint) {
        return "aeron:udp?endpoint=" + endpoint;
    }

    /**
     * Add every subscription's endpoint to a manual multi-destination-cast publication, waiting (up to 10 s) for each to
     * resolve its ephemeral port: what the server does for a worker after its HELLO, for tools that use the channels
     * without a server.
     *
     * @param publication   with {@code control-mode=manual}.
     * @param subscriptions on {@link #udpResultsSubscription(String, int)} channels.
     */
    public static void addDestinations(final Publication publication, final List<Subscription> subscriptions) {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (final Subscription subscription : subscriptions) {
            String endpoint;
            while ((endpoint = subscription.resolvedEndpoint()) == null) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("subscription did not resolve its endpoint: " + subscription.channel());
                }
                Thread.onSpinWait();
            }
            publication.addDestination(udpDestination(endpoint));
        }
    }

    /**
     * @param localHost the worker's address the results arrive on (one the server can reach).
     * @param streams   the streams of the job that share the busiest link, at least 1: the workers in the star, where the
     *                  result leaves the server's link once for each ({@link Topology#linkStreams(int)}).
     * @return a worker's subscription to its server's results, on an ephemeral port of that address: the worker's HELLO
     *     tells the server the port the subscription resolved to.
     */
    public static String udpResultsSubscription(final String localHost, final int streams) {
        return "aeron:udp?endpoint=" + localHost + ":0" + receiver(streams);
    }

    /**
     * The same subscription channel with an Aeron tag, so that a second subscription of this process on another stream
     * (a joining worker's network hand-over) shares its endpoint and ephemeral port: the server sends to that one
     * endpoint, on every stream of its result channel, once the worker's HELLO named it.
     *
     * @param localHost the worker's address the results arrive on (one the server can reach).
     * @param streams   the streams of the job that share the busiest link ({@link #udpResultsSubscription(String, int)}).
     * @param tag       unique among the channels of the media driver, e.g. {@code aeron.nextCorrelationId()}.
     * @return a worker's result subscription channel; use the identical string for every subscription on that endpoint.
     */
    public static String udpResultsSubscription(final String localHost, final int streams, final long tag) {
        return udpResultsSubscription(localHost, streams) + "|tags=" + tag;
    }

    /**
     * @return a UDP port on 127.0.0.1 that was free a moment ago (the kernel's choice), for a job on one host.
     * @throws UncheckedIOException when no socket can be bound.
     */
    public static int freeUdpPort() {
        try (DatagramSocket socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            return socket.getLocalPort();
        } catch (final IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Consecutive free UDP ports: a slice's vote and control ports ({@link Topology}: two per slice, from a base port).
     *
     * @param address the address the ports must be free on ({@code 0.0.0.0} for every address of the host).
     * @param count   how many consecutive ports.
     * @return the first of {@code count} consecutive ports in [20000, 60000) that were all free a moment ago.
     * @throws IllegalStateException when 100 tries found none.
     */
    public static int freeUdpPorts(final InetAddress address, final int count) {
        for (int attempt = 0; attempt < 100; attempt++) {
            final int base = 20_000 + ThreadLocalRandom.current().nextInt(40_000 - count);
            if (allFree(address, base, count)) {
                return base;
            }
        }
        throw new IllegalStateException("no " + count + " consecutive free UDP ports found on " + address);
    }

    private static boolean allFree(final InetAddress address, final int base, final int count) {
        for (int port = base; port < base + count; port++) {
            try (DatagramSocket socket = new DatagramSocket(new InetSocketAddress(address, port))) {
                socket.getLocalPort();
            } catch (final IOException taken) {
                return false;
            }
        }
        return true;
    }
}
