package io.dlion.vote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.BitSet;
import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class VoterSetTest {

    @ParameterizedTest
    @ValueSource(ints = {1, 63, 64, 65, 128, 255, 256, 1024})
    void shouldHoldTheSameMembersAsJavaBitSet(final int capacity) {
        final Random random = new Random(capacity);
        final VoterSet set = new VoterSet(capacity);
        final BitSet reference = new BitSet();
        for (int i = 0; i < 4 * capacity; i++) {
            final int w = random.nextInt(capacity);
            if (random.nextBoolean()) {
                set.add(w);
                reference.set(w);
            } else {
                set.remove(w);
                reference.clear(w);
            }
        }
        assertEquals(reference.cardinality(), set.count());
        assertEquals((capacity + 63) / 64, set.wordCount());
        for (int w = 0; w < capacity; w++) {
            assertEquals(reference.get(w), set.contains(w), "worker " + w);
        }
        int seen = 0;
        for (int w = set.next(0); w >= 0; w = set.next(w + 1)) {
            assertEquals(reference.nextSetBit(seen), w);
            seen = w + 1;
        }
        final long[] words = reference.toLongArray();
        for (int i = 0; i < set.wordCount(); i++) {
            assertEquals(i < words.length ? words[i] : 0L, set.word(i), "word " + i);
        }
        assertFalse(set.contains(-1));
        assertFalse(set.contains(capacity));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 64, 65, 1024})
    void shouldCombineSetsOfTheSameCapacity(final int capacity) {
        final VoterSet all = VoterSet.all(capacity);
        final VoterSet last = VoterSet.of(capacity, capacity - 1);
        assertEquals(capacity, all.count());
        assertTrue(all.containsAll(last));
        assertFalse(last.containsAll(all) && capacity > 1);
        final VoterSet rest = all.copy().andNot(last);
        assertEquals(capacity - 1, rest.count());
        assertFalse(rest.contains(capacity - 1));
        assertEquals(all, rest.or(last));
        assertTrue(new VoterSet(capacity).isEmpty());
        assertEquals(all, new VoterSet(capacity).copyFrom(all));
        assertTrue(all.clear().isEmpty());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 65, 1024})
    void shouldRefuseWorkersAndWordsPastTheCapacity(final int capacity) {
        final VoterSet set = new VoterSet(capacity);
        assertThrows(IllegalArgumentException.class, () -> set.add(capacity));
        assertThrows(IllegalArgumentException.class, () -> set.add(-1));
        final int last = set.wordCount() - 1;
        final int used = capacity - 64 * last;
        if (used < 64) {
            assertThrows(IllegalArgumentException.class, () -> set.word(last, 1L << used));
        }
        set.word(last, used == 64 ? -1L : (1L << used) - 1);
        assertEquals(used, set.count());
        assertThrows(IllegalArgumentException.class, () -> new VoterSet(0));
        assertThrows(IllegalArgumentException.class, () -> new VoterSet(VoteAggregator.MAX_VOTERS + 1));
        assertThrows(IllegalArgumentException.class, () -> set.or(new VoterSet(capacity == 1 ? 2 : 1)));
    }
}
