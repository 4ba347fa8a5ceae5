package io.dlion.vote;

import java.util.Arrays;

/**
 * A set of worker ids in {@code [0, capacity)}: who voted in a round or a chunk. A fixed bitset of
 * {@code ceil(capacity / 64)} words, allocated once and reused round after round (nothing here allocates after
 * construction, except {@link #copy()} and {@link #toString()}).
 * <p>
 * Word {@code i} holds workers {@code 64 i .. 64 i + 63}, worker {@code w} in bit {@code w & 63} of word
 * {@code w >>> 6}; bits past the capacity are always zero. For a job of at most 64 workers word 0 is the whole set,
 * the voter mask of earlier versions.
 * <p>
 * Not thread-safe: one owner writes it, and hands it on only when it is done writing.
 */
public final class VoterSet {
    private final int capacity;
    private final long[] words;

    /** @param capacity the number of worker ids the set can hold, 1 to {@link VoteAggregator#MAX_VOTERS}. */
    public VoterSet(final int capacity) {
        if (capacity < 1 || capacity > VoteAggregator.MAX_VOTERS) {
            throw new IllegalArgumentException("capacity must be in [1, " + VoteAggregator.MAX_VOTERS + "], got " + capacity);
        }
        this.capacity = capacity;
        this.words = new long[wordsFor(capacity)];
    }

    /**
     * @param capacity worker ids the set can hold.
     * @return {@code ceil(capacity / 64)}, the words of a set of that capacity.
     */
    public static int wordsFor(final int capacity) {
        return (capacity + 63) >>> 6;
    }

    /**
     * @param capacity worker ids the set can hold.
     * @param workers  the members.
     * @return a new set of those members.
     */
    public static VoterSet of(final int capacity, final int... workers) {
        final VoterSet set = new VoterSet(capacity);
        for (final int w : workers) {
            set.add(w);
        }
        return set;
    }

    /**
     * @param capacity worker ids the set can hold.
     * @return a new set holding every worker in {@code [0, capacity)}.
     */
    public static VoterSet all(final int capacity) {
        final VoterSet set = new VoterSet(capacity);
        for (int w = 0; w < capacity; w++) {
            set.add(w);
        }
        return set;
    }

    /** @return the number of worker ids the set can hold. */
    public int capacity() {
        return capacity;
    }

    /** @return the number of 64-bit words of the set. */
    public int wordCount() {
        return words.length;
    }

    /**
     * @param index word index in {@code [0, wordCount())}.
     * @return the word: bit b set when worker {@code 64 index + b} is a member.
     */
    public long word(final int index) {
        return words[index];
    }

    /**
     * Replace one word (as read from the wire).
     *
     * @param index word index in {@code [0, wordCount())}.
     * @param word  the members {@code 64 index .. 64 index + 63}.
     * @return this for a fluent API.
     * @throws IllegalArgumentException when the word names a worker at or past the capacity.
     */
    public VoterSet word(final int index, final long word) {
        if ((word & ~validBits(index)) != 0) {
            throw new IllegalArgumentException("word " + index + " names workers past the capacity " + capacity + ": 0x"
                + Long.toHexString(word));
        }
        words[index] = word;
        return this;
    }

    /**
     * @param index word index in {@code [0, wordCount())}.
     * @return the bits of the word that stand for workers below the capacity.
     */
    public long validBits(final int index) {
        final int rest = capacity - (index << 6);
        return rest >= 64 ? -1L : (1L << rest) - 1;
    }

    /**
     * @param worker a worker id in {@code [0, capacity)}.
     * @return this for a fluent API.
     */
    public VoterSet add(final int worker) {
        check(worker);
        words[worker >>> 6] |= 1L << worker;
        return this;
    }

    /**
     * @param worker a worker id in {@code [0, capacity)}.
     * @return this for a fluent API.
     */
    public VoterSet remove(final int worker) {
        check(worker);
        words[worker >>> 6] &= ~(1L << worker);
        return this;
    }

