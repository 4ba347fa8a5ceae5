package io.dlion.aeron.client;

import java.util.Arrays;

import io.dlion.aeron.server.HeldResult;
import io.dlion.codec.DownlinkEncoding;
import io.dlion.codec.WordViews;
import io.dlion.exchange.VoteExchange;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoteAggregator;
import io.dlion.vote.VoteRule;
import io.dlion.vote.VoterSet;

/**
 * Turns the result chunks of every slice into the round's {@link RoundResult}, in buffers allocated once: a round in
 * steady state allocates nothing that grows with the parameter count (the result object itself is a few fields that
 * point at these buffers).
 * <p>
 * Buffers, each {@code ceil(paramCount / 64)} words in the packed layout of {@link RoundResult}:
 * <ul>
 *   <li>MAJORITY: {@code sign}, allocated here; {@code tie}, allocated the first time a round needs it (an even
 *       number of voters) and kept from then on.</li>
 *   <li>AVERAGE: {@code VoteAggregator.planes(workers)} count planes, allocated here; a result of V voters gets a view
 *       of the low {@code planes(V)} of them (views for every plane count are made here, too).</li>
 * </ul>
 * Every chunk rewrites its word range of every buffer that exists (a chunk with fewer planes or no ties writes
 * zeros), so a complete round leaves nothing of the previous one.
 * <p>
 * <b>Lifetime:</b> the arrays of a result returned by {@link #complete(long)} are these buffers. They stay as they are
 * until the next round's chunks arrive, i.e. until the next {@code submit} on the exchange; a caller that needs a
 * result longer copies it.
 * <p>
 * Call order per round: {@link #startRound()}, then {@link #accept} for every result chunk in word order per slice
 * ({@link #restartSlice} when a slice's server was restarted mid-round and sends the round again), then
 * {@link #complete(long)} once every slice's chunks are in ({@link #sliceDone} for each slice as its chunks are in,
 * {@link #giveSlice} to apply a slice's part before the others arrive). Not thread-safe.
 * <p>
 * <b>Held results:</b> a slice's words stay those of the last round whose chunks of the slice were all in until a chunk
 * of a later round arrives for it; with the voters of each run of chunks, that is the slice's last result, whole, which
 * {@link #heldResult} copies for the server that takes the slice over in this process (the old server may have died
 * while sending it, and other workers lack part of it).
 */
final class ResultAssembly {
    private final VoteRule rule;
    private final long paramCount;
    private final int totalWords;
    /** {@code {sign}} and, once allocated, {@code {sign, tie}}: what a decoder writes. */
    private final long[][] signPlane;
    private long[][] signAndTie;
    /** Down-link decoder by voter count (index 0 unused). */
    private final DownlinkEncoding[] downlinks;
    private final long[] sign;
    private long[] tie;
    private final long[][] planes;
    /** {@code planeViews[c]}: the low c count planes, for a result with {@code planes(voters) == c}. */
    private final long[][][] planeViews;
    /** MAJORITY: a chunk of this round had an even number of voters (ternary). */
    private boolean ternary;
    /** Per slice: intersection and union of the voter sets of the round's chunks so far. */
    private final VoterSet[] votersAll;
    private final VoterSet[] votersAny;
    private final VoterSet everyWorker;
    private final VoterSet scratchAll;
    private final VoterSet scratchAny;
    /** The voters of the completed round, reused round after round. */
    private final VoterSet resultVoters;
    /** Per slice, AVERAGE: runs of result chunks with the same voter count in this round, in word order (first word, count). */
    private final int[][] runStart;
    private final int[][] runVoters;
    private final int[] runs;
    /** Per slice: runs of chunks with the same voter set in this round (first word, voters), for the held result. */
    private final int[][] voterRunStart;
    private VoterSet[][] voterRunSets;
    private final int[] voterRuns;
    /** The same of the slice's held result: the round its words hold whole, or -1 once a later round's chunk came. */
    private int[][] heldRunStart;
    private VoterSet[][] heldRunSets;
    private final int[] heldRuns;
    private final long[] heldRound;
    /** Per slice: no chunk of the round accepted yet (its voter runs start over with the next). */
    private final boolean[] sliceFresh;
    private final int workers;

