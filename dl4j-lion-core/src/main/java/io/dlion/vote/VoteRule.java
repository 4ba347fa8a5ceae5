package io.dlion.vote;

/** How the aggregation server combines the workers' sign votes (Distributed Lion, Liu et al. 2024). */
public enum VoteRule {
    /** Delta = sign(sum of votes); a tie (even number of voters) gives 0. "MaVo" in the paper. */
    MAJORITY,
    /** Delta = (2k - N) / N where k is the number of +1 votes among N voters. "Avg" in the paper. */
    AVERAGE
}
