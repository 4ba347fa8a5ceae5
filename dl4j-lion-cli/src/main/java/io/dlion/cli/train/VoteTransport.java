package io.dlion.cli.train;

import io.dlion.aeron.Topology;
import io.dlion.exchange.InProcessVoteHub;
import io.dlion.exchange.JoinNotice;
import io.dlion.job.HandOver;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.VoteRule;

/** Where the workers of one JVM send their votes: an in-process hub or a local Aeron job. */
public interface VoteTransport extends AutoCloseable {

    /** @return worker {@code id}'s exchange; may be called from the worker's own thread. */
    VoteExchange exchange(int id) throws Exception;

    /**
     * For the exchange of a worker that rejoins a running job: wait for the server's notice of its first round and donor.
     *
     * @param timeoutMillis how long to wait at most.
     * @return the notice.
     */
    default JoinNotice awaitJoin(final long timeoutMillis) throws Exception {
        throw new UnsupportedOperationException("this transport cannot rejoin a running job (use ./dlion worker)");
    }

    /** @return the hand-over this transport carries for its worker (a network one), or null: none. */
    default HandOver handOver() {
        return null;
    }

    /** Between rounds: read and drop results this worker will not vote in, so that waiting does not hold up the others. */
    default void pollIdle() {
        // nothing is buffered for a worker of an in-process job
    }

    /** @return a client of the media driver this transport runs on, for its metrics; null: none (in-process hub). */
    default io.aeron.Aeron aeron() {
        return null;
    }

    /**
     * Show what this transport runs in this process (its media driver; the servers of a job in one JVM) on the monitor.
     *
     * @param monitor the process's monitor.
     */
    default void monitor(final Monitor monitor) {
        monitor.driver(aeron());
    }

    @Override
    void close();

    static VoteTransport open(final TrainConfig.Transport kind, final Topology.Kind topology, final int workers, final VoteRule rule, final long params) {
        switch (kind) {
            case INPROC: {
                final InProcessVoteHub hub = new InProcessVoteHub(workers, rule, 60_000);
                return new VoteTransport() {
                    @Override
                    public VoteExchange exchange(final int id) {
                        return hub.exchange(id);
                    }

                    @Override
                    public void close() {
                        // the hub holds no resources
                    }
                };
            }
            default:
                return AeronTransport.open(kind == TrainConfig.Transport.AERON_UDP, topology, workers, rule, params);
        }
    }
}
