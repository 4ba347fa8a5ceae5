/**
 * What the aggregation server computes: {@link io.dlion.vote.VoteRule} names the rule, and
 * {@link io.dlion.vote.VoteAggregator} counts the workers' packed sign votes with bit-sliced carry-save
 * adders, chunk by chunk and over the subset of workers that voted, into a majority vote (sign and tie
 * words) or the per-parameter count of +1 votes (bit planes). Pure Java on {@code long[]} words, no ND4J.
 */
package io.dlion.vote;
