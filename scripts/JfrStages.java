import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a vote-worker's CPU goes, by stage of the round, from a JFR recording of one process
 * ({@code -XX:StartFlightRecording=filename=F.jfr,settings=profile} in {@code DLION_JAVA_OPTS}):
 * <pre>
 *   java scripts/JfrStages.java F.jfr [top]
 * </pre>
 * Every execution sample is given to the first stage, from the top of its stack down, whose class or method it names;
 * samples of the media driver's threads go to their thread. Prints the share of samples per stage, per thread, and the
 * {@code top} (default 15) hottest leaf frames.
 */
public final class JfrStages {

    /** Stage, then the substrings of "Class.method" that put a frame in it, checked from the top of the stack. */
    private static final String[][] STAGES = {
        {"worker: decode result", "Encoding.decode", "BitPlanes.getPlane"},
        {"worker: assemble result", "ResultAssembly."},
        {"worker: apply", "DeltaApplier."},
        {"worker: pack votes", "SignPacker.", "VectorCodec.pack"},
        {"server: encode result", "Encoding.encode", "BitPlanes.putPlane"},
        {"server: count votes", "VoteAggregator.", "VoteAggregation.", "MeanAggregation."},
        {"server: publish", "ResultPublisher."},
        {"server: receive votes", "ChunkWindow.", "ChunkSlot.", "Membership.", "AggregationServer."},
        {"frame MAC", "FrameMac.", "Hmac.", "com.sun.crypto"},
        {"worker: send votes", "VoteChunkFlyweight.encode", "SliceLink.send", "SliceLink.offer"},
        {"worker: receive results", "SliceLink.", "ServerProof.", "RoundLoop.", "VoteSliceCodec.", "AeronVoteExchange."},
        {"harness: digest and votes", "SyntheticVotes."},
        {"aeron client (poll, claim, offer)", "io.aeron."},
        {"idle strategy", "IdleStrategy", "LockSupport.park", "Thread.sleep", "Thread.onSpinWait"},
    };

    private JfrStages() {
    }

    public static void main(final String[] args) throws Exception {
        final int top = args.length > 1 ? Integer.parseInt(args[1]) : 15;
        final Map<String, Integer> stages = new HashMap<>();
        final Map<String, Integer> threads = new HashMap<>();
        final Map<String, Integer> leaves = new HashMap<>();
        int samples = 0;
        try (RecordingFile file = new RecordingFile(Path.of(args[0]))) {
            while (file.hasMoreEvents()) {
                final RecordedEvent event = file.readEvent();
                if (!event.getEventType().getName().equals("jdk.ExecutionSample") || event.getStackTrace() == null) {
                    continue;
                }
                samples++;
                final String thread = event.getThread("sampledThread") == null ? "?" : event.getThread("sampledThread").getJavaName();
                threads.merge(thread, 1, Integer::sum);
                final List<String> frames = new ArrayList<>();
                for (final RecordedFrame frame : event.getStackTrace().getFrames()) {
                    frames.add(frame.getMethod().getType().getName() + "." + frame.getMethod().getName());
                }
                leaves.merge(frames.isEmpty() ? "?" : frames.get(0), 1, Integer::sum);
                stages.merge(stage(thread, frames), 1, Integer::sum);
            }
        }
        System.out.printf("%d execution samples in %s%n", samples, args[0]);
        print("stage", stages, samples, Integer.MAX_VALUE);
        print("thread", threads, samples, Integer.MAX_VALUE);
        print("leaf frame", leaves, samples, top);
    }

    private static String stage(final String thread, final List<String> frames) {
        if (thread.contains("conductor") || thread.contains("sender") || thread.contains("receiver") || thread.startsWith("aeron")) {
            return "media driver / client conductor: " + thread;
        }
        for (final String frame : frames) {
            for (final String[] stage : STAGES) {
                for (int i = 1; i < stage.length; i++) {
                    if (frame.contains(stage[i])) {
                        return stage[0];
                    }
                }
            }
        }
        return "other";
    }

    private static void print(final String what, final Map<String, Integer> counts, final int samples, final int limit) {
        System.out.printf("%n%-6s  %s%n", "share", what);
        counts.entrySet().stream().sorted((a, b) -> b.getValue() - a.getValue()).limit(limit)
            .forEach(e -> System.out.printf("%5.1f%%  %s%n", 100.0 * e.getValue() / samples, e.getKey()));
    }
}
