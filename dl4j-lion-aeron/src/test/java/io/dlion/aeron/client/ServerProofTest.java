package io.dlion.aeron.client;

import java.util.ArrayList;
import java.util.List;

import io.dlion.aeron.wire.HelloAckFlyweight;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The state machine that proves a slice's server, on a clock the test sets: when a HELLO is due, which answer proves a
 * session, and what a move does. The expected times are the documented schedule worked out by hand: a HELLO at once,
 * then gaps of 20, 40, 80, 160 ms (the 10 ms interval doubled at every HELLO) and 200 ms from then on; once proven, a
 * HELLO only after 1 s of the server's silence while a result is awaited.
 */
class ServerProofTest {
    private static final long MS = 1_000_000L;
    private static final int WORKER = 2;
    private static final int WORKERS = 4;
    private static final long PARAMS = 640;
    private static final int SESSION = 5;

    /** No subscription and no counters: the paths tested here refuse no image and count nothing. */
    private final ServerProof proof = new ServerProof(null, null, WORKER, WORKERS, PARAMS, 0);

    @Test
    void shouldSayHelloAtOnceThenAtDoublingIntervalsUpTo200MsUntilProven() {
        assertEquals(List.of(0L, 20L, 60L, 140L, 300L, 500L, 700L, 900L), hellosUntil(0, 1000, false));
        assertFalse(proof.isProven());
    }

    @Test
    void shouldBelieveTheSessionThatAnswersOneOfItsNoncesAndGreetItAgainOnlyAfterASecondOfSilence() {
        proof.helloSent(77, 0);
        proof.helloSent(78, 20 * MS);
        assertEquals(ServerProof.Answer.PROVEN, proof.onHelloAck(ack(WORKER, 77, SESSION), HelloAckFlyweight.LENGTH, SESSION, null, 23 * MS));
        assertTrue(proof.isProven());
        assertTrue(proof.isServer(SESSION));
        assertFalse(proof.isServer(SESSION + 1));
        assertEquals(List.of(1023L, 2023L), hellosUntil(24, 2500, true), "awaiting a result: after 1 s of silence, every second");
        assertEquals(List.of(), hellosUntil(2501, 6000, false), "between rounds the proven server is not greeted");
    }

    @Test
    void shouldIgnoreAnAnswerToAnotherWorker() {
        proof.helloSent(77, 0);
        assertEquals(ServerProof.Answer.IGNORED, proof.onHelloAck(ack(WORKER + 1, 77, SESSION), HelloAckFlyweight.LENGTH, SESSION, null, MS));
        assertFalse(proof.isProven());
    }

    @Test
    void shouldBeUnprovenAfterTheSliceMovedAndSayHelloAtOnceAtTheFirstInterval() {
        proof.helloSent(77, 0);
        proof.onHelloAck(ack(WORKER, 77, SESSION), HelloAckFlyweight.LENGTH, SESSION, null, MS);
        proof.serverMoved(5000 * MS, ServerProof.NEVER_HEARD);
        assertFalse(proof.isProven());
        assertFalse(proof.isServer(SESSION));
        assertEquals(List.of(5000L, 5020L, 5060L), hellosUntil(5000, 5100, true));
    }

    @Test
    void shouldCountAMovedServersSilenceFromWhenItsRankWasLastHeardOrFromTheMove() {
        assertEquals(ServerProof.NEVER_HEARD, proof.heardNs(), "nothing heard before a server is proven");
        proof.helloSent(77, 0);
        proof.onHelloAck(ack(WORKER, 77, SESSION), HelloAckFlyweight.LENGTH, SESSION, null, MS);
        assertEquals(MS, proof.heardNs(), "a proven server: heard at its answer");
        proof.serverHeard(2000 * MS);
        assertEquals(2000 * MS, proof.heardNs(), "and at its last frame, or the round's start");

        proof.serverMoved(9000 * MS, ServerProof.NEVER_HEARD);
        assertFalse(proof.silentFor(13_999 * MS, 5000 * MS), "never heard: from the move");
        assertTrue(proof.silentFor(14_000 * MS, 5000 * MS));

        proof.serverMoved(9000 * MS, 6000 * MS);
        assertFalse(proof.silentFor(10_999 * MS, 5000 * MS), "heard 3 s before the move: silent since then");
        assertTrue(proof.silentFor(11_000 * MS, 5000 * MS));

        proof.serverMoved(9000 * MS, 9500 * MS);
        assertFalse(proof.silentFor(13_999 * MS, 5000 * MS), "a later time than now counts from now");
        assertTrue(proof.silentFor(14_000 * MS, 5000 * MS));
        assertEquals(ServerProof.NEVER_HEARD, proof.heardNs(), "moved: unproven again");
    }

    /** Every millisecond from {@code fromMs} to {@code toMs}: a HELLO when one is due, its time in ms. */
    private List<Long> hellosUntil(final long fromMs, final long toMs, final boolean awaiting) {
        final List<Long> sent = new ArrayList<>();
        for (long t = fromMs; t <= toMs; t++) {
            if (proof.helloDue(t * MS, awaiting)) {
                proof.helloSent(1000 + t, t * MS);
                sent.add(t);
            }
        }
        return sent;
    }

    private static HelloAckFlyweight ack(final int worker, final long nonce, final int session) {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[HelloAckFlyweight.LENGTH]);
        final HelloAckFlyweight ack = new HelloAckFlyweight().wrap(buffer, 0);
        ack.encode(1, HelloAckFlyweight.NO_JOIN, 0, JoinNoticeFlyweight.NO_DONOR, worker, 0, PARAMS, nonce, session, null);
        return new HelloAckFlyweight().wrapForRead(buffer, 0);
    }
}