    /**
     * @param worker any int.
     * @return true when the worker is a member (false for ids outside {@code [0, capacity)}).
     */
    public boolean contains(final int worker) {
        return worker >= 0 && worker < capacity && (words[worker >>> 6] & 1L << worker) != 0;
    }

    /** @return this, emptied, for a fluent API. */
    public VoterSet clear() {
        Arrays.fill(words, 0L);
        return this;
    }

    /**
     * @param other a set of the same capacity.
     * @return this, now equal to {@code other}, for a fluent API.
     */
    public VoterSet copyFrom(final VoterSet other) {
        checkSameCapacity(other);
        System.arraycopy(other.words, 0, words, 0, words.length);
        return this;
    }

    /**
     * @param other a set of the same capacity.
     * @return this, now the union, for a fluent API.
     */
    public VoterSet or(final VoterSet other) {
        checkSameCapacity(other);
        for (int i = 0; i < words.length; i++) {
            words[i] |= other.words[i];
        }
        return this;
    }

    /**
     * @param other a set of the same capacity.
     * @return this, now the intersection, for a fluent API.
     */
    public VoterSet and(final VoterSet other) {
        checkSameCapacity(other);
        for (int i = 0; i < words.length; i++) {
            words[i] &= other.words[i];
        }
        return this;
    }

    /**
     * @param other a set of the same capacity.
     * @return this, without the members of {@code other}, for a fluent API.
     */
    public VoterSet andNot(final VoterSet other) {
        checkSameCapacity(other);
        for (int i = 0; i < words.length; i++) {
            words[i] &= ~other.words[i];
        }
        return this;
    }

    /**
     * @param other a set of the same capacity.
     * @return true when every member of {@code other} is a member of this set.
     */
    public boolean containsAll(final VoterSet other) {
        checkSameCapacity(other);
        for (int i = 0; i < words.length; i++) {
            if ((other.words[i] & ~words[i]) != 0) {
                return false;
            }
        }
        return true;
    }

    /** @return the number of members. */
    public int count() {
        int count = 0;
        for (final long w : words) {
            count += Long.bitCount(w);
        }
        return count;
    }

    /** @return true when the set has no member. */
    public boolean isEmpty() {
        for (final long w : words) {
            if (w != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Iterate the members in increasing order: {@code for (int w = set.next(0); w >= 0; w = set.next(w + 1))}.
     *
     * @param from the first worker id to look at (0 or more).
     * @return the smallest member at or above {@code from}, or -1 when there is none.
     */
    public int next(final int from) {
        if (from >= capacity) {
            return -1;
        }
        int i = from >>> 6;
        long w = words[i] & (-1L << from);
        while (true) {
            if (w != 0) {
                return (i << 6) + Long.numberOfTrailingZeros(w);
            }
            if (++i == words.length) {
                return -1;
            }
            w = words[i];
        }
    }

    /** @return a new set with the same capacity and members. */
    public VoterSet copy() {
        return new VoterSet(capacity).copyFrom(this);
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof VoterSet && ((VoterSet)o).capacity == capacity && Arrays.equals(((VoterSet)o).words, words);
    }

    @Override
    public int hashCode() {
        return 31 * capacity + Arrays.hashCode(words);
    }

    /** @return the members, as {@code {0, 3, 64}}. */
    @Override
    public String toString() {
        final StringBuilder sb = new StringBuilder("{");
        for (int w = next(0); w >= 0; w = next(w + 1)) {
            if (sb.length() > 1) {
                sb.append(", ");
            }
            sb.append(w);
        }
        return sb.append('}').toString();
    }

    private void check(final int worker) {
        if (worker < 0 || worker >= capacity) {
            throw new IllegalArgumentException("worker must be in [0, " + capacity + "), got " + worker);
        }
    }

    private void checkSameCapacity(final VoterSet other) {
        if (other.capacity != capacity) {
            throw new IllegalArgumentException("voter sets of capacity " + capacity + " and " + other.capacity + " do not mix");
        }
    }
}
