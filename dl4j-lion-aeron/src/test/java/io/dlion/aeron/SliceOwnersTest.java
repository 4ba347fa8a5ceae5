package io.dlion.aeron;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import io.dlion.vote.VoterSet;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The failover rule: slice s is served by the first rank not dead in ring order from s. Every expected owner comes from a
 * plain scan of the dead set written here, and every worker's view, fed the same deaths in its own order, agrees.
 */
class SliceOwnersTest {
    private static final long SILENCE = TimeUnit.SECONDS.toNanos(5);

    @Test
    void shouldMoveEverySliceOfADeadRankToTheNextLiveRankAndServeItThere() {
        final List<Integer> served = new ArrayList<>();
        final SliceOwners rank3 = new SliceOwners(sharded(4), 3, SILENCE, (s, d) -> served.add(s));
        rank3.onServerLost(1);
        assertEquals(2, rank3.owner(1), "slice 1 moves to rank 2");
        assertEquals(List.of(), served, "rank 3 serves nothing yet");
        rank3.onServerLost(2); // rank 2 dies too: its own slice and the one it took over move to rank 3
        assertEquals(3, rank3.owner(1));
        assertEquals(3, rank3.owner(2));
        assertEquals(List.of(1, 2), served, "rank 3 serves both slices, in slice order");
        assertEquals(0, rank3.owner(0));
        assertEquals(Channels.udpVotes("h3", 40_002, 8), rank3.voteChannel(1), "slice 1's own port on rank 3's host, 2N streams per link");
    }

    @Test
    void shouldMarkEveryRankFoundDeadTogetherBeforeAnySliceMovesOrIsServed() {
        final List<Integer> served = new ArrayList<>();
        final List<VoterSet> without = new ArrayList<>();
        final SliceOwners rank0 = new SliceOwners(sharded(4), 0, SILENCE, (s, d) -> {
            served.add(s);
            without.add(d);
        });
        rank0.onServersLost(3, 1, 3); // ranks 3 and 1 at once (a rank may repeat)
        assertEquals(0, rank0.owner(3), "slice 3: ring 3, 0");
        assertEquals(2, rank0.owner(1), "slice 1: ring 1, 2");
        assertEquals(List.of(3), served);
        assertEquals(List.of(VoterSet.of(4, 1, 3)), without, "the new server of slice 3 waits for neither rank's vote");

        final List<VoterSet> oneByOne = new ArrayList<>();
        final SliceOwners view = new SliceOwners(sharded(4), 0, SILENCE, (s, d) -> oneByOne.add(d));
        view.onServerLost(3);
        view.onServerLost(1);
        assertEquals(List.of(VoterSet.of(4, 3)), oneByOne, "found one after the other, the first new server knew of one");

        final SliceOwners rank1 = new SliceOwners(sharded(4), 1, SILENCE, (s, d) -> { });
        rank1.onServersLost(2, 3);
        assertEquals(0, rank1.owner(2), "slice 2 skips rank 3, found dead with rank 2: ring 2, 3, 0");
        assertEquals(0, rank1.owner(3));
    }

    @Test
    void shouldWrapAroundTheRing() {
        final List<Integer> served = new ArrayList<>();
        final SliceOwners rank0 = new SliceOwners(sharded(3), 0, SILENCE, (s, d) -> served.add(s));
        rank0.onServerLost(2);
        assertEquals(0, rank0.owner(2));
        assertEquals(List.of(2), served);
        final List<Integer> last = new ArrayList<>();
        final SliceOwners view = new SliceOwners(sharded(3), 2, SILENCE, (s, d) -> last.add(s));
        view.onApplied(5, VoterSet.of(3, 0, 1)); // a round without this worker
        view.onServerLost(0);
        view.onServerLost(1);
        assertEquals(List.of(0, 1), last, "the last rank alive serves every slice, counted or not");
    }