    /**
     * @param rule       the servers' rule.
     * @param paramCount parameters of the vector.
     * @param workers    workers of the job: the largest voter count.
     * @param slices     number of slices.
     */
    ResultAssembly(final VoteRule rule, final long paramCount, final int workers, final int slices) {
        this.rule = rule;
        this.paramCount = paramCount;
        this.totalWords = (int) ((paramCount + 63) >>> 6);
        this.downlinks = new DownlinkEncoding[workers + 1];
        for (int v = 1; v <= workers; v++) {
            downlinks[v] = DownlinkEncoding.of(rule, v);
        }
        if (rule == VoteRule.MAJORITY) {
            this.sign = new long[totalWords];
            this.signPlane = new long[][] {sign};
            this.planes = null;
            this.planeViews = null;
        } else {
            final int count = VoteAggregator.planes(workers);
            this.sign = null;
            this.signPlane = null;
            this.planes = new long[count][totalWords];
            this.planeViews = new long[count + 1][][];
            for (int c = 0; c <= count; c++) {
                planeViews[c] = Arrays.copyOf(planes, c);
            }
        }
        this.resultVoters = new VoterSet(workers);
        this.everyWorker = VoterSet.all(workers);
        this.scratchAll = new VoterSet(workers);
        this.scratchAny = new VoterSet(workers);
        this.votersAll = new VoterSet[slices];
        this.votersAny = new VoterSet[slices];
        for (int s = 0; s < slices; s++) {
            votersAll[s] = new VoterSet(workers);
            votersAny[s] = new VoterSet(workers);
        }
        this.runStart = new int[slices][2];
        this.runVoters = new int[slices][2];
        this.runs = new int[slices];
        this.workers = workers;
        this.voterRunStart = new int[slices][1];
        this.voterRunSets = new VoterSet[slices][1];
        this.voterRuns = new int[slices];
        this.heldRunStart = new int[slices][1];
        this.heldRunSets = new VoterSet[slices][1];
        this.heldRuns = new int[slices];
        this.heldRound = new long[slices];
        Arrays.fill(heldRound, -1L);
        this.sliceFresh = new boolean[slices];
        for (int s = 0; s < slices; s++) {
            voterRunSets[s][0] = new VoterSet(workers);
            heldRunSets[s][0] = new VoterSet(workers);
        }
    }

    /** A new round: forget the voter sets and counts of the last one (its buffers are overwritten chunk by chunk). */
    void startRound() {
        ternary = false;
        for (int s = 0; s < runs.length; s++) {
            resetSlice(s);
        }
    }

    /**
     * A slice's server was restarted in the middle of the round and will send all of it again: drop what the old one
     * sent.
     *
     * @param slice    index of the slice.
     * @param fromWord first word of the slice.
     * @param toWord   the word after its last.
     */
    void restartSlice(final int slice, final int fromWord, final int toWord) {
        resetSlice(slice);
        heldRound[slice] = -1;
        if (sign != null) {
            Arrays.fill(sign, fromWord, toWord, 0L);
        }
        if (tie != null) {
            Arrays.fill(tie, fromWord, toWord, 0L);
        }
        if (planes != null) {
            for (final long[] plane : planes) {
                Arrays.fill(plane, fromWord, toWord, 0L);
            }
        }
    }

