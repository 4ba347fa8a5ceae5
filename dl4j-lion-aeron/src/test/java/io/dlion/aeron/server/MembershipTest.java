package io.dlion.aeron.server;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.RejectReason;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.HelloFlyweight;
import io.dlion.vote.VoterSet;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link Membership}'s decisions, fed real HELLO frames, with its counters on an embedded driver. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class MembershipTest {
    private static final byte[] SECRET = "dl4j-lion test secret, 32 bytes!".getBytes(StandardCharsets.US_ASCII);
    private static final int WORKERS = 3;
    private static final long PARAMS = 10_000;
    private static final long NOW_MS = 1_700_000_000_000L;
    private static final long SKEW_MS = 1_000;

    private final UnsafeBuffer frame = new UnsafeBuffer(new byte[HelloFlyweight.SIGNED_LENGTH]);
    private final HelloFlyweight hello = new HelloFlyweight();
    private final HelloCredentials credentials = new HelloCredentials(SECRET);
    private AeronRuntime runtime;
    private ServerCounters counters;

    @BeforeEach
    void setUp() {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
        counters = new ServerCounters(runtime.aeron(), 1, 0);
    }

    @AfterEach
    void tearDown() {
        CloseHelper.closeAll(counters, runtime);
    }

    @Test
    void shouldBindAWorkerToTheSessionOfItsLatestHello() {
        final Membership membership = membership(null);
        assertFalse(membership.isBound(1, 100));
        assertNull(hello(membership, 1, 0, 100, null, 0, -1, false));
        assertTrue(membership.isBound(1, 100));
        assertFalse(membership.isBound(1, 101));
        assertNull(hello(membership, 1, 0, 101, null, 0, -1, false), "a restarted worker");
        assertTrue(membership.isBound(1, 101));
        assertFalse(membership.isBound(1, 100), "the binding moved");
        assertEquals(0b010, membership.bound().word(0));
        assertEquals(2, counters.workersJoined().get());
    }

    @Test
    void shouldRefuseHellosWithoutValidFreshCredentialsWhenTheJobHasASecret() {
        final Membership membership = membership(SECRET);
        assertEquals(RejectReason.BAD_CREDENTIALS, hello(membership, 0, 0, 100, null, 0, -1, false), "no credentials");
        assertEquals(RejectReason.BAD_CREDENTIALS, hello(membership, 0, 0, 100, new HelloCredentials("another job's secret, 32 bytes!".getBytes(
            StandardCharsets.US_ASCII)), NOW_MS, -1, false), "another secret");
        assertEquals(RejectReason.BAD_CREDENTIALS, hello(membership, 0, 0, 100, credentials, NOW_MS - 2 * SKEW_MS, -1, false), "stale");
        assertNull(hello(membership, 0, 0, 100, credentials, NOW_MS, -1, false));
        assertEquals(RejectReason.REPLAYED_HELLO, replay(membership, 100), "a replay of the accepted HELLO on its own session");
        assertEquals(RejectReason.REPLAYED_HELLO, replay(membership, 300), "a copy of the accepted HELLO sent from another session");
        assertEquals(RejectReason.REPLAYED_HELLO, hello(membership, 0, 0, 200, credentials, NOW_MS - 1, -1, false), "older than the last");
        assertTrue(membership.isBound(0, 100));
        assertEquals(1, counters.workersJoined().get());
    }

    @Test
    void shouldRefuseAHelloNamingAnotherSessionThanTheOneItCameOn() {
        final Membership membership = membership(null);
        final int length = hello.wrap(frame, 0).encode(1, 0, 0, 1, 0, PARAMS, 100, null, 0, null, 0, 0);
        assertEquals(RejectReason.REPLAYED_HELLO, membership.onHello(hello, length, 1, 101, -1, false));
        assertFalse(membership.isBound(1, 101));
        assertEquals(0, counters.workersJoined().get());
    }

    @Test
    void shouldTakeARepeatedHelloAsNoChange() {
        final Membership membership = membership(SECRET);
        assertNull(hello(membership, 1, 3, 100, credentials, NOW_MS, -1, false));
        membership.drop(new VoterSet(3).word(0, 0b010));
        assertNull(hello(membership, 1, 3, 100, credentials, NOW_MS + 1, -1, false), "the same HELLO again, fresh");
        assertEquals(1, counters.workersJoined().get(), "a repeat is not a new HELLO");
        assertEquals(0b101, membership.active().word(0), "and does not undo a drop");
        assertNull(hello(membership, 1, 4, 100, credentials, NOW_MS + 2, -1, false), "a later round");
        assertEquals(1, counters.workersJoined().get(), "the same session: no new binding");
        assertEquals(0b111, membership.active().word(0), "a HELLO naming a later round makes the worker active again");
    }

    @Test
    void shouldRefuseHellosOfAnotherSliceOrVector() {
        final Membership membership = membership(null);
        final int length = hello.wrap(frame, 0).encode(1, 0, 0, 0, 1, PARAMS, 100, null, 0, null, 0, 0);
        assertEquals(RejectReason.WRONG_SLICE, membership.onHello(hello, length, 0, 100, -1, false));
        hello.wrap(frame, 0).encode(1, 0, 0, 0, 0, PARAMS + 1, 100, null, 0, null, 0, 0);
        assertEquals(RejectReason.PARAM_COUNT_MISMATCH, membership.onHello(hello, length, 0, 100, -1, false));
        hello.wrap(frame, 0).encode(1, 0, 0, 0, 0, PARAMS, 100, null, 0, null, 0, 0);
        assertEquals(RejectReason.BAD_LENGTH, membership.onHello(hello, length + 1, 0, 100, -1, false));
        frame.putByte(HelloFlyweight.RESULT_ADDRESS_LENGTH_OFFSET, (byte)5);
        assertEquals(RejectReason.MALFORMED, membership.onHello(hello, length, 0, 100, -1, false), "a result address of 5 bytes");
        assertEquals(0, membership.bound().word(0));
    }

    @Test
    void shouldGiveAJoiningWorkerTheRoundAfterNextAndTheLowestLiveDonor() {
        final Membership membership = membership(null);
        for (int w = 0; w < WORKERS; w++) {
            assertNull(hello(membership, w, 0, 100 + w, null, 0, -1, false));
        }
        assertNull(hello(membership, 0, HelloFlyweight.JOIN_ROUND, 200, null, 0, 4, true));
        assertEquals(0b001, membership.announced().word(0));
        assertEquals(0b110, membership.active().word(0), "not waited for until its first round");
        assertEquals(6, membership.joinRound(0), "highest round opened + 2");
        assertEquals(1, membership.joinDonor(0), "the lowest live worker");
        assertEquals(0, membership.nextNotice());
        membership.noticeSent(0);
        assertEquals(-1, membership.nextNotice());
        assertTrue(membership.isBeforeJoinRound(0, 5));
        assertFalse(membership.isBeforeJoinRound(0, 6));
        membership.onRoundOpen(5);
        assertEquals(0b110, membership.active().word(0));
        membership.onRoundOpen(6);
        assertEquals(0b111, membership.active().word(0), "waited for again from its first round");
        assertFalse(membership.isBeforeJoinRound(0, 5));
        assertEquals(1, counters.joinsAnnounced().get());
    }

    /**
     * Two workers restarted together join one after the other: the second is not given the first as its donor while the
     * first has not voted (it is still waiting for its own hand-over and has no parameters), only once it has. Before, the
     * second was named the first and the two waited for each other's hand-overs (found by the chaos soak).
     */
    @Test
    void shouldNotNameAJoiningWorkerThatHasNotVotedYetAsDonor() {
        final Membership membership = membership(null);
        for (int w = 0; w < WORKERS; w++) {
            assertNull(hello(membership, w, 0, 100 + w, null, 0, -1, false));
        }
        assertNull(hello(membership, 0, HelloFlyweight.JOIN_ROUND, 200, null, 0, 4, true));
        assertEquals(6, membership.joinRound(0));
        assertEquals(1, membership.joinDonor(0));
        membership.onRoundOpen(6); // worker 0's first round opens: it is waited for, but has not voted
        assertNull(hello(membership, 1, HelloFlyweight.JOIN_ROUND, 201, null, 0, 6, true));
        assertEquals(8, membership.joinRound(1));
        assertEquals(2, membership.joinDonor(1), "worker 0 has no parameters yet: worker 2, the lowest live worker that has");
        membership.onVote(0); // worker 0 voted in its first round: it holds the job's parameters
        assertNull(hello(membership, 1, HelloFlyweight.JOIN_ROUND, 202, null, 0, 6, true));
        assertEquals(0, membership.joinDonor(1), "a new join of worker 1: now worker 0 can hand over");
    }

    /**
     * A fresh server (a slice taken over) hears a restarted worker's join HELLO before any live worker's: it knows no
     * round, so it names none (no JOIN_NOTICE, no join round in its answers) until a live worker says HELLO; then the
     * join's round is the live workers' round + 2, as on the servers that have that round open. Before, it named round
     * 1 at once, waited a round deadline for the joining worker in a round before the one it joined at, and counted it
     * in that round on every slice but this one.
     */
    @Test
    void shouldAnnounceAJoinHeardBeforeAnyLiveWorkerOnceOneSaysHello() {
        final Membership membership = membership(null);
        assertNull(hello(membership, 2, HelloFlyweight.JOIN_ROUND, 100, null, 0, -1, false));
        assertEquals(0, membership.announced().word(0), "no round to name yet");
        assertEquals(-1, membership.nextNotice());
        assertEquals(-1, membership.answerJoinRound(2), "its answers name no join round");
        assertTrue(membership.isBeforeJoinRound(2, 1_000), "its votes do not count before its round is named");
        assertEquals(0, counters.joinsAnnounced().get());
        assertEquals(0b011, membership.active().word(0));

        assertNull(hello(membership, 0, 5, 101, null, 0, -1, false), "a live worker in round 5");
        assertEquals(0b100, membership.announced().word(0));
        assertEquals(2, membership.nextNotice());
        assertEquals(7, membership.joinRound(2), "round 5 opens here as on the other slices: 5 + 2");
        assertEquals(7, membership.answerJoinRound(2));
        assertEquals(0, membership.joinDonor(2));
        assertEquals(1, counters.joinsAnnounced().get());
        assertNull(hello(membership, 1, 5, 102, null, 0, -1, false));
        assertEquals(0, membership.announced().word(0), "announced once");
        assertEquals(7, membership.joinRound(2));
        membership.onRoundOpen(5);
        assertEquals(0b011, membership.active().word(0), "not waited for before its round");
        membership.onRoundOpen(7);
        assertEquals(0b111, membership.active().word(0));
    }

    /** A fresh server that live workers said HELLO to (round 5) names a join the round they vote in + 2, as the others. */
    @Test
    void shouldNameAJoinOnAFreshServerTheLiveWorkersRoundPlusTwo() {
        final Membership membership = membership(null);
        assertNull(hello(membership, 0, 5, 100, null, 0, -1, false));
        assertNull(hello(membership, 1, 5, 101, null, 0, -1, false));
        assertNull(hello(membership, 2, HelloFlyweight.JOIN_ROUND, 102, null, 0, -1, false));
        assertEquals(0b100, membership.announced().word(0));
        assertEquals(7, membership.joinRound(2));
        assertEquals(0, membership.joinDonor(2));
    }

    @Test
    void shouldTellLaggardsOfAFreshServerToRejoin() {
        final Membership membership = membership(null);
        assertNull(hello(membership, 0, 5, 100, null, 0, -1, false));
        assertNull(hello(membership, 1, 5, 101, null, 0, 5, false));
        assertEquals(0, membership.announced().word(0));
        assertNull(hello(membership, 2, 6, 102, null, 0, 5, false));
        assertEquals(0b011, membership.announced().word(0), "workers 0 and 1 missed round 5's result");
        assertEquals(6, membership.newestHelloRound());
        assertEquals(7, membership.joinRound(0), "round 5 opened: 5 + 2");
        assertEquals(2, membership.joinDonor(1), "the worker that has round 5's result");
        assertEquals(0b100, membership.active().word(0));
        assertEquals(2, counters.laggardsResynced().get());
        assertNull(hello(membership, 2, 6, 102, null, 0, 5, true));
        assertEquals(0, membership.announced().word(0), "no resync once a round completed");
    }

    /**
     * A server that took its slice over holds the old server's result of round 5, as its host received it in full: the
     * host names round 6, and a worker naming round 5 (its part of that result was cut off) is sent it again instead of
     * being told to rejoin; so is a second one, and the first again when it says HELLO on a new session.
     */
    @Test
    void shouldSendTheHeldResultToLaggardsNamingItsRoundInsteadOfTellingThemToRejoin() {
        final Membership membership = membership(null);
        membership.holdResult(5);
        assertNull(hello(membership, 0, 6, 100, null, 0, -1, false));
        assertFalse(membership.takeHeldResultDue(), "nobody lags");
        assertNull(hello(membership, 1, 5, 101, null, 0, 6, false));
        assertEquals(0, membership.announced().word(0), "worker 1 is not told to rejoin");
        assertTrue(membership.takeHeldResultDue());
        assertFalse(membership.takeHeldResultDue(), "due once");
        assertNull(hello(membership, 2, 5, 102, null, 0, 6, false));
        assertTrue(membership.takeHeldResultDue(), "a second laggard");
        assertNull(hello(membership, 1, 5, 103, null, 0, 6, false));
        assertTrue(membership.takeHeldResultDue(), "worker 1 again, on a new session");
        assertEquals(0b111, membership.active().word(0), "every worker is waited for in round 6");
        assertEquals(3, counters.laggardsServed().get());
        assertEquals(0, counters.laggardsResynced().get());
    }

    /**
     * The held result is not the one the laggards lack when the newest round named is not the held round + 1 (a worker
     * named round 7: it has round 6's result, which the host never received whole), or a laggard names an older round:
     * they are told to rejoin, the host with them. Nor is it once the server let it go (a later round's result went out).
     */
    @Test
    void shouldTellLaggardsToRejoinWhenTheHeldResultIsNotTheOneTheyLack() {
        final Membership membership = membership(null);
        membership.holdResult(5);
        assertNull(hello(membership, 0, 6, 100, null, 0, -1, false));
        assertNull(hello(membership, 1, 4, 101, null, 0, 6, false));
        assertEquals(0b010, membership.announced().word(0), "round 4 is older than the held round");
        assertNull(hello(membership, 2, 7, 102, null, 0, 6, false));
        assertEquals(0b001, membership.announced().word(0), "the host, at round 6, lags behind round 7 as well");
        assertFalse(membership.takeHeldResultDue());
        assertEquals(0, counters.laggardsServed().get());

        final Membership released = membership(null);
        released.holdResult(5);
        released.holdResult(-1);
        assertNull(hello(released, 0, 6, 100, null, 0, -1, false));
        assertNull(hello(released, 1, 5, 101, null, 0, 6, false));
        assertEquals(0b010, released.announced().word(0));
        assertFalse(released.takeHeldResultDue());
    }

    /**
     * A server that has completed rounds (up to round 9, round 10 open) hears a worker on a session new to it naming round 8:
     * round 8's result went out before that worker was a destination, so it is told to rejoin. The same session's repeat,
     * and a new session naming the open round, are not.
     */
    @Test
    void shouldTellAWorkerNewToAServerThatNamesARoundItWentOnFromToRejoin() {
        final Membership membership = membership(null);
        assertNull(hello(membership, 0, 10, 100, null, 0, 10, true));
        assertNull(hello(membership, 1, 10, 101, null, 0, 10, true));
        assertEquals(0, membership.announced().word(0), "sessions new to the server, naming the open round");
        assertNull(hello(membership, 2, 8, 102, null, 0, 10, true));
        assertEquals(0b100, membership.announced().word(0), "worker 2 missed rounds 8 and 9 of this server");
        assertEquals(12, membership.joinRound(2), "round 10 opened: 10 + 2");
        assertEquals(0, membership.joinDonor(2));
        assertEquals(1, counters.laggardsResynced().get());
        assertNull(hello(membership, 1, 10, 101, null, 1, 10, true));
        assertEquals(0, membership.announced().word(0), "a repeat of a bound session changes nothing");
    }

    @Test
    void shouldDropWorkersAtADeadlineAndWaitForThemAgainWhenTheyVoteInTime() {
        final Membership membership = membership(null);
        membership.drop(new VoterSet(3).word(0, 0b110));
        assertEquals(0b001, membership.active().word(0));
        assertEquals(2, counters.workersDropped().get());
        membership.onTimelyVote(2);
        membership.onTimelyVote(0);
        assertEquals(0b101, membership.active().word(0));
        assertEquals(1, counters.workersRejoined().get(), "only the dropped worker rejoined");
    }

    private Membership membership(final byte[] secret) {
        return new Membership(WORKERS, 0, PARAMS, secret, false, SKEW_MS, () -> NOW_MS, counters);
    }

    private RejectReason hello(final Membership membership, final int worker, final long round, final int sessionId,
        final HelloCredentials signer, final long timestampMs, final long latestRound, final boolean roundCompleted) {
        final int length = hello.wrap(frame, 0).encode(1, round, 0, worker, 0, PARAMS, sessionId, null, 0, signer, timestampMs ^ worker,
            timestampMs);
        return membership.onHello(hello.wrapForRead(frame, 0), length, worker, sessionId, latestRound, roundCompleted);
    }

    private RejectReason replay(final Membership membership, final int sessionId) {
        return membership.onHello(hello.wrapForRead(frame, 0), HelloFlyweight.SIGNED_LENGTH, 0, sessionId, -1, false);
    }
}
