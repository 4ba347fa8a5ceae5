package io.dlion.exchange;

/**
 * A worker (re)joins a running job: from {@code round} on it votes again, starting from the parameters the
 * {@code donor} worker holds when that round starts. Every worker of the job learns of it through its exchange
 * ({@link VoteExchange#takeJoinNotices()}); the donor hands its parameters over (e.g. a {@code DLionCheckpoint}
 * written between the steps of rounds {@code round - 1} and {@code round}).
 *
 * @param worker the joining worker.
 * @param round  the first round it votes in.
 * @param donor  the worker that hands it the parameters, or -1 when no live worker could be named.
 */
public record JoinNotice(int worker, long round, int donor) {
}
