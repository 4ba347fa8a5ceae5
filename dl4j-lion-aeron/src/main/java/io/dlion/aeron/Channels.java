package io.dlion.aeron;

/**
 * Channel strings for the transport's three deployments, so the choices are made once:
 * <ul>
 *   <li><b>IPC</b> (workers and server on one host): one {@code aeron:ipc} stream for votes (every worker an
 *       exclusive publication of it) and one for results that every worker subscribes to.</li>
 *   <li><b>UDP, results by multi-destination-cast</b> (the default for several hosts): workers send votes by
 *       unicast to the server's endpoint; the server publishes results once on an MDC publication with dynamic
 *       control ({@code control-mode=dynamic}), which the driver sends to every subscribed worker, with
 *       {@code fc=min} so the slowest live worker paces it, and a receiver timeout of {@value #RESULT_RECEIVER_TIMEOUT}
 *       ({@code t:}) so a dead worker stops pacing it that long after its last status message. There is deliberately
 *       no group minimum ({@code g:/N}): with one, the broadcast stops for good once a worker dies (measured by
 *       {@code WorkerKillTest}); no result is sent before every expected worker has voted, so none is missed.</li>
 *   <li><b>UDP, results by unicast</b>: one publication per worker would have the server claim and copy each
 *       result N times; MDC does the fan-out in the driver from one log, which is why it is the default.</li>
 * </ul>
 * Every channel carries {@code mtu=8k}: a 1000-word chunk is one 8064-byte frame, headers 0.8% of the body.
 */
public final class Channels {
    /** MTU used on every channel built here. */
    public static final String MTU = "8k";
    /** Flow-control receiver timeout of the result publication: how long a dead worker still paces the broadcast. */
    public static final String RESULT_RECEIVER_TIMEOUT = "1s";
    /** Term length of UDP channels: the publication window is half of it. */
    public static final String UDP_TERM_LENGTH = "16m";

    private Channels() {
    }

    /** @return the IPC channel for votes and results. */
    public static String ipc() {
        return "aeron:ipc?mtu=" + MTU;
    }

    /**
     * @param host the server's address.
     * @param port the server's vote port.
     * @return the channel workers publish votes on and the server subscribes to.
     */
    public static String udpVotes(final String host, final int port) {
        return "aeron:udp?endpoint=" + host + ':' + port + "|mtu=" + MTU + "|term-length=" + UDP_TERM_LENGTH;
    }

    /**
     * @param host    the server's address.
     * @param port    the server's control port for results.
     * @param workers the number of workers of the job (kept for source compatibility: the channel no longer waits for a
     *                group of that size, see the class comment).
     * @return the server's MDC result publication.
     */
    public static String udpResultsPublication(final String host, final int port, final int workers) {
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be >= 1, got " + workers);
        }
        return "aeron:udp?control=" + host + ':' + port + "|control-mode=dynamic|fc=min,t:" + RESULT_RECEIVER_TIMEOUT + "|mtu=" + MTU
            + "|term-length=" + UDP_TERM_LENGTH;
    }

    /**
     * @param serverHost  the server's address.
     * @param controlPort the server's control port for results.
     * @param localHost   the worker's address the results arrive on.
     * @return a worker's subscription to the MDC result publication.
     */
    public static String udpResultsSubscription(final String serverHost, final int controlPort, final String localHost) {
        return "aeron:udp?endpoint=" + localHost + ":0|control=" + serverHost + ':' + controlPort + "|control-mode=dynamic";
    }
}
