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
            default:
                return "UNKNOWN(" + type + ")";
        }
    }
}
