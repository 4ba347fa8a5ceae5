package io.dlion.testkit.chaos;

import java.util.HashMap;
import java.util.Map;

/**
 * One line of a worker's round history ({@link io.dlion.job.RoundHistory}), parsed.
 *
 * @param timeMs  the wall clock of the line, ms.
 * @param worker  the worker.
 * @param type    {@code start}, {@code applied}, {@code joined} or {@code epoch}.
 * @param round   the round ({@code applied}, {@code joined}), or the rounds done ({@code epoch}); -1 for {@code start}.
 * @param digest  the result digest ({@code applied}) or the parameters' ({@code epoch}); null otherwise.
 * @param voters  the voter count ({@code applied}), the donor ({@code joined}), the epoch ({@code epoch}); -1 otherwise.
 * @param mask    the voter set's words ({@code applied}), else null.
 */
public record HistoryEvent(long timeMs, int worker, String type, long round, String digest, int voters, long[] mask) {
    /** Event types. */
    public static final String START = "start";
    public static final String APPLIED = "applied";
    public static final String JOINED = "joined";
    public static final String EPOCH = "epoch";

    /**
     * @param line a history line.
     * @return the event.
     * @throws IllegalArgumentException naming the line when it is not one.
     */
    public static HistoryEvent parse(final String line) {
        final String[] parts = line.trim().split(" ");
        if (parts.length < 3) {
            throw new IllegalArgumentException("not a history line: '" + line + "'");
        }
        final Map<String, String> f = new HashMap<>();
        for (final String p : parts) {
            final int eq = p.indexOf('=');
            if (eq > 0) {
                f.put(p.substring(0, eq), p.substring(eq + 1));
            }
        }
        try {
            final long t = Long.parseLong(f.get("t"));
            final int w = Integer.parseInt(f.get("w"));
            final String type = parts[2];
            switch (type) {
                case START:
                    return new HistoryEvent(t, w, type, -1, null, -1, null);
                case APPLIED: {
                    final String[] words = f.get("m").split("\\.");
                    final long[] mask = new long[words.length];
                    for (int i = 0; i < words.length; i++) {
                        mask[i] = Long.parseUnsignedLong(words[i], 16);
                    }
                    return new HistoryEvent(t, w, type, Long.parseLong(f.get("r")), f.get("d"), Integer.parseInt(f.get("v")), mask);
                }
                case JOINED:
                    return new HistoryEvent(t, w, type, Long.parseLong(f.get("r")), null, Integer.parseInt(f.get("donor")), null);
                case EPOCH:
                    return new HistoryEvent(t, w, type, Long.parseLong(f.get("r")), f.get("p"), Integer.parseInt(f.get("e")), null);
                default:
                    throw new IllegalArgumentException("unknown history event '" + type + "' in '" + line + "'");
            }
        } catch (final NullPointerException | NumberFormatException e) {
            throw new IllegalArgumentException("malformed history line '" + line + "': " + e, e);
        }
    }

    /** @return true when the voter set of an {@code applied} event holds worker {@code w}. */
    public boolean voted(final int w) {
        return mask != null && (w >>> 6) < mask.length && (mask[w >>> 6] & (1L << (w & 63))) != 0;
    }
}
