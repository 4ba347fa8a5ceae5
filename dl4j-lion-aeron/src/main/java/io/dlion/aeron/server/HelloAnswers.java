package io.dlion.aeron.server;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.TimeUnit;

import io.aeron.ChannelUri;
import io.aeron.CommonContext;
import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.dlion.aeron.Channels;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.vote.VoterSet;

/**
 * What one slice's server owes a worker whose HELLO it accepted, besides membership: a place on the result broadcast and
 * an answer.
 * <ul>
 *   <li><b>Result destinations (manual multi-destination-cast).</b> When the result channel is a UDP publication with
 *       {@code control-mode=manual}, nobody receives results unless the server adds them: the worker's result endpoint,
 *       which its HELLO carries, is added as a destination once that HELLO was accepted, moved when the worker id says
 *       HELLO from another endpoint (a restarted worker), and removed when the worker's vote image goes away (its process
 *       closed or died). So a stranger's subscription never receives results and cannot hold the broadcast back.</li>
 *   <li><b>Answers.</b> Every accepted HELLO, repeats included, is answered with a HELLO_ACK ({@link #nextAnswer()}),
 *       which proves the server to the worker, on the transport the HELLO came by: a worker in the server's own process
 *       that said HELLO by IPC is answered, and sent everything, on the server's local publication, and has no network
 *       destination.</li>
 * </ul>
 * Not thread-safe: the server's agent thread only.
 */
final class HelloAnswers {
    /** How often the vote images of workers with a destination are checked. */
    static final long IMAGE_CHECK_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(100);

    private final ExclusivePublication publication;
    private final Subscription votes;
    private final ServerCounters counters;
    private final boolean manualDestinations;
    private final String[] destination;
    private final int[] destinationSession;
    private final long[] answerNonce;
    private final byte[] address = new byte[HelloFlyweight.RESULT_ADDRESS_CAPACITY];
    private final VoterSet answers;
    private long nextImageCheckNs;

    /**
     * @param workers     of the job.
     * @param publication the result publication; destinations are added to it when its channel is manual MDC.
     * @param votes       the vote subscription, whose images tell when a worker is gone.
     * @param counters    where answers and destinations are counted.
     */
    HelloAnswers(final int workers, final ExclusivePublication publication, final Subscription votes, final ServerCounters counters) {
        this.publication = publication;
        this.votes = votes;
        this.counters = counters;
        this.manualDestinations = isManualDestinations(publication.channel());
        this.answers = new VoterSet(workers);
        this.destination = new String[workers];
        this.destinationSession = new int[workers];
        this.answerNonce = new long[workers];
    }

    /**
     * @param channel a result channel.
     * @return true for a UDP publication with {@code control-mode=manual}: the server adds every worker's destination.
     */
    static boolean isManualDestinations(final String channel) {
        final ChannelUri uri = ChannelUri.parse(channel);
        return CommonContext.UDP_MEDIA.equals(uri.media())
            && CommonContext.MDC_CONTROL_MODE_MANUAL.equals(uri.get(CommonContext.MDC_CONTROL_MODE_PARAM_NAME));
    }

    /** @return true when results go only to the destinations added here, so a HELLO must carry its result endpoint. */
    boolean requiresEndpoint() {
        return manualDestinations;
    }

    /**
     * A HELLO was accepted: answer it and, with manual destinations, make sure results go to its endpoint.
     *
     * @param worker    the worker.
     * @param hello     its HELLO, wrapped.
     * @param sessionId the vote session it came on.
     * @param local     it came by IPC from this server's own process: the results reach the worker there, not at a
     *                  network destination (the server answers it on its local publication).
     */
    void onHello(final int worker, final HelloFlyweight hello, final int sessionId, final boolean local) {
        answerNonce[worker] = hello.nonce();
        answers.add(worker);
        if (local) {
            remove(worker);
            return;
        }
        if (!manualDestinations || hello.resultAddressLength() == 0) {
            return;
        }
        final String channel = destinationChannel(hello);
        destinationSession[worker] = sessionId;
        if (channel.equals(destination[worker])) {
            return;
        }
        remove(worker);
        if (!isDestination(channel)) {
            publication.asyncAddDestination(channel);
        }
        destination[worker] = channel;
        counters.resultDestinations().incrementPlain();
    }

    /**
     * Remove the destinations of workers whose vote image went away (checked every {@link #IMAGE_CHECK_INTERVAL_NS}).
     *
     * @param nowNs the time.
     * @return destinations removed.
     */
    int removeGoneWorkers(final long nowNs) {
        if (!manualDestinations || nowNs - nextImageCheckNs < 0) {
            return 0;
        }
        nextImageCheckNs = nowNs + IMAGE_CHECK_INTERVAL_NS;
        int removed = 0;
        for (int w = 0; w < destination.length; w++) {
            if (destination[w] != null && votes.imageBySessionId(destinationSession[w]) == null) {
                remove(w);
                removed++;
            }
        }
        return removed;
    }

    /** @return the lowest worker owed an answer, or -1. */
    int nextAnswer() {
        return answers.next(0);
    }

    /**
     * @param worker a worker owed an answer.
     * @return the nonce of its HELLO.
     */
    long answerNonce(final int worker) {
        return answerNonce[worker];
    }

    /**
     * @param worker whose answer went out.
     */
    void answered(final int worker) {
        answers.remove(worker);
        counters.helloAnswers().incrementPlain();
    }

    /**
     * @param worker a worker of the job.
     * @return the destination its results go to, or null.
     */
    String destination(final int worker) {
        return destination[worker];
    }

    private void remove(final int worker) {
        final String channel = destination[worker];
        if (channel == null) {
            return;
        }
        destination[worker] = null;
        counters.resultDestinations().decrementPlain();
        if (!isDestination(channel)) {
            publication.asyncRemoveDestination(channel);
        }
    }

    private boolean isDestination(final String channel) {
        for (final String d : destination) {
            if (channel.equals(d)) {
                return true;
            }
        }
        return false;
    }

    private String destinationChannel(final HelloFlyweight hello) {
        final int length = hello.resultAddressLength();
        final byte[] bytes = length == address.length ? address : new byte[length];
        hello.resultAddress(bytes);
        final String host;
        try {
            host = InetAddress.getByAddress(bytes).getHostAddress();
        } catch (final UnknownHostException ex) {
            throw new IllegalStateException("checked address length " + length, ex);
        }
        return Channels.udpDestination((length == 4 ? host : '[' + host + ']') + ':' + hello.resultPort());
    }
}
