package io.dlion.vote;

import java.util.Arrays;
import java.util.Objects;

/**
 * The server's answer for one round, in host form: what every worker applies.
 * <p>
 * Bit layout of every word array ("packed layout", shared with {@link io.dlion.codec}): parameter
 * {@code j} lives in word {@code j >>> 6}; inside the word, byte {@code (j >>> 3) & 7} (little-endian
 * byte order) and, inside that byte, bit {@code 7 - (j & 7)} (most significant bit first, as ND4J's
 * {@code compare_and_bitpack} writes it). Bits past {@code paramCount} are zero.
 * <ul>
 *   <li>{@link VoteRule#MAJORITY}: {@code sign} bit 1 means Delta = +1, 0 means -1, unless the {@code tie}
 *       bit is set (Delta = 0). {@code tie} is null when the number of voters is odd (no tie possible).</li>
 *   <li>{@link VoteRule#AVERAGE}: {@code countPlanes[b]} holds bit b of k, the number of +1 votes;
 *       Delta = (2k - V) / V, where V is the voter count of the parameter's <em>segment</em>.</li>
 * </ul>
 * <b>Segments (AVERAGE only).</b> A transport that votes chunk by chunk can count different numbers of voters in
 * different chunks of one round (a worker dropped at the round deadline after some of its chunks were voted). Such a
 * result is split into segments: word ranges {@code [segmentStartWord(i), segmentEndWord(i))} in order, covering every
 * word, each with its own voter count {@link #segmentVoters(int)}. A result built with
 * {@link #average(long, long, int, VoterSet, long[][])} (and every MAJORITY result) has one segment, the whole vector, with
 * {@link #voters()} voters; {@link #averageSegments} merges neighbours with equal counts, so {@link #segmentCount()}
 * &gt; 1 means the counts really differ. {@link #voters()} is then the largest count (the count planes cover it;
 * a segment with fewer voters has zero high planes, and only its {@code planes(segmentVoters(i))} low planes are read).
 */
public final class RoundResult {
    private final long round;
    private final VoteRule rule;
    private final long paramCount;
    private final int voters;
    private final VoterSet voterSet;
    private final long[] sign;
    private final long[] tie;
    private final long[][] countPlanes;
    /** First word of every segment (element 0 is 0), or null for one segment. */
    private final int[] segmentStartWord;
    /** Voter count of every segment, or null for one segment. */
    private final int[] segmentVoters;

    private RoundResult(final long round, final VoteRule rule, final long paramCount, final int voters, final VoterSet voterSet,
        final long[] sign, final long[] tie, final long[][] countPlanes, final int[] segmentStartWord, final int[] segmentVoters) {
        if (voters < 1) {
            throw new IllegalArgumentException("voters must be >= 1, got " + voters);
        }
        this.round = round;
        this.rule = Objects.requireNonNull(rule, "rule");
        this.paramCount = paramCount;
        this.voters = voters;
        this.voterSet = Objects.requireNonNull(voterSet, "voterSet");
        this.sign = sign;
        this.tie = tie;
        this.countPlanes = countPlanes;
        this.segmentStartWord = segmentStartWord;
        this.segmentVoters = segmentVoters;
    }

    /** A majority-vote result; {@code tie} may be null for an odd number of voters. */
    public static RoundResult majority(final long round, final long paramCount, final int voters, final VoterSet voterSet,
        final long[] sign, final long[] tie) {
        return new RoundResult(round, VoteRule.MAJORITY, paramCount, voters, voterSet, Objects.requireNonNull(sign, "sign"), tie, null,
            null, null);
    }

    /** An averaging result given as bit planes of the +1 count, with one voter count for every parameter. */
    public static RoundResult average(final long round, final long paramCount, final int voters, final VoterSet voterSet,
        final long[][] countPlanes) {
        return new RoundResult(round, VoteRule.AVERAGE, paramCount, voters, voterSet, null, null,
            Objects.requireNonNull(countPlanes, "countPlanes"), null, null);
    }