    /**
     * Decode one result chunk straight into the buffers. The frame around it was checked by the caller (encoding,
     * length).
     *
     * @param slice      index of the slice that sent it.
     * @param body       views of the buffer holding the encoded chunk.
     * @param index      where the encoded chunk starts in {@code body}.
     * @param params     parameters in the chunk.
     * @param wordOffset first word of the chunk.
     * @param words      words of the chunk.
     * @param voterSet   the workers the chunk counts: 1 to {@code workers} of them.
     * @return false when the body does not decode (its words are then zero: the chunk is missing until a valid one
     *     rewrites them).
     */
    boolean accept(final int slice, final WordViews body, final int index, final long params, final int wordOffset, final int words,
        final VoterSet voterSet) {
        heldRound[slice] = -1; // the slice's words are the new round's from here on
        if (sliceFresh[slice]) {
            sliceFresh[slice] = false;
            voterRuns[slice] = 0;
        }
        final int voters = voterSet.count();
        final DownlinkEncoding downlink = downlinks[voters];
        final long[][] target;
        if (rule == VoteRule.MAJORITY) {
            target = (voters & 1) == 0 ? ternaryPlanes() : signPlane;
        } else {
            target = planeViews[downlink.planes()];
        }
        try {
            downlink.decode(body, index, paramCount, wordOffset, wordOffset + words, target);
        } catch (final IllegalArgumentException ex) {
            return false;
        }
        if (rule == VoteRule.MAJORITY) {
            if ((voters & 1) == 0) {
                ternary = true;
            } else if (tie != null) {
                Arrays.fill(tie, wordOffset, wordOffset + words, 0L);
            }
        } else {
            // chunks of one round may count different voters (a worker dropped mid-round): a chunk with fewer voters
            // has zero high planes
            for (int p = downlink.planes(); p < planes.length; p++) {
                Arrays.fill(planes[p], wordOffset, wordOffset + words, 0L);
            }
            addRun(slice, wordOffset, voters);
        }
        votersAll[slice].and(voterSet);
        votersAny[slice].or(voterSet);
        addVoterRun(slice, wordOffset, voterSet);
        return true;
    }

    /**
     * Every chunk of a slice's result of the round is in: its words and voters are the slice's held result until a chunk
     * of a later round arrives for it.
     *
     * @param slice index of the slice.
     * @param round the round.
     */
    void sliceDone(final int slice, final long round) {
        final int[] starts = heldRunStart[slice];
        final VoterSet[] sets = heldRunSets[slice];
        heldRunStart[slice] = voterRunStart[slice];
        heldRunSets[slice] = voterRunSets[slice];
        heldRuns[slice] = voterRuns[slice];
        voterRunStart[slice] = starts;
        voterRunSets[slice] = sets;
        voterRuns[slice] = 0;
        heldRound[slice] = round;
    }

    /**
     * A copy of a slice's held result: its last round whose chunks were all in, if no chunk of a later round came since.
     *
     * @param slice    index of the slice.
     * @param fromWord first word of the slice.
     * @param toWord   the word after its last.
     * @return the copy, or null when the slice holds no whole result.
     */
    HeldResult heldResult(final int slice, final int fromWord, final int toWord) {
        if (heldRound[slice] < 0 || heldRuns[slice] == 0) {
            return null;
        }
        final long[][] source = rule == VoteRule.MAJORITY ? new long[][] {sign, tie} : planes;
        final long[][] words = new long[source.length][];
        for (int p = 0; p < source.length; p++) {
            words[p] = source[p] == null ? new long[toWord - fromWord] : Arrays.copyOfRange(source[p], fromWord, toWord);
        }
        final int n = heldRuns[slice];
        final VoterSet[] voters = new VoterSet[n];
        for (int r = 0; r < n; r++) {
            voters[r] = heldRunSets[slice][r].copy();
        }
        return new HeldResult(heldRound[slice], fromWord, words, Arrays.copyOf(heldRunStart[slice], n), voters);
    }

    /**
     * The round's result, once every chunk of every slice was accepted. With MAJORITY the voters are the workers
     * counted in every chunk (or, if none is, in any); with AVERAGE every worker counted anywhere, and one segment per
     * run of chunks with the same count when the counts differ.
     *
     * @param round the round.
     * @return the result; its arrays are this assembly's buffers (see the class comment for how long they hold).
     */
    RoundResult complete(final long round) {
        final VoterSet all = scratchAll.copyFrom(everyWorker);
        final VoterSet any = scratchAny.clear();
        for (int s = 0; s < runs.length; s++) {
            all.and(votersAll[s]);
            any.or(votersAny[s]);
        }
        if (rule == VoteRule.MAJORITY) {
            resultVoters.copyFrom(all.isEmpty() ? any : all);
            final int voters = resultVoters.count();
            return RoundResult.majority(round, paramCount, voters, resultVoters, sign, ternary || (voters & 1) == 0 ? tieWords() : null);
        }
        return averageResult(round, resultVoters.copyFrom(any));
    }

