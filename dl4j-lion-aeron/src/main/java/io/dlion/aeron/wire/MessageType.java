package io.dlion.aeron.wire;

/** Message type codes of the {@link MessageHeaderFlyweight#TYPE_OFFSET} field. Codes are never reused. */
public final class MessageType {
    /** Worker to server: announces a worker of a job with its parameter count; body reserved for credentials. */
    public static final int HELLO = 1;
    /** Worker to server: one chunk of a worker's packed sign vote. */
    public static final int VOTE_CHUNK = 2;
    /** Server to workers: the aggregated result of one chunk, in the {@link Encoding} the header names. */
    public static final int RESULT_CHUNK = 3;
    /**
     * Server to workers: the round named in the header will have no result (fewer voters than the quorum before the
     * deadline); the voter mask field holds the workers that did vote. No body.
     */
    public static final int ROUND_ABORT = 4;
    /**
     * Server to workers: a worker rejoins the job. The voter mask field holds the joining worker's bit, the round
     * field the first round it votes in (and the round it is waited for again from), the worker id field the donor:
     * the live worker that hands the joining worker the job's parameters as of the start of that round. No body.
     */
    public static final int JOIN_NOTICE = 5;
    /** Worker to server, dense data-parallel: one chunk of a worker's fp32 gradient ({@link GradientChunkFlyweight}). */
    public static final int GRADIENT_CHUNK = 6;
    /**
     * Server to workers, dense data-parallel: one chunk of the fp32 mean of the gradients of the workers in the voter
     * mask ({@link MeanChunkFlyweight}).
     */
    public static final int MEAN_CHUNK = 7;

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
            case GRADIENT_CHUNK:
                return "GRADIENT_CHUNK";
            case MEAN_CHUNK:
                return "MEAN_CHUNK";
            default:
                return "UNKNOWN(" + type + ")";
        }
    }
}
