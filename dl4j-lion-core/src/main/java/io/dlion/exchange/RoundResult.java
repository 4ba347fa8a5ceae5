package io.dlion.exchange;

import java.util.Objects;

import io.dlion.vote.VoteRule;

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
 *       Delta = (2k - voters) / voters.</li>
 * </ul>
 */
public final class RoundResult {
    private final long round;
    private final VoteRule rule;
    private final long paramCount;
    private final int voters;
    private final long voterMask;
    private final long[] sign;
    private final long[] tie;
    private final long[][] countPlanes;

    private RoundResult(final long round, final VoteRule rule, final long paramCount, final int voters, final long voterMask,
        final long[] sign, final long[] tie, final long[][] countPlanes) {
        if (voters < 1) {
            throw new IllegalArgumentException("voters must be >= 1, got " + voters);
        }
        this.round = round;
        this.rule = Objects.requireNonNull(rule, "rule");
        this.paramCount = paramCount;
        this.voters = voters;
        this.voterMask = voterMask;
        this.sign = sign;
        this.tie = tie;
        this.countPlanes = countPlanes;
    }

    /** A majority-vote result; {@code tie} may be null for an odd number of voters. */
    public static RoundResult majority(final long round, final long paramCount, final int voters, final long voterMask,
        final long[] sign, final long[] tie) {
        return new RoundResult(round, VoteRule.MAJORITY, paramCount, voters, voterMask, Objects.requireNonNull(sign, "sign"), tie, null);
    }

    /** An averaging result given as bit planes of the +1 count. */
    public static RoundResult average(final long round, final long paramCount, final int voters, final long voterMask,
        final long[][] countPlanes) {
        return new RoundResult(round, VoteRule.AVERAGE, paramCount, voters, voterMask, null, null, Objects.requireNonNull(countPlanes, "countPlanes"));
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

    /** @return how many workers' votes went into this result. */
    public int voters() {
        return voters;
    }

    /** @return bit i set when worker i (i &lt; 64) voted in this round. */
    public long voterMask() {
        return voterMask;
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
}