    /**
     * An averaging result whose word ranges (segments) counted different numbers of voters. Neighbouring segments with
     * the same count are merged; when one segment remains this is {@link #average(long, long, int, VoterSet, long[][])}.
     *
     * @param round            the round.
     * @param paramCount       parameters of the vector.
     * @param voterSet         every worker whose vote was counted in at least one segment (the union); not copied.
     * @param countPlanes      bit planes of the +1 count: at least {@code VoteAggregator.planes(max segmentVoters)}
     *                         arrays of {@code ceil(paramCount / 64)} words; not copied.
     * @param segmentStartWord first word of each segment: 0 first, strictly increasing, each below the word count;
     *                         segment i ends where segment i + 1 starts, the last one at the end of the vector.
     * @param segmentVoters    voter count of each segment, 1 to {@link VoteAggregator#MAX_VOTERS}.
     * @return the result; {@link #voters()} is the largest segment count.
     * @throws IllegalArgumentException when the segments are not as described or the planes do not cover the counts.
     */
    public static RoundResult averageSegments(final long round, final long paramCount, final VoterSet voterSet, final long[][] countPlanes,
        final int[] segmentStartWord, final int[] segmentVoters) {
        Objects.requireNonNull(countPlanes, "countPlanes");
        Objects.requireNonNull(segmentStartWord, "segmentStartWord");
        Objects.requireNonNull(segmentVoters, "segmentVoters");
        final long words = (paramCount + 63) >>> 6;
        if (segmentStartWord.length == 0 || segmentStartWord.length != segmentVoters.length) {
            throw new IllegalArgumentException("need one start word and one voter count per segment, got " + segmentStartWord.length
                + " and " + segmentVoters.length);
        }
        if (segmentStartWord[0] != 0) {
            throw new IllegalArgumentException("the first segment must start at word 0, got " + segmentStartWord[0]);
        }
        final int[] starts = new int[segmentStartWord.length];
        final int[] counts = new int[segmentStartWord.length];
        int segments = 0;
        int max = 0;
        for (int i = 0; i < segmentStartWord.length; i++) {
            final int start = segmentStartWord[i];
            final int count = segmentVoters[i];
            if (i > 0 && start <= segmentStartWord[i - 1] || start >= words) {
                throw new IllegalArgumentException("segment start words must increase and stay below " + words + ": "
                    + Arrays.toString(segmentStartWord));
            }
            if (count < 1 || count > VoteAggregator.MAX_VOTERS) {
                throw new IllegalArgumentException("segment voters must be in [1, " + VoteAggregator.MAX_VOTERS + "], got " + count);
            }
            if (segments == 0 || counts[segments - 1] != count) {
                starts[segments] = start;
                counts[segments] = count;
                segments++;
            }
            max = Math.max(max, count);
        }
        if (countPlanes.length < VoteAggregator.planes(max)) {
            throw new IllegalArgumentException(countPlanes.length + " count planes cannot hold " + max + " voters");
        }
        if (segments == 1) {
            return average(round, paramCount, max, voterSet, countPlanes);
        }
        return new RoundResult(round, VoteRule.AVERAGE, paramCount, max, voterSet, null, null, countPlanes,
            Arrays.copyOf(starts, segments), Arrays.copyOf(counts, segments));
    }

    public long round() {
        return round;
    }

    public VoteRule rule() {
        return rule;
    }

    public long paramCount() {
        return paramCount;
    }

    /**
     * @return how many workers' votes went into this result; with several segments the largest count of any segment
     *     (the count planes cover it).
     */
    public int voters() {
        return voters;
    }

    /**
     * @return the workers that voted in this round; with several segments (or slices whose voters differ) every worker
     *     counted in at least one of them. Not a copy: valid as long as the result.
     */
    public VoterSet voterSet() {
        return voterSet;
    }

    public long[] sign() {
        return sign;
    }

    public long[] tie() {
        return tie;
    }

    public long[][] countPlanes() {
        return countPlanes;
    }

    /** @return the number of segments: 1 unless an AVERAGE result counted different voters in different word ranges. */
    public int segmentCount() {
        return segmentVoters == null ? 1 : segmentVoters.length;
    }

    /**
     * @param segment index in [0, {@link #segmentCount()}).
     * @return the segment's first word.
     */
    public int segmentStartWord(final int segment) {
        Objects.checkIndex(segment, segmentCount());
        return segmentStartWord == null ? 0 : segmentStartWord[segment];
    }

    /**
     * @param segment index in [0, {@link #segmentCount()}).
     * @return the word after the segment's last.
     */
    public int segmentEndWord(final int segment) {
        Objects.checkIndex(segment, segmentCount());
        return segment + 1 < segmentCount() ? segmentStartWord[segment + 1] : (int) ((paramCount + 63) >>> 6);
    }

    /**
     * @param segment index in [0, {@link #segmentCount()}).
     * @return the number of voters counted in the segment ({@link #voters()} when there is one segment).
     */
    public int segmentVoters(final int segment) {
        Objects.checkIndex(segment, segmentCount());
        return segmentVoters == null ? voters : segmentVoters[segment];
    }

    /**
     * @param param a parameter index in [0, paramCount).
     * @return the number of voters counted for that parameter: V in its Delta.
     */
    public int votersAt(final long param) {
        Objects.checkIndex(param, paramCount);
        if (segmentStartWord == null) {
            return voters;
        }
        final int i = Arrays.binarySearch(segmentStartWord, (int) (param >>> 6));
        return segmentVoters[i >= 0 ? i : -i - 2];
    }
}
