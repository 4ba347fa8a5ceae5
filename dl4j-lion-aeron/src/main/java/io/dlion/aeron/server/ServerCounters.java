package io.dlion.aeron.server;

import java.util.EnumMap;
import java.util.Map;

import io.aeron.Aeron;
import io.aeron.Counter;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.RejectReason;
import org.agrona.CloseHelper;

/**
 * The aggregation server's Aeron counters, labelled {@code dlion-server job=J slice=S: name}, readable live
 * with {@code AeronStat} while the job runs. Written by the server's
 * agent thread only.
 */
public final class ServerCounters implements AutoCloseable {
    private final Counter bytesIn;
    private final Counter bytesOut;
    private final Counter rounds;
    private final Counter chunksVoted;
    private final Counter votersLastRound;
    private final Counter ties;
    private final Counter workersJoined;
    private final Counter backPressure;
    private final Counter roundsAbandoned;
    private final Counter workersDropped;
    private final Counter workersRejoined;
    private final Counter joinsAnnounced;
    private final Counter laggardsResynced;
    private final Counter laggardsServed;
    private final Counter helloAnswers;
    private final Counter resultDestinations;
    private final Map<RejectReason, Counter> rejected = new EnumMap<>(RejectReason.class);

    ServerCounters(final Aeron aeron, final int jobId, final int slice) {
        final String prefix = "dlion-server job=" + jobId + " slice=" + slice + ": ";
        final int type = Configuration.SERVER_COUNTER_TYPE_ID;
        try {
            bytesIn = aeron.addCounter(type, prefix + "bytes in (votes, incl. headers)");
            bytesOut = aeron.addCounter(type, prefix + "bytes out (results, incl. headers)");
            rounds = aeron.addCounter(type, prefix + "rounds");
            chunksVoted = aeron.addCounter(type, prefix + "chunks voted");
            votersLastRound = aeron.addCounter(type, prefix + "voters last round");
            ties = aeron.addCounter(type, prefix + "tied params");
            workersJoined = aeron.addCounter(type, prefix + "workers joined (a HELLO bound a worker id to a new session)");
            backPressure = aeron.addCounter(type, prefix + "result offers not accepted");
            roundsAbandoned = aeron.addCounter(type, prefix + "rounds aborted (quorum lost at the deadline)");
            workersDropped = aeron.addCounter(type, prefix + "workers dropped (missed a round deadline)");
            workersRejoined = aeron.addCounter(type, prefix + "workers rejoined (on time again after a drop)");
            joinsAnnounced = aeron.addCounter(type, prefix + "joins announced (restarted workers given a round and a donor)");
            laggardsResynced = aeron.addCounter(type, prefix + "workers told to rejoin (a round's result lost in a server restart)");
            laggardsServed = aeron.addCounter(type, prefix + "workers sent the last result again (held by the host of a slice taken over)");
            helloAnswers = aeron.addCounter(type, prefix + "HELLO_ACKs sent (the server proving itself)");
            resultDestinations = aeron.addCounter(type, prefix + "result destinations (workers the results go to, manual MDC)");
            for (final RejectReason reason : RejectReason.values()) {
                rejected.put(reason, aeron.addCounter(type, prefix + "rejected " + reason.label()));
            }
        } catch (final RuntimeException ex) {
            close();
            throw ex;
        }
    }

    /** @return bytes of vote frames received, Aeron and message headers included. */
    public Counter bytesIn() {
        return bytesIn;
    }

    /** @return bytes of result frames published (once per frame, whatever the number of receivers). */
    public Counter bytesOut() {
        return bytesOut;
    }

    /** @return rounds completed (every result chunk published). */
    public Counter rounds() {
        return rounds;
    }

    /** @return chunks voted. */
    public Counter chunksVoted() {
        return chunksVoted;
    }

    /** @return number of voters in the last completed round. */
    public Counter votersLastRound() {
        return votersLastRound;
    }

    /** @return parameters whose majority vote was a tie, over all rounds. */
    public Counter ties() {
        return ties;
    }

    /** @return HELLOs that bound a worker id to a new session: a worker connecting, or restarted. */
    public Counter workersJoined() {
        return workersJoined;
    }

    /** @return result offers the publication did not accept (back pressure, admin action, not connected). */
    public Counter backPressure() {
        return backPressure;
    }

    /** @return rounds aborted at the deadline because fewer workers than the quorum had voted. */
    public Counter roundsAbandoned() {
        return roundsAbandoned;
    }

    /** @return times a worker was dropped from the workers a round waits for, for missing a round deadline. */
    public Counter workersDropped() {
        return workersDropped;
    }

    /** @return times a dropped worker's vote arrived in time for a round again, so rounds wait for it again. */
    public Counter workersRejoined() {
        return workersRejoined;
    }

    /** @return JOIN_NOTICEs sent: workers that (re)joined with HELLO(JOIN_ROUND), each told its first round and donor. */
    public Counter joinsAnnounced() {
        return joinsAnnounced;
    }

    /** @return workers a fresh server told to rejoin: they had not received the last round's result of the old server. */
    public Counter laggardsResynced() {
        return laggardsResynced;
    }

    /**
     * @return workers a server that took its slice over sent the old server's last result again, from the copy its host
     *     held, instead of telling them to rejoin: they had received part of it when the old server died.
     */
    public Counter laggardsServed() {
        return laggardsServed;
    }

    /** @return HELLO_ACKs sent: answers to accepted HELLOs, each proving the server to a worker. */
    public Counter helloAnswers() {
        return helloAnswers;
    }

    /** @return workers the result publication sends to now (manual multi-destination-cast; 0 for IPC). */
    public Counter resultDestinations() {
        return resultDestinations;
    }

    /**
     * @param reason of the rejection.
     * @return the counter of messages rejected for it.
     */
    public Counter rejected(final RejectReason reason) {
        return rejected.get(reason);
    }

    /** @return messages rejected for any reason. */
    public long rejectedTotal() {
        long total = 0;
        for (final Counter counter : rejected.values()) {
            total += counter.get();
        }
        return total;
    }

    @Override
    public void close() {
        CloseHelper.closeAll(bytesIn, bytesOut, rounds, chunksVoted, votersLastRound, ties, workersJoined, backPressure, roundsAbandoned,
            workersDropped, workersRejoined, joinsAnnounced, laggardsResynced, laggardsServed, helloAnswers, resultDestinations);
        CloseHelper.closeAll(rejected.values());
    }
}