    /**
     * Give a slice's part of the round's result, once every chunk of the slice was accepted: with MAJORITY one part over
     * the slice (its voters; the tie words when a chunk of the round so far had an even number of voters, as
     * {@link #complete} decides for the whole), with AVERAGE one part per run of the slice's chunks with the same voter
     * count. The parts' arrays are this assembly's buffers.
     *
     * @param slice    index of the slice.
     * @param fromWord first word of the slice.
     * @param toWord   the word after its last.
     * @param round    the round.
     * @param parts    receives the parts.
     */
    void giveSlice(final int slice, final int fromWord, final int toWord, final long round, final VoteExchange.ResultParts parts) {
        if (rule == VoteRule.MAJORITY) {
            final VoterSet voterSet = votersAll[slice].isEmpty() ? votersAny[slice] : votersAll[slice];
            final int voters = voterSet.count();
            final RoundResult part = RoundResult.majority(round, paramCount, voters, voterSet, sign,
                ternary || (voters & 1) == 0 ? tieWords() : null);
            parts.onPart(part, (long) fromWord << 6, Math.min((long) toWord << 6, paramCount));
            return;
        }
        for (int r = 0; r < runs[slice]; r++) {
            final int voters = runVoters[slice][r];
            final int end = r + 1 < runs[slice] ? runStart[slice][r + 1] : toWord;
            final RoundResult part = RoundResult.average(round, paramCount, voters, votersAny[slice],
                planeViews[VoteAggregator.planes(voters)]);
            parts.onPart(part, (long) runStart[slice][r] << 6, Math.min((long) end << 6, paramCount));
        }
    }

    /**
     * The AVERAGE result of a complete round: one voter count, or segments where the chunks' counts differ (the slices'
     * runs of equal counts, in word order).
     */
    private RoundResult averageResult(final long round, final VoterSet mask) {
        int segments = 0;
        int max = 0;
        boolean one = true;
        final int first = runVoters[0][0];
        for (int s = 0; s < runs.length; s++) {
            segments += runs[s];
            for (int r = 0; r < runs[s]; r++) {
                max = Math.max(max, runVoters[s][r]);
                one &= runVoters[s][r] == first;
            }
        }
        final long[][] counts = planeViews[VoteAggregator.planes(max)];
        if (one) {
            return RoundResult.average(round, paramCount, max, mask, counts);
        }
        final int[] starts = new int[segments];
        final int[] voters = new int[segments];
        int i = 0;
        for (int s = 0; s < runs.length; s++) {
            System.arraycopy(runStart[s], 0, starts, i, runs[s]);
            System.arraycopy(runVoters[s], 0, voters, i, runs[s]);
            i += runs[s];
        }
        return RoundResult.averageSegments(round, paramCount, mask, counts, starts, voters);
    }

    private void resetSlice(final int slice) {
        votersAll[slice].copyFrom(everyWorker);
        votersAny[slice].clear();
        runs[slice] = 0;
        sliceFresh[slice] = true;
    }

    private void addVoterRun(final int slice, final int wordOffset, final VoterSet voterSet) {
        final int n = voterRuns[slice];
        if (n > 0 && voterRunSets[slice][n - 1].equals(voterSet)) {
            return;
        }
        if (n == voterRunStart[slice].length) {
            voterRunStart[slice] = Arrays.copyOf(voterRunStart[slice], 2 * n);
            voterRunSets[slice] = Arrays.copyOf(voterRunSets[slice], 2 * n);
        }
        if (voterRunSets[slice][n] == null) {
            voterRunSets[slice][n] = new VoterSet(workers);
        }
        voterRunStart[slice][n] = wordOffset;
        voterRunSets[slice][n].copyFrom(voterSet);
        voterRuns[slice] = n + 1;
    }

    private void addRun(final int slice, final int wordOffset, final int voters) {
        final int n = runs[slice];
        if (n > 0 && runVoters[slice][n - 1] == voters) {
            return;
        }
        if (n == runStart[slice].length) {
            runStart[slice] = Arrays.copyOf(runStart[slice], 2 * n);
            runVoters[slice] = Arrays.copyOf(runVoters[slice], 2 * n);
        }
        runStart[slice][n] = wordOffset;
        runVoters[slice][n] = voters;
        runs[slice] = n + 1;
    }

    private long[] tieWords() {
        if (tie == null) {
            tie = new long[totalWords];
            signAndTie = new long[][] {sign, tie};
        }
        return tie;
    }

    private long[][] ternaryPlanes() {
        tieWords();
        return signAndTie;
    }
}
