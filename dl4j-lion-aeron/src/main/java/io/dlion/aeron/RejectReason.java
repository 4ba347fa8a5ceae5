package io.dlion.aeron;

/**
 * Why the aggregation server (or a worker) refused a message. Each reason has its own Aeron counter, so a
 * person can see with {@code AeronStat} what is being refused; a refused message never enters a vote.
 */
public enum RejectReason {
    /** Shorter than the header, a fragmented message or a body encoding the message type does not use. */
    MALFORMED("malformed"),
    /** Wrong magic byte or protocol version. */
    BAD_VERSION("bad-version"),
    /** A job id other than the server's. */
    FOREIGN_JOB("foreign-job"),
    /** A message type the receiver does not accept. */
    UNEXPECTED_TYPE("unexpected-type"),
    /** A worker id at or above the job's worker count. */
    UNKNOWN_WORKER("unknown-worker"),
    /** A chunk of another slice. */
    WRONG_SLICE("wrong-slice"),
    /** A round that is already closed (a late message). */
    STALE_ROUND("stale-round"),
    /** A chunk already received (or already voted) in this round. */
    DUPLICATE("duplicate"),
    /** A chunk that does not start on this slice's chunk grid or has the wrong length. */
    OUT_OF_RANGE("out-of-range"),
    /** A HELLO whose parameter count differs from the job's. */
    PARAM_COUNT_MISMATCH("param-count-mismatch"),
    /** A body shorter (truncated) or longer (oversized) than the header and encoding state. */
    BAD_LENGTH("bad-length"),
    /** A round more than one ahead of the server's current round. */
    FUTURE_ROUND("future-round"),
    /** A vote of a worker left out of the round: the round's voters were fixed without it (deadline passed). */
    LATE("late"),
    /** A vote from an Aeron session no accepted HELLO bound to the worker id it claims. */
    UNAUTHENTICATED("unauthenticated"),
    /** A HELLO without valid credentials: missing or wrong HMAC, a timestamp outside the allowed skew, or a replay. */
    BAD_CREDENTIALS("bad-credentials"),
    /**
     * A HELLO that is valid but not new: not newer than the last one accepted from its worker, or naming another vote
     * session than the one it came on (a HELLO copied off the wire and sent again).
     */
    REPLAYED_HELLO("replayed-hello"),
    /** A HELLO whose frame-tag setting ({@code --frame-mac}) differs from the server's. */
    FRAME_MAC_MISMATCH("frame-mac-mismatch"),
    /** A frame whose {@link io.dlion.aeron.wire.FrameMac} tag is missing or wrong: forged, altered or of another session. */
    BAD_MAC("bad-mac");

    private final String label;

    RejectReason(final String label) {
        this.label = label;
    }

    /** @return the short name used in counter labels. */
    public String label() {
        return label;
    }
}
