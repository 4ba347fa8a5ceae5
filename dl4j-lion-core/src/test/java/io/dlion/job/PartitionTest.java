package io.dlion.job;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;

class PartitionTest {
    private static final int CLASSES = 10;

    /** 2000 examples, class proportions uneven (class c has weight c + 1), seeded. */
    private static int[] labels() {
        final Random r = new Random(5);
        final int[] l = new int[2000];
        for (int i = 0; i < l.length; i++) {
            final int pick = r.nextInt(55);
            int c = 0;
            for (int acc = 1; pick >= acc; acc += c + 2) {
                c++;
            }
            l[i] = c;
        }
        return l;
    }

    private static int[] classTotals(final int[] labels) {
        final int[] t = new int[CLASSES];
        for (final int l : labels) {
            t[l]++;
        }
        return t;
    }

    /** Every example in exactly one shard. */
    private static void assertDisjointCover(final int[][] shards, final int total) {
        assertDisjoint(shards, total, true);
    }

    /** Every example in at most one shard (in exactly one when {@code cover}). */
    private static void assertDisjoint(final int[][] shards, final int total, final boolean cover) {
        final int[] seen = new int[total];
        for (final int[] s : shards) {
            for (final int i : s) {
                seen[i]++;
            }
        }
        for (int i = 0; i < total; i++) {
            assertTrue(seen[i] == 1 || !cover && seen[i] == 0, "example " + i + " in " + seen[i] + " shards");
        }
    }

    @Test
    void shouldSplitIidAsTodayRoundRobin() {
        final int[] labels = labels();
        for (final int n : new int[] {1, 3, 8}) {
            final int[][] shards = Partition.parse("iid", "--partition").assign(labels, CLASSES, n, 42, 1);
            final int[][] expected = new int[n][CLASSES];
            for (int i = 0; i < labels.length; i++) {
                expected[i % n][labels[i]]++;
            }
            final int[][] counts = Partition.counts(shards, labels, CLASSES);
            for (int w = 0; w < n; w++) {
                assertArrayEquals(expected[w], counts[w], "worker " + w + " of " + n);
                for (int k = 0; k < shards[w].length; k++) {
                    assertEquals(w + k * n, shards[w][k]);
                }
            }
        }
    }

    @Test
    void shouldGiveEveryWorkerKClassesSplitEvenly() {
        final int[] labels = labels();
        final int[] totals = classTotals(labels);
        for (final int n : new int[] {4, 8}) {
            for (final int k : new int[] {1, 2, 3}) {
                final int[][] shards = Partition.parse("classes:" + k, "--partition").assign(labels, CLASSES, n, 7, 1);
                assertDisjoint(shards, labels.length, n * k >= CLASSES);
                final int[][] counts = Partition.counts(shards, labels, CLASSES);
                final int[] holders = new int[CLASSES];
                for (int w = 0; w < n; w++) {
                    int held = 0;
                    for (int c = 0; c < CLASSES; c++) {
                        if (counts[w][c] > 0) {
                            held++;
                            holders[c]++;
                        }
                    }
                    assertEquals(Math.min(k, CLASSES), held, "worker " + w + " holds K classes, n=" + n + " K=" + k);
                }
                for (int c = 0; c < CLASSES; c++) {
                    if (holders[c] == 0) {
                        continue;
                    }
                    final int share = totals[c] / holders[c];
                    for (int w = 0; w < n; w++) {
                        if (counts[w][c] > 0) {
                            assertTrue(counts[w][c] == share || counts[w][c] == share + 1, "class " + c + " split evenly: " + counts[w][c]
                                + " vs " + share);
                        }
                    }
                }
                // a reference count of the holders: n K slots over C classes in a cycle give each class floor or ceil of n K / C
                for (int c = 0; c < CLASSES; c++) {
                    assertTrue(holders[c] == n * k / CLASSES || holders[c] == (n * k + CLASSES - 1) / CLASSES, "holders of class " + c);
                }
            }
        }
    }

    @Test
    void shouldDrawDirichletSkewReproduciblyBySeed() {
        final int[] labels = labels();
        final int[] totals = classTotals(labels);
        final int[][] a = Partition.parse("dirichlet:0.1", "--partition").assign(labels, CLASSES, 8, 11, 32);
        final int[][] b = Partition.parse("dirichlet:0.1", "--partition").assign(labels, CLASSES, 8, 11, 32);
        final int[][] other = Partition.parse("dirichlet:0.1", "--partition").assign(labels, CLASSES, 8, 12, 32);
        assertTrue(Arrays.deepEquals(a, b), "same seed, same split");
        assertFalse(Arrays.deepEquals(a, other), "another seed, another split");
        assertDisjointCover(a, labels.length);
        final int[][] counts = Partition.counts(a, labels, CLASSES);
        for (int c = 0; c < CLASSES; c++) {
            int sum = 0;
            for (final int[] w : counts) {
                sum += w[c];
            }
            assertEquals(totals[c], sum, "class " + c + " kept whole");
        }
        for (final int[] shard : a) {
            assertTrue(shard.length >= 32, "every worker gets at least minExamples");
        }
        assertTrue(dominantShare(counts) > 0.6, "alpha 0.1: most of a worker's data from one or two classes");
        assertTrue(dominantShare(Partition.counts(Partition.parse("dirichlet:100", "-p").assign(labels, CLASSES, 8, 11, 32), labels, CLASSES))
            < 0.45, "alpha 100: close to i.i.d. (the two largest classes are 35% of the data)");
    }

    /** @return the mean over workers of the share of its two largest classes. */
    private static double dominantShare(final int[][] counts) {
        double mean = 0;
        for (final int[] w : counts) {
            final int[] s = w.clone();
            Arrays.sort(s);
            mean += (double) (s[s.length - 1] + s[s.length - 2]) / Arrays.stream(w).sum() / counts.length;
        }
        return mean;
    }

    @Test
    void shouldRejectBadValuesNamingTheOption() {
        for (final String bad : new String[] {"foo", "dirichlet:0", "dirichlet:-1", "dirichlet:x", "classes:0", "classes:1.5", "", "iid:2"}) {
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Partition.parse(bad, "--partition"));
            assertTrue(e.getMessage().contains("--partition") && e.getMessage().contains("'" + bad + "'"), e.getMessage());
        }
        final IllegalArgumentException tooMany = assertThrows(IllegalArgumentException.class,
            () -> Partition.parse("classes:11", "--partition").assign(labels(), CLASSES, 4, 1, 1));
        assertTrue(tooMany.getMessage().contains("classes:11"), tooMany.getMessage());
    }
}
