package io.dlion.examples.train;

import io.dlion.exchange.InProcessVoteHub;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.VoteRule;

/** Where the workers of one JVM send their votes: an in-process hub or a local Aeron job. */
public interface VoteTransport extends AutoCloseable {

    /** @return worker {@code id}'s exchange; may be called from the worker's own thread. */
    VoteExchange exchange(int id) throws Exception;

    @Override
    void close();

    static VoteTransport open(final TrainConfig.Transport kind, final int workers, final VoteRule rule, final long params) {
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
                return AeronTransport.open(kind == TrainConfig.Transport.AERON_UDP, workers, rule, params);
        }
    }
}