    /** Random deaths, seen by every live worker in its own order: all views agree with the plain scan. */
    @Test
    void shouldAgreeOnEveryOwnerWhateverTheOrderTheDeathsAreSeenIn() {
        final SplittableRandom random = new SplittableRandom(7);
        for (int trial = 0; trial < 200; trial++) {
            final int n = 2 + random.nextInt(30);
            final List<Integer> ranks = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                ranks.add(r);
            }
            Collections.shuffle(ranks, new java.util.Random(random.nextLong()));
            final boolean[] dead = new boolean[n];
            final List<Integer> deaths = ranks.subList(0, 1 + random.nextInt(n - 1));
            for (final int d : deaths) {
                dead[d] = true;
            }
            final int[][] servedBy = new int[n][];
            for (int viewer = 0; viewer < n; viewer++) {
                if (dead[viewer]) {
                    continue;
                }
                final int me = viewer;
                final int[] serves = new int[n];
                java.util.Arrays.fill(serves, -1);
                final SliceOwners view = new SliceOwners(sharded(n), viewer, SILENCE, (s, d) -> serves[s] = me);
                final List<Integer> seen = new ArrayList<>(deaths);
                Collections.shuffle(seen, new java.util.Random(random.nextLong()));
                for (final int d : seen) {
                    // a death is seen through a slice the dead rank serves in this view
                    for (int s = 0; s < n; s++) {
                        if (view.owner(s) == d) {
                            view.onServerLost(s);
                            break;
                        }
                    }
                }
                for (int s = 0; s < n; s++) {
                    assertEquals(firstLive(dead, s), view.owner(s), "trial " + trial + ", viewer " + viewer + ", slice " + s);
                }
                servedBy[viewer] = serves;
            }
            for (int s = 0; s < n; s++) {
                final int owner = firstLive(dead, s);
                if (owner != s) {
                    assertEquals(owner, servedBy[owner][s], "trial " + trial + ": rank " + owner + " started serving slice " + s);
                }
                for (int viewer = 0; viewer < n; viewer++) {
                    if (servedBy[viewer] != null && viewer != owner) {
                        assertEquals(-1, servedBy[viewer][s], "trial " + trial + ": only rank " + owner + " serves slice " + s);
                    }
                }
            }
        }
    }

    @Test
    void shouldLetARestartedRankLookForTheServersAndServeNothing() {
        final List<Integer> served = new ArrayList<>();
        final SliceOwners rank1 = new SliceOwners(sharded(4), 1, SILENCE, (s, d) -> served.add(s)).joining();
        assertTrue(rank1.isJoining());
        assertEquals(2, rank1.owner(1), "its own slice moved when it died: first candidate rank 2");
        assertEquals(0, rank1.owner(0));
        rank1.probeNext(1);
        assertEquals(3, rank1.owner(1));
        rank1.probeNext(1);
        assertEquals(0, rank1.owner(1));
        rank1.probeNext(1);
        assertEquals(2, rank1.owner(1), "around the ring again, never itself");
        rank1.probeNext(1);
        rank1.onFound(1); // found at rank 3: rank 2 died before it
        assertTrue(rank1.isDead(2));
        assertFalse(rank1.isDead(3));
        rank1.onServerLost(1); // rank 3 dies later: slice 1 moves to rank 0, never to the restarted rank
        assertEquals(0, rank1.owner(1));
        assertEquals(List.of(), served);
    }

    /**
     * Rank 0 dies, its slice moves to rank 1; rank 0 restarts and is counted in rounds 20 and 21; rank 1 dies: slice 0 goes
     * back to rank 0 and slice 1 to rank 2, in the view of a worker that never died and in the restarted rank's own, which
     * serves its slice again. Expected owners by hand from the rule: the first rank from the slice counted in the last
     * two rounds applied and not found dead since.
     */
    @Test
    void shouldGiveARestartedRankCountedInTwoRoundsItsSliceBackAtTheNextMove() {
        final List<Integer> servedBy2 = new ArrayList<>();
        final SliceOwners rank2 = new SliceOwners(sharded(3), 2, SILENCE, (s, d) -> servedBy2.add(s));
        rank2.onApplied(9, VoterSet.all(3));
        rank2.onServerLost(0);
        assertEquals(1, rank2.owner(0));
        rank2.onApplied(10, VoterSet.of(3, 1, 2));
        assertTrue(rank2.isDead(0), "not counted in round 10");
        assertFalse(rank2.isCandidate(0));

        final List<Integer> servedBy0 = new ArrayList<>();
        final SliceOwners rank0 = new SliceOwners(sharded(3), 0, SILENCE, (s, d) -> servedBy0.add(s)).joining();
        rank0.onServedBy(0, 1); // its answer: rank 1 serves slice 0
        assertEquals(1, rank0.owner(0));
        for (final SliceOwners view : List.of(rank2, rank0)) {
            view.onApplied(19, VoterSet.of(3, 1, 2));
            view.onApplied(20, VoterSet.all(3));
            assertFalse(view.isCandidate(0), "counted in round 20 only");
            view.onApplied(21, VoterSet.all(3));
            assertTrue(view.isCandidate(0), "counted in rounds 20 and 21");
            view.onServerLost(0); // rank 1 dies while round 22 is awaited
            assertEquals(0, view.owner(0), "slice 0 goes home");
            assertEquals(2, view.owner(1));
            assertEquals(2, view.owner(2));
        }
        assertEquals(List.of(1), servedBy2);
        assertEquals(List.of(0), servedBy0, "the restarted rank serves its own slice again");

        rank2.onApplied(22, VoterSet.all(3)); // rank 1's dead process was counted in a round applied after its death was found
        assertFalse(rank2.isCandidate(1), "found dead while round 22 was awaited");
        rank2.onApplied(24, VoterSet.all(3)); // rank 1 restarted and was counted
        rank2.onApplied(25, VoterSet.all(3));
        assertTrue(rank2.isCandidate(1));
        rank2.onServerLost(1); // rank 2 serves slice 1 itself: its own server is not found dead
        assertEquals(2, rank2.owner(1));
    }

    /**
     * A chaos soak's split (4 workers): a restarted rank was counted in the round the others had just applied while it
     * was still applying that round, its first; then a slice server died. The old rule moved the slice to the restarted
     * rank, which was still joining and served nothing, so the others found it dead 5 s later and moved the slice on,
     * while the restarted rank, past its first round by then, served it too. Here: rank 0 died in round 99 (slice 0 moved
     * to rank 1), restarted and joined at round 100; rank 1 dies while round 101 is awaited. A rank counted in one round
     * only is no candidate: the survivors' views and the restarted rank's own all move slices 0 and 1 to rank 2, and only
     * rank 2 serves them.
     */
    @Test
    void shouldNotMoveASliceToARankCountedInOneRoundOnly() {
        final int n = 4;
        final List<Integer> servedBy2 = new ArrayList<>();
        final List<Integer> servedBy3 = new ArrayList<>();
        final List<Integer> servedBy0 = new ArrayList<>();
        final SliceOwners rank2 = new SliceOwners(sharded(n), 2, SILENCE, (s, d) -> servedBy2.add(s));
        final SliceOwners rank3 = new SliceOwners(sharded(n), 3, SILENCE, (s, d) -> servedBy3.add(s));
        for (final SliceOwners view : List.of(rank2, rank3)) {
            view.onApplied(98, VoterSet.all(n));
            view.onServerLost(0); // rank 0 dies while round 99 is awaited
            assertEquals(1, view.owner(0));
            view.onApplied(99, VoterSet.of(n, 1, 2, 3));
        }
        final SliceOwners rank0 = new SliceOwners(sharded(n), 0, SILENCE, (s, d) -> servedBy0.add(s)).joining();
        rank0.onServedBy(0, 1); // the server of slice 0 it found: rank 1, as its answer says
        for (final SliceOwners view : List.of(rank2, rank3, rank0)) {
            view.onApplied(100, VoterSet.all(n)); // rank 0's first round, in which the others count it
            assertFalse(view.isCandidate(0), "counted in round 100 only");
            view.onServerLost(0); // rank 1, serving slices 0 and 1, dies while round 101 is awaited
            assertEquals(2, view.owner(0), "slice 0 skips the restarted rank");
            assertEquals(2, view.owner(1));
            assertEquals(2, view.owner(2));
            assertEquals(3, view.owner(3));
        }
        assertEquals(List.of(0, 1), servedBy2, "rank 2 serves both slices");
        assertEquals(List.of(), servedBy3);
        assertEquals(List.of(), servedBy0, "the restarted rank serves nothing yet");
    }

    /** Any number of deaths over a job's life, each rank restarted and counted after it: the job never runs out of ranks. */
    @Test
    void shouldSurviveMoreDeathsThanRanksOverTheJobsLife() {
        final int n = 4;
        final SplittableRandom random = new SplittableRandom(11);
        final SliceOwners view = new SliceOwners(sharded(n), 3, SILENCE, (s, d) -> { });
        long round = 0;
        for (int death = 0; death < 40; death++) {
            view.onApplied(round++, VoterSet.all(n));
            final int slice = random.nextInt(n);
            if (view.owner(slice) == 3) {
                continue;
            }
            final boolean[] found = new boolean[n];
            final int lost = view.owner(slice);
            found[lost] = true;
            final int[] before = new int[n];
            for (int s = 0; s < n; s++) {
                before[s] = view.owner(s);
            }
            view.onServerLost(slice);
            for (int s = 0; s < n; s++) {
                assertEquals(before[s] == lost ? firstLive(found, s) : before[s], view.owner(s), "death " + death + ", slice " + s);
            }
            round += 2; // the dead rank restarts and is counted again two rounds later
        }
    }

    /**
     * A live process that lost a round and joins again votes no more until it joined, so the others do not count it: while
     * it joins it moves no slice to itself, and once it applied a round it follows the rule again.
     */
    @Test
    void shouldServeNothingWhileALiveProcessJoinsAgain() {
        final List<Integer> served = new ArrayList<>();
        final SliceOwners rank1 = new SliceOwners(sharded(3), 1, SILENCE, (s, d) -> served.add(s));
        rank1.onApplied(30, VoterSet.all(3)); // its own view: it was counted in the last round it applied
        rank1.rejoining();
        assertTrue(rank1.isJoining());
        rank1.onServerLost(0); // rank 0 dies while rank 1 joins again: slice 0 goes on along the ring, not to rank 1
        assertEquals(2, rank1.owner(0));
        assertEquals(List.of(), served);
        rank1.onApplied(40, VoterSet.of(3, 1, 2));
        assertFalse(rank1.isJoining());
        assertFalse(rank1.isCandidate(1), "counted in one round since it joined again");
        rank1.onApplied(41, VoterSet.of(3, 1, 2));
        assertTrue(rank1.isCandidate(1), "counted in two");
        assertFalse(rank1.isCandidate(0), "found dead while joining: a candidate only once later rounds count it");
        rank1.onServerLost(0); // rank 2 dies: slices 0 and 2 come to rank 1 (rank 0 is not counted), which serves them
        assertEquals(1, rank1.owner(0));
        assertEquals(1, rank1.owner(2));
        assertEquals(List.of(0, 2), served);
    }

    /**
     * The last round counted ranks 0 and 2 only (1 and 3 were late, or joining); both die: the slices go to the first rank
     * not found dead since that round began, so a job with live ranks never runs out of servers.
     */
    @Test
    void shouldFallBackToAnyRankNotFoundDeadWhenEveryRankCountedDied() {
        final List<Integer> served = new ArrayList<>();
        final List<VoterSet> toldDead = new ArrayList<>();
        final SliceOwners rank3 = new SliceOwners(sharded(4), 3, SILENCE, (s, d) -> {
            served.add(s);
            toldDead.add(d);
        });
        rank3.onApplied(10, VoterSet.of(4, 0, 2));
        rank3.onServerLost(0);
        assertEquals(2, rank3.owner(0), "the first rank counted in round 10 after rank 0");
        rank3.onServerLost(0); // rank 2 dies too
        assertEquals(1, rank3.owner(0), "no counted rank lives: rank 1, not found dead");
        assertEquals(3, rank3.owner(2));
        assertEquals(List.of(2), served);
        assertEquals(VoterSet.of(4, 0, 2), toldDead.get(0), "its new server does not wait for the two ranks found dead");
    }

    @Test
    void shouldRefuseWhatCannotWork() {
        assertThrows(IllegalArgumentException.class, () -> new SliceOwners(Topology.star("h", 1, 2), 0, SILENCE, (s, d) -> { }));
        assertThrows(IllegalArgumentException.class, () -> new SliceOwners(sharded(3), 3, SILENCE, (s, d) -> { }));
        assertThrows(IllegalArgumentException.class, () -> new SliceOwners(sharded(3), 0, TimeUnit.MILLISECONDS.toNanos(500), (s, d) -> { }));
    }

    private static int firstLive(final boolean[] dead, final int slice) {
        for (int i = 0; i < dead.length; i++) {
            if (!dead[(slice + i) % dead.length]) {
                return (slice + i) % dead.length;
            }
        }
        return -1;
    }

    private static Topology sharded(final int n) {
        final List<String> hosts = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            hosts.add("h" + r);
        }
        return Topology.sharded(hosts, 40_000);
    }
}
