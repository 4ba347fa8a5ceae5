package io.dlion.aeron;

import java.util.Objects;

import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.FrameMac;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.vote.VoteRule;

/**
 * The settings every part of one job must agree on, declared once: job id, worker count, parameter count, chunk size,
 * vote rule and the job's secret. The contexts of the server ({@code AggregationServer.Context}), the worker
 * ({@link AeronVoteExchange.Context}), a local job ({@link LocalAeronJob.Context}) and the fault tools extend it, as
 * Aeron's {@code Aeron.Context} and {@code MediaDriver.Context} extend {@code CommonContext}: a setter of a shared
 * setting is inherited, and {@link #conclude()} validates the shared settings once, naming the field that is wrong,
 * before each context validates its own.
 * <p>
 * Required: {@link #jobId(int)}, {@link #workers(int)}, {@link #paramCount(long)}. Defaults: the chunk size of
 * {@link Configuration#chunkWords()}, {@link VoteRule#MAJORITY}, no secret, no frame tags.
 *
 * @param <T> the concrete context, returned by the fluent setters.
 */
public abstract class JobContext<T extends JobContext<T>> {
    int jobId;
    boolean jobIdSet;
    int workers;
    long paramCount;
    int chunkWords = Configuration.chunkWords();
    VoteRule rule = VoteRule.MAJORITY;
    byte[] secret;
    boolean frameMac;

    /** Only the transport's own contexts extend this class. */
    protected JobContext() {
    }

    /**
     * Validate the shared settings; a subclass calls this first, then validates its own.
     *
     * @return this for a fluent API.
     * @throws IllegalArgumentException naming the field that is wrong.
     * @throws NullPointerException     naming the field that is null.
     */
    public T conclude() {
        if (!jobIdSet) {
            throw new IllegalArgumentException("jobId must be set");
        }
        if (workers < 1 || workers > MessageHeaderFlyweight.MAX_WORKERS) {
            throw new IllegalArgumentException("workers must be in [1, " + MessageHeaderFlyweight.MAX_WORKERS + "], got " + workers);
        }
        if (paramCount < 1 || paramCount > (long)Integer.MAX_VALUE * Long.SIZE) {
            throw new IllegalArgumentException("paramCount must be in [1, (2^31 - 1) * 64], got " + paramCount);
        }
        if (chunkWords < ChunkLayout.WORD_ALIGNMENT || chunkWords % ChunkLayout.WORD_ALIGNMENT != 0
            || chunkWords > MessageHeaderFlyweight.MAX_CHUNK_WORDS) {
            throw new IllegalArgumentException("chunkWords must be a positive multiple of " + ChunkLayout.WORD_ALIGNMENT + " up to "
                + MessageHeaderFlyweight.MAX_CHUNK_WORDS + ", got " + chunkWords);
        }
        Objects.requireNonNull(rule, "rule");
        if (secret != null && secret.length < HelloCredentials.MIN_SECRET_LENGTH) {
            throw new IllegalArgumentException("secret must be at least " + HelloCredentials.MIN_SECRET_LENGTH + " bytes, got "
                + secret.length);
        }
        if (frameMac && secret == null) {
            throw new IllegalArgumentException("frameMac needs the job's secret: set secret(byte[]) as well");
        }
        return self();
    }

    /**
     * @param jobId of the job, carried by every message; messages of other jobs are rejected.
     * @return this for a fluent API.
     */
    public T jobId(final int jobId) {
        this.jobId = jobId;
        this.jobIdSet = true;
        return self();
    }

    /** @return the job id. */
    public int jobId() {
        return jobId;
    }

    /**
     * @param workers number of workers that vote, 1 to {@link MessageHeaderFlyweight#MAX_WORKERS} (1,024).
     * @return this for a fluent API.
     */
    public T workers(final int workers) {
        this.workers = workers;
        return self();
    }

    /** @return the number of workers. */
    public int workers() {
        return workers;
    }

    /**
     * @param paramCount parameters of the whole vote vector (every slice).
     * @return this for a fluent API.
     */
    public T paramCount(final long paramCount) {
        this.paramCount = paramCount;
        return self();
    }

    /** @return the parameter count of the vote vector. */
    public long paramCount() {
        return paramCount;
    }

    /**
     * @param chunkWords 64-parameter words per chunk, a multiple of {@value ChunkLayout#WORD_ALIGNMENT}, the same on every
     *                   server and worker of the job.
     * @return this for a fluent API.
     */
    public T chunkWords(final int chunkWords) {
        this.chunkWords = chunkWords;
        return self();
    }

    /** @return words per chunk. */
    public int chunkWords() {
        return chunkWords;
    }

    /**
     * @param rule majority vote (default) or averaging, the same on every server and worker of the job.
     * @return this for a fluent API.
     */
    public T rule(final VoteRule rule) {
        this.rule = rule;
        return self();
    }

    /** @return the vote rule. */
    public VoteRule rule() {
        return rule;
    }

    /**
     * @param secret the job's shared secret (at least {@value HelloCredentials#MIN_SECRET_LENGTH} bytes): HELLOs carry its
     *               HMAC-SHA256 and servers accept no other; null (default) for a job without one (votes are still bound
     *               to the Aeron session of their worker's HELLO). Copied.
     * @return this for a fluent API.
     */
    public T secret(final byte[] secret) {
        this.secret = secret == null ? null : secret.clone();
        return self();
    }

    /** @return a copy of the job's secret, or null. */
    public byte[] secret() {
        return secret == null ? null : secret.clone();
    }

    /**
     * @param frameMac true to authenticate every vote and result frame with a {@link FrameMac} tag (needs
     *                 {@link #secret(byte[])}); the same on every server and worker of the job, which HELLOs check. Off by
     *                 default: the HELLO handshake already keeps strangers out; tags are for an attacker on the path.
     * @return this for a fluent API.
     */
    public T frameMac(final boolean frameMac) {
        this.frameMac = frameMac;
        return self();
    }

    /** @return true when every vote and result frame carries a {@link FrameMac} tag. */
    public boolean frameMac() {
        return frameMac;
    }

    @SuppressWarnings("unchecked")
    private T self() {
        return (T)this;
    }
}
