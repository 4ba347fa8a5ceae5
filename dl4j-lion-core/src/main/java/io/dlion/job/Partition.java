package io.dlion.job;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * How a data set's examples are split over the workers of a job, by label; every split is drawn from a seed, so every
 * worker computes the same one.
 * <ul>
 *   <li>{@code iid}: worker i gets examples i, i + N, i + 2N, ... (equal shards up to one example, every class in the
 *       data's proportions);</li>
 *   <li>{@code dirichlet:ALPHA}: label skew; for every class, worker shares p ~ Dirichlet(ALPHA, ..., ALPHA) and the
 *       class's examples (in a seeded shuffle) cut at the cumulative shares, rounded down (Hsu et al. 2019). ALPHA = 0.1
 *       is harsh (most workers see few classes), 1.0 mild. Draws are repeated (at most {@value #MAX_DRAWS} times, from the
 *       same seed) until every worker holds at least {@code minExamples};</li>
 *   <li>{@code classes:K}: every worker holds K classes: the classes in a seeded order c_0..c_{C-1}, worker i holds
 *       c_{(iK + j) mod C} for j &lt; K, and each class's examples (in a seeded shuffle) are cut into equal parts (up to
 *       one example) among the workers that hold it; with N K &lt; C the classes nobody holds are left out.</li>
 * </ul>
 * Indices within a worker's shard are in increasing order.
 */
public final class Partition {
    /** The kinds of split. */
    public enum Kind { IID, DIRICHLET, CLASSES }

    /** Most Dirichlet draws tried before the split is refused. */
    public static final int MAX_DRAWS = 1000;

    private final Kind kind;
    private final double alpha;
    private final int classesPerWorker;

    private Partition(final Kind kind, final double alpha, final int classesPerWorker) {
        this.kind = kind;
        this.alpha = alpha;
        this.classesPerWorker = classesPerWorker;
    }

    /** @return the i.i.d. split. */
    public static Partition iid() {
        return new Partition(Kind.IID, 0, 0);
    }

    /**
     * @param spec   {@code iid}, {@code dirichlet:ALPHA} (ALPHA > 0) or {@code classes:K} (K >= 1).
     * @param option the option or field name the error names.
     * @return the partition.
     * @throws IllegalArgumentException naming {@code option} for anything else.
     */
    public static Partition parse(final String spec, final String option) {
        final String bad = option + " must be iid, dirichlet:ALPHA (ALPHA > 0) or classes:K (K >= 1), got '" + spec + "'";
        if (spec == null) {
            throw new IllegalArgumentException(bad);
        }
        final String s = spec.trim().toLowerCase(Locale.ROOT);
        if (s.equals("iid")) {
            return iid();
        }
        try {
            if (s.startsWith("dirichlet:")) {
                final double a = Double.parseDouble(s.substring("dirichlet:".length()));
                if (a > 0 && Double.isFinite(a)) {
                    return new Partition(Kind.DIRICHLET, a, 0);
                }
            } else if (s.startsWith("classes:")) {
                final int k = Integer.parseInt(s.substring("classes:".length()));
                if (k >= 1) {
                    return new Partition(Kind.CLASSES, 0, k);
                }
            }
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException(bad, e);
        }
        throw new IllegalArgumentException(bad);
    }

    /** @return the kind. */
    public Kind kind() {
        return kind;
    }

    /**
     * Split examples over workers.
     *
     * @param labels      the class of every example, in [0, classes).
     * @param classes     the number of classes.
     * @param workers     N >= 1.
     * @param seed        the job's seed.
     * @param minExamples the fewest examples a worker may get (Dirichlet redraws until it holds; e.g. one batch).
     * @return the example indices of every worker, increasing.
     * @throws IllegalArgumentException when K exceeds the classes, a label is out of range, or no Dirichlet draw of
     *                                  {@value #MAX_DRAWS} gives every worker {@code minExamples}.
     */
    public int[][] assign(final int[] labels, final int classes, final int workers, final long seed, final int minExamples) {
        Objects.requireNonNull(labels, "labels");
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be >= 1, got " + workers);
        }
        for (final int l : labels) {
            if (l < 0 || l >= classes) {
                throw new IllegalArgumentException("label " + l + " outside [0, " + classes + ")");
            }
        }
        switch (kind) {
            case IID:
                return iid(labels.length, workers);
            case CLASSES:
                if (classesPerWorker > classes) {
                    throw new IllegalArgumentException("partition classes:" + classesPerWorker + " asks for more classes than the data has ("
                        + classes + ")");
                }
                return byClasses(labels, classes, workers, seed);
            default:
                return dirichlet(labels, classes, workers, seed, minExamples);
        }
    }

    private static int[][] iid(final int total, final int n) {
        final int[][] out = new int[n][];
        for (int i = 0; i < n; i++) {
            final int count = (total - i + n - 1) / n;
            out[i] = new int[count];
            for (int k = 0; k < count; k++) {
                out[i][k] = i + k * n;
            }
        }
        return out;
    }

    /** @return the examples of every class, each list shuffled by the random source. */
    private static List<List<Integer>> byClass(final int[] labels, final int classes, final SplittableRandom random) {
        final List<List<Integer>> of = new ArrayList<>();
        for (int c = 0; c < classes; c++) {
            of.add(new ArrayList<>());
        }
        for (int i = 0; i < labels.length; i++) {
            of.get(labels[i]).add(i);
        }
        for (final List<Integer> list : of) {
            for (int i = list.size() - 1; i > 0; i--) {
                final int j = random.nextInt(i + 1);
                final Integer t = list.get(i);
                list.set(i, list.get(j));
                list.set(j, t);
            }
        }
        return of;
    }

    private int[][] byClasses(final int[] labels, final int classes, final int n, final long seed) {
        final SplittableRandom random = new SplittableRandom(seed);
        final int[] order = new int[classes];
        for (int c = 0; c < classes; c++) {
            order[c] = c;
        }
        for (int i = classes - 1; i > 0; i--) {
            final int j = random.nextInt(i + 1);
            final int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        final List<List<Integer>> holders = new ArrayList<>();
        for (int c = 0; c < classes; c++) {
            holders.add(new ArrayList<>());
        }
        for (int w = 0; w < n; w++) {
            for (int j = 0; j < classesPerWorker; j++) {
                holders.get(order[(w * classesPerWorker + j) % classes]).add(w);
            }
        }
        final List<List<Integer>> examples = byClass(labels, classes, random);
        final List<List<Integer>> shards = emptyShards(n);
        for (int c = 0; c < classes; c++) {
            final List<Integer> who = holders.get(c);
            final List<Integer> ex = examples.get(c);
            for (int h = 0; h < who.size(); h++) {
                final int from = (int) ((long) ex.size() * h / who.size());
                final int to = (int) ((long) ex.size() * (h + 1) / who.size());
                shards.get(who.get(h)).addAll(ex.subList(from, to));
            }
        }
        return sorted(shards);
    }

    private int[][] dirichlet(final int[] labels, final int classes, final int n, final long seed, final int minExamples) {
        final SplittableRandom random = new SplittableRandom(seed);
        final List<List<Integer>> examples = byClass(labels, classes, random);
        for (int draw = 0; draw < MAX_DRAWS; draw++) {
            final List<List<Integer>> shards = emptyShards(n);
            for (int c = 0; c < classes; c++) {
                final double[] p = new double[n];
                double sum = 0;
                for (int w = 0; w < n; w++) {
                    p[w] = gamma(alpha, random);
                    sum += p[w];
                }
                final List<Integer> ex = examples.get(c);
                double cumulative = 0;
                int from = 0;
                for (int w = 0; w < n; w++) {
                    cumulative += p[w] / sum;
                    final int to = w == n - 1 ? ex.size() : Math.min(ex.size(), (int) Math.floor(cumulative * ex.size()));
                    if (to > from) {
                        shards.get(w).addAll(ex.subList(from, to));
                        from = to;
                    }
                }
            }
            boolean ok = true;
            for (final List<Integer> s : shards) {
                ok &= s.size() >= minExamples;
            }
            if (ok) {
                return sorted(shards);
            }
        }
        throw new IllegalArgumentException("partition dirichlet:" + alpha + ": no draw of " + MAX_DRAWS + " gave each of the " + n
            + " workers " + minExamples + " examples; use a larger ALPHA or fewer workers");
    }

    /** Gamma(shape, 1) by Marsaglia and Tsang (2000), with the shape + 1 boost for shape < 1. */
    static double gamma(final double shape, final SplittableRandom random) {
        if (shape < 1) {
            final double u = random.nextDouble();
            return gamma(shape + 1, random) * Math.pow(u == 0 ? Double.MIN_VALUE : u, 1.0 / shape);
        }
        final double d = shape - 1.0 / 3.0;
        final double c = 1.0 / Math.sqrt(9 * d);
        while (true) {
            double x;
            double v;
            do {
                x = normal(random);
                v = 1 + c * x;
            } while (v <= 0);
            v = v * v * v;
            final double u = random.nextDouble();
            if (u < 1 - 0.0331 * x * x * x * x || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) {
                return d * v;
            }
        }
    }

    private static double normal(final SplittableRandom random) {
        double u1 = random.nextDouble();
        while (u1 == 0) {
            u1 = random.nextDouble();
        }
        return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * random.nextDouble());
    }

    private static List<List<Integer>> emptyShards(final int n) {
        final List<List<Integer>> shards = new ArrayList<>();
        for (int w = 0; w < n; w++) {
            shards.add(new ArrayList<>());
        }
        return shards;
    }

    private static int[][] sorted(final List<List<Integer>> shards) {
        final int[][] out = new int[shards.size()][];
        for (int w = 0; w < out.length; w++) {
            out[w] = shards.get(w).stream().mapToInt(Integer::intValue).sorted().toArray();
        }
        return out;
    }

    /**
     * @param shards  example indices per worker.
     * @param labels  the class of every example.
     * @param classes the number of classes.
     * @return examples per class (columns) per worker (rows).
     */
    public static int[][] counts(final int[][] shards, final int[] labels, final int classes) {
        final int[][] out = new int[shards.length][classes];
        for (int w = 0; w < shards.length; w++) {
            for (final int i : shards[w]) {
                out[w][labels[i]]++;
            }
        }
        return out;
    }

    /**
     * @param counts examples per class per worker ({@link #counts}).
     * @return a text table, one line per worker: its examples per class and in all.
     */
    public static String table(final int[][] counts) {
        final StringBuilder sb = new StringBuilder("worker");
        final int classes = counts.length == 0 ? 0 : counts[0].length;
        for (int c = 0; c < classes; c++) {
            sb.append(String.format(Locale.ROOT, " %6s", "c" + c));
        }
        sb.append(String.format(Locale.ROOT, " %7s%n", "all"));
        for (int w = 0; w < counts.length; w++) {
            sb.append(String.format(Locale.ROOT, "%6d", w));
            int all = 0;
            for (final int v : counts[w]) {
                sb.append(String.format(Locale.ROOT, " %6d", v));
                all += v;
            }
            sb.append(String.format(Locale.ROOT, " %7d%n", all));
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        switch (kind) {
            case IID:
                return "iid";
            case DIRICHLET:
                return "dirichlet:" + alpha;
            default:
                return "classes:" + classesPerWorker;
        }
    }
}
