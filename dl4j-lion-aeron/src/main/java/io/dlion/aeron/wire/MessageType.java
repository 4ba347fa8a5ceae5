package io.dlion.aeron.wire;

/** Message type codes of the {@link MessageHeaderFlyweight#TYPE_OFFSET} field. Codes are never reused. */
public final class MessageType {
    /** Worker to server: announces a worker of a job with its parameter count and result endpoint ({@link HelloFlyweight}). */
    public static final int HELLO = 1;
    /** Worker to server: one chunk of a worker's packed sign vote. */
    public static final int VOTE_CHUNK = 2;
    /** Server to workers: the aggregated result of one chunk, in the {@link Encoding} the header names. */
    public static final int RESULT_CHUNK = 3;
    /**
     * Server to workers: the round named in the header will have no result (fewer voters than the quorum before the
     * deadline); the voter set after the header holds the workers that did vote. No body.
     */
    public static final int ROUND_ABORT = 4;
    /**
     * Server to workers: a worker rejoins the job. The count field holds the joining worker, the round
     * field the first round it votes in (and the round it is waited for again from), the worker id field the donor:
     * the live worker that hands the joining worker the job's parameters as of the start of that round. No body.
     */
    public static final int JOIN_NOTICE = 5;
    /**
     * Server to workers: the answer to a worker's accepted HELLO, proving the server holds the job's secret and naming
     * the session it publishes on ({@link HelloAckFlyweight}).
     */
    public static final int HELLO_ACK = 6;
    /**
     * Donor to server, relayed by the server to the joining worker: a hand-over of the job's state begins. The round
     * field holds the joining worker's first round, the worker id field the donor, the count field the joining
     * worker; the body the run id, the length and SHA-256 digest of the payload, and an HMAC-SHA256 of the job's
     * secret when it has one ({@link HandOverBeginFlyweight}). Codes from 16 on are the hand-over's.
     */
    public static final int HANDOVER_BEGIN = 16;
    /**
     * Donor to server, relayed to the joining worker: a slice of the hand-over's payload at a byte offset
     * ({@link HandOverChunkFlyweight}), header fields as on {@link #HANDOVER_BEGIN}.
     */
    public static final int HANDOVER_CHUNK = 17;
    /** Worker to server, dense data-parallel: one chunk of a worker's fp32 gradient ({@link GradientChunkFlyweight}). */
    public static final int GRADIENT_CHUNK = 7;
    /**
     * Server to workers, dense data-parallel: one chunk of the fp32 mean of the gradients of the workers in the voter
     * mask ({@link MeanChunkFlyweight}).
     */
    public static final int MEAN_CHUNK = 8;

    private MessageType() {
    }

    /**
     * @param type code.
     * @return a readable name of the code.
     */
    public static String name(final int type) {
        switch (type) {
            case HELLO:
                return "HELLO";
            case VOTE_CHUNK:
                return "VOTE_CHUNK";
            case RESULT_CHUNK:
                return "RESULT_CHUNK";
            case ROUND_ABORT:
                return "ROUND_ABORT";
            case JOIN_NOTICE:
                return "JOIN_NOTICE";
            case HELLO_ACK:
                return "HELLO_ACK";
            case HANDOVER_BEGIN:
                return "HANDOVER_BEGIN";
            case HANDOVER_CHUNK:
                return "HANDOVER_CHUNK";
            case GRADIENT_CHUNK:
                return "GRADIENT_CHUNK";
            case MEAN_CHUNK:
                return "MEAN_CHUNK";
            default:
                return "UNKNOWN(" + type + ")";
        }
    }
}
