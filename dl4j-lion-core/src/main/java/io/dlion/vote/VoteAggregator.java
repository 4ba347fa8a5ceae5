package io.dlion.vote;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The aggregation a server runs over the workers' packed sign votes: per-parameter counts of +1 votes
 * as bit planes ({@link VoteRule#AVERAGE}) and the majority vote with ties ({@link VoteRule#MAJORITY}).
 * <p>
 * Every array is in the packed layout of {@link io.dlion.vote.RoundResult} (parameter {@code j} in word
 * {@code j >>> 6}); all word indices are absolute, so a chunk {@code [fromWord, toWord)} reads and writes
 * the same word indices of every array and chunks can be aggregated independently and in any order.
 * {@code votes[0 .. voterCount)} are the voters present in the round (any subset of the job's workers, in
 * any order). The inputs' padding bits (past the parameter count) must be zero; the outputs' padding bits
 * are then zero too, because a count of zero is neither a majority nor (for N &gt; 1) a tie.
 * <p>
 * Counting is bit-sliced: 64 parameters per {@code long}, the voters' words compressed by a tree of
 * carry-save (full) adders into {@code ceil(log2(N + 1))} count planes, over blocks of words that stay
 * in the L1 cache, with loops the JIT vectorizes. For N voters with k votes +1:
 * <pre>
 *   count:    k, as planes: bit b of k in planesOut[b]
 *   majority: sign = (k &gt; N / 2),  tie = (2k == N)     (integer division; ties only for even N)
 * </pre>
 * Thread-safe: no shared mutable state apart from per-thread scratch.
 */
public final class VoteAggregator {

    /** Largest number of voters (and of a job's workers) supported: counts take up to {@value #MAX_PLANES} planes. */
    public static final int MAX_VOTERS = 1024;

    /** Count planes of {@link #MAX_VOTERS} voters, {@code ceil(log2(MAX_VOTERS + 1))}. */
    public static final int MAX_PLANES = 11;

    private static final int BLOCK_WORDS = 1024;
    /**
     * Trees of the voter counts seen last, one slot per count modulo the slots: a tree of N voters holds O(N) steps, so a
     * cache of every count up to N would grow with N^2 (a round's chunks see the job's N or a few fewer voters).
     */
    private static final int TREE_SLOTS = 16;
    private static final AtomicReferenceArray<AdderTree> TREES = new AtomicReferenceArray<>(TREE_SLOTS);
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private VoteAggregator() {
    }

    /**
     * @param voterCount number of voters, 1 to {@link #MAX_VOTERS}.
     * @return the number of count planes, {@code ceil(log2(voterCount + 1))}.
     */
    public static int planes(final int voterCount) {
        checkVoters(voterCount);
        return 32 - Integer.numberOfLeadingZeros(voterCount);
    }

    /**
     * Count the +1 votes of every parameter in the words {@code [fromWord, toWord)}.
     *
     * @param votes      packed votes; {@code votes[v]} for {@code v < voterCount} are read.
     * @param voterCount number of voters present, 1 to {@link #MAX_VOTERS}.
     * @param fromWord   first word of the chunk.
     * @param toWord     word after the chunk's last.
     * @param planesOut  at least {@link #planes(int)} arrays; {@code planesOut[b][w]} receives bit b of the
     *                   counts of word w, for w in the chunk. Other words are not touched.
     */
    public static void count(final long[][] votes, final int voterCount, final int fromWord, final int toWord, final long[][] planesOut) {
        final int planes = planes(voterCount);
        checkArgs(votes, voterCount, fromWord, toWord);
        if (planesOut == null || planesOut.length < planes) {
            throw new IllegalArgumentException("planesOut must hold " + planes + " planes for " + voterCount + " voters");
        }
        checkEach("planesOut", planesOut, planes, toWord);
        final AdderTree tree = tree(voterCount);
        final Scratch scratch = SCRATCH.get();
        final long[][] regs = scratch.registers(tree.registerCount);
        for (int w0 = fromWord; w0 < toWord; w0 += BLOCK_WORDS) {
            final int len = Math.min(BLOCK_WORDS, toWord - w0);
            tree.run(votes, regs, w0, len);
            for (int b = 0; b < planes; b++) {
                tree.copyPlane(b, votes, regs, w0, len, planesOut[b], w0);
            }
        }
    }

    /**
     * Majority vote of every parameter in the words {@code [fromWord, toWord)}.
     *
     * @param votes      packed votes; {@code votes[v]} for {@code v < voterCount} are read.
     * @param voterCount number of voters present, 1 to {@link #MAX_VOTERS}.
     * @param fromWord   first word of the chunk.
     * @param toWord     word after the chunk's last.
     * @param signOut    receives the sign words of the chunk: bit 1 when more than half voted +1.
     * @param tieOut     receives the tie words (exactly half voted +1); may be null when {@code voterCount}
     *                   is odd, and is all zero then otherwise.
     * @return the number of tied parameters in the chunk.
     */
    public static int majority(final long[][] votes, final int voterCount, final int fromWord, final int toWord,
        final long[] signOut, final long[] tieOut) {
        final int planes = planes(voterCount);
        checkArgs(votes, voterCount, fromWord, toWord);
        checkLength("signOut", signOut, toWord);
        final boolean even = (voterCount & 1) == 0;
        if (tieOut == null && even) {
            throw new IllegalArgumentException("tieOut must not be null for an even number of voters: " + voterCount);
        }
        if (tieOut != null) {
            checkLength("tieOut", tieOut, toWord);
        }
        final int half = voterCount >>> 1;
        final AdderTree tree = tree(voterCount);
        final Scratch scratch = SCRATCH.get();
        final long[][] regs = scratch.registers(tree.registerCount);
        final long[] eq = scratch.eq;
        int ties = 0;
        for (int w0 = fromWord; w0 < toWord; w0 += BLOCK_WORDS) {
            final int len = Math.min(BLOCK_WORDS, toWord - w0);
            tree.run(votes, regs, w0, len);
            for (int i = 0; i < len; i++) {
                signOut[w0 + i] = 0L;
                eq[i] = -1L;
            }
            for (int b = planes - 1; b >= 0; b--) {
                final long[] plane = tree.planeArray(b, votes, regs);
                final int off = tree.planeOffset(b, w0);
                if (((half >>> b) & 1) != 0) {
                    for (int i = 0; i < len; i++) {
                        eq[i] &= plane[off + i];
                    }
                } else {
                    for (int i = 0; i < len; i++) {
                        final long p = plane[off + i];
                        signOut[w0 + i] |= eq[i] & p;
                        eq[i] &= ~p;
                    }
                }
            }
            if (tieOut != null) {
                if (even) {
                    for (int i = 0; i < len; i++) {
                        final long t = eq[i];
                        tieOut[w0 + i] = t;
                        ties += Long.bitCount(t);
                    }
                } else {
                    for (int i = 0; i < len; i++) {
                        tieOut[w0 + i] = 0L;
                    }
                }
            }
        }
        return ties;
    }

    private static void checkVoters(final int voterCount) {
        if (voterCount < 1 || voterCount > MAX_VOTERS) {
            throw new IllegalArgumentException("voterCount must be in [1, " + MAX_VOTERS + "], got " + voterCount);
        }
    }

    private static void checkArgs(final long[][] votes, final int voterCount, final int fromWord, final int toWord) {
        if (votes == null || votes.length < voterCount) {
            throw new IllegalArgumentException("votes must hold at least " + voterCount + " arrays");
        }
        if (fromWord < 0 || toWord < fromWord) {
            throw new IllegalArgumentException("bad word range [" + fromWord + ", " + toWord + ")");
        }
        checkEach("votes", votes, voterCount, toWord);
    }

    /** {@link #checkLength} of {@code arrays[0..count)}; an array's name is built only for the exception, not per chunk. */
    private static void checkEach(final String name, final long[][] arrays, final int count, final int toWord) {
        for (int i = 0; i < count; i++) {
            if (arrays[i] == null || arrays[i].length < toWord) {
                checkLength(name + '[' + i + ']', arrays[i], toWord);
            }
        }
    }

    private static void checkLength(final String name, final long[] array, final int toWord) {
        if (array == null || array.length < toWord) {
            throw new IllegalArgumentException(name + " must hold at least " + toWord + " words, got "
                + (array == null ? null : array.length));
        }
    }

    private static AdderTree tree(final int voterCount) {
        final int slot = voterCount % TREE_SLOTS;
        AdderTree tree = TREES.get(slot);
        if (tree == null || tree.voters != voterCount) {
            tree = AdderTree.build(voterCount);
            TREES.set(slot, tree);
        }
        return tree;
    }

    /** Per-thread scratch: block-sized registers of the adder tree. */
    private static final class Scratch {
        final long[] eq = new long[BLOCK_WORDS];
        long[][] regs = new long[0][];

        long[][] registers(final int count) {
            if (regs.length < count) {
                final long[][] grown = new long[count][];
                for (int i = 0; i < count; i++) {
                    grown[i] = i < regs.length ? regs[i] : new long[BLOCK_WORDS];
                }
                regs = grown;
            }
            return regs;
        }
    }

    /**
     * A Wallace tree of full and half adders for a fixed number of one-bit inputs, compiled once per N.
     * Operands are coded as ints: {@code >= 0} is a voter index (read at the absolute word), {@code < 0}
     * is register {@code -1 - code} (block-relative). Every step runs over a whole block of words.
     */
    private static final class AdderTree {
        private static final int FULL = 0;
        private static final int HALF = 1;
        private static final int XOR = 2;

        final int[] kind;
        final int[] a;
        final int[] b;
        final int[] c;
        final int[] sum;
        final int[] carry;
        final int[] planeOperand;
        final int registerCount;
        final int voters;

        private AdderTree(final int voters, final int[][] steps, final int[] planeOperand, final int registerCount) {
            this.voters = voters;
            final int n = steps.length;
            this.kind = new int[n];
            this.a = new int[n];
            this.b = new int[n];
            this.c = new int[n];
            this.sum = new int[n];
            this.carry = new int[n];
            for (int i = 0; i < n; i++) {
                kind[i] = steps[i][0];
                a[i] = steps[i][1];
                b[i] = steps[i][2];
                c[i] = steps[i][3];
                sum[i] = steps[i][4];
                carry[i] = steps[i][5];
            }
            this.planeOperand = planeOperand;
            this.registerCount = registerCount;
        }

        static AdderTree build(final int voters) {
            final int planes = 32 - Integer.numberOfLeadingZeros(voters);
            final List<List<Integer>> levels = new ArrayList<>();
            for (int i = 0; i < planes; i++) {
                levels.add(new ArrayList<>());
            }
            for (int v = 0; v < voters; v++) {
                levels.get(0).add(v);
            }
            final List<int[]> steps = new ArrayList<>();
            final List<Integer> free = new ArrayList<>();
            int registers = 0;
            final int[] planeOperand = new int[planes];
            for (int level = 0; level < planes; level++) {
                final List<Integer> words = levels.get(level);
                final boolean top = level == planes - 1;
                while (words.size() > 1) {
                    final int x = words.remove(0);
                    final int y = words.remove(0);
                    if (top) {
                        release(free, x);
                        release(free, y);
                        final int s = free.isEmpty() ? -1 - registers++ : free.remove(free.size() - 1);
                        steps.add(new int[] {XOR, x, y, 0, s, 0});
                        words.add(s);
                    } else if (words.size() >= 1) {
                        final int z = words.remove(0);
                        release(free, x);
                        release(free, y);
                        release(free, z);
                        final int s = free.isEmpty() ? -1 - registers++ : free.remove(free.size() - 1);
                        final int cy = free.isEmpty() ? -1 - registers++ : free.remove(free.size() - 1);
                        steps.add(new int[] {FULL, x, y, z, s, cy});
                        words.add(s);
                        levels.get(level + 1).add(cy);
                    } else {
                        release(free, x);
                        release(free, y);
                        final int s = free.isEmpty() ? -1 - registers++ : free.remove(free.size() - 1);
                        final int cy = free.isEmpty() ? -1 - registers++ : free.remove(free.size() - 1);
                        steps.add(new int[] {HALF, x, y, 0, s, cy});
                        words.add(s);
                        levels.get(level + 1).add(cy);
                    }
                }
                planeOperand[level] = words.get(0);
            }
            return new AdderTree(voters, steps.toArray(new int[0][]), planeOperand, registers);
        }

        private static void release(final List<Integer> free, final int operand) {
            if (operand < 0) {
                free.add(operand);
            }
        }

        void run(final long[][] votes, final long[][] regs, final int w0, final int len) {
            for (int i = 0; i < kind.length; i++) {
                final long[] x = array(a[i], votes, regs);
                final int xo = offset(a[i], w0);
                final long[] y = array(b[i], votes, regs);
                final int yo = offset(b[i], w0);
                final long[] s = regs[-1 - sum[i]];
                switch (kind[i]) {
                    case FULL: {
                        final long[] z = array(c[i], votes, regs);
                        final int zo = offset(c[i], w0);
                        final long[] cy = regs[-1 - carry[i]];
                        for (int k = 0; k < len; k++) {
                            final long p = x[xo + k];
                            final long q = y[yo + k];
                            final long r = z[zo + k];
                            final long pq = p ^ q;
                            s[k] = pq ^ r;
                            cy[k] = (p & q) | (pq & r);
                        }
                        break;
                    }
                    case HALF: {
                        final long[] cy = regs[-1 - carry[i]];
                        for (int k = 0; k < len; k++) {
                            final long p = x[xo + k];
                            final long q = y[yo + k];
                            s[k] = p ^ q;
                            cy[k] = p & q;
                        }
                        break;
                    }
                    default:
                        for (int k = 0; k < len; k++) {
                            s[k] = x[xo + k] ^ y[yo + k];
                        }
                        break;
                }
            }
        }

        long[] planeArray(final int plane, final long[][] votes, final long[][] regs) {
            return array(planeOperand[plane], votes, regs);
        }

        int planeOffset(final int plane, final int w0) {
            return offset(planeOperand[plane], w0);
        }

        void copyPlane(final int plane, final long[][] votes, final long[][] regs, final int w0, final int len,
            final long[] dst, final int dstOffset) {
            System.arraycopy(planeArray(plane, votes, regs), planeOffset(plane, w0), dst, dstOffset, len);
        }

        private static long[] array(final int operand, final long[][] votes, final long[][] regs) {
            return operand >= 0 ? votes[operand] : regs[-1 - operand];
        }

        private static int offset(final int operand, final int w0) {
            return operand >= 0 ? w0 : 0;
        }
    }
}
