package io.dlion.examples;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.dlion.testkit.ChildProcess;
import io.dlion.testkit.Frames;
import io.dlion.testkit.TestPorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@link ShardedJob} example as a user runs it, with the library's classes only (the command line's module is taken
 * off the processes' class path): four rank processes over UDP loopback, each serving one slice. Rank 2 is killed with
 * SIGKILL after its first epoch; rank 3, the next live rank, takes slice 2 over and rank 1 does not; rank 2 restarts
 * with {@code --rejoin}, takes a live rank's parameters through slice 0's server, and all four end with the same
 * parameters' SHA-256.
 */
@Tag("slow")
class ShardedJobTest {
    private static final int RANKS = 4;
    private static final int KILLED = 2;
    private final List<ChildProcess> children = new ArrayList<>();

    @TempDir
    Path dir;

    @AfterEach
    void tearDown() throws InterruptedException {
        ChildProcess.killLiving(children);
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void shouldTakeOverADeadRanksSliceAndRejoinItBitIdentical() throws Exception {
        final String classPath = libraryClassPath();
        assertFalse(classPath.contains("dl4j-lion-cli"), classPath);
        final int basePort = TestPorts.freeUdpPorts(2 * RANKS);
        final Path secret = Frames.writeSecret(dir.resolve("job.secret"));
        final ChildProcess[] ranks = new ChildProcess[RANKS];
        for (int r = 0; r < RANKS; r++) {
            ranks[r] = rank(classPath, r, basePort, secret, false);
        }
        await(ranks[KILLED], l -> l.startsWith("epoch 1 done"), 300, "rank " + KILLED + " finished its first epoch");
        ranks[KILLED].kill();
        await(ranks[KILLED + 1], l -> l.startsWith("takes over slice " + KILLED + " "), 120,
            "rank " + (KILLED + 1) + ", the next live rank, serves slice " + KILLED);
        ranks[KILLED] = rank(classPath, KILLED, basePort, secret, true);
        final List<String> hashes = new ArrayList<>();
        for (final ChildProcess r : ranks) {
            hashes.add(r.awaitParamsHash(420));
        }
        assertNull(ranks[KILLED - 1].lastLine(l -> l.startsWith("takes over")), "only the next live rank serves the slice: "
            + ranks[KILLED - 1].lines());
        assertNull(ranks[KILLED].lastLine(l -> l.startsWith("serves slice")), "the rejoined rank serves nothing: " + ranks[KILLED].lines());
        assertNotNull(ranks[KILLED].lastLine(l -> l.contains("took worker")), "rank " + KILLED + " took a live rank's parameters: "
            + ranks[KILLED].lines());
        assertEquals(1, hashes.stream().distinct().count(), "all ranks end bit-identical: " + hashes);
        System.out.println("ShardedJobTest: " + ranks[KILLED].lastLine(l -> l.contains("took worker")) + "; params-sha256 " + hashes.get(0));
    }

    /** @return this JVM's class path without the command line's module: a program that has the library only. */
    private static String libraryClassPath() {
        return Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
            .filter(entry -> !entry.contains("dl4j-lion-cli")).collect(Collectors.joining(File.pathSeparator));
    }

    private ChildProcess rank(final String classPath, final int r, final int basePort, final Path secret, final boolean rejoin)
        throws IOException {
        final String name = "rank-" + r + (rejoin ? "-rejoined" : "");
        final List<String> args = new ArrayList<>(List.of(Integer.toString(r), String.join(",", Collections.nCopies(RANKS, "127.0.0.1")),
            Integer.toString(basePort), "4", "24000", secret.toString(), "sharded-job-test"));
        if (rejoin) {
            args.add("--rejoin");
        }
        final ChildProcess child = ChildProcess.start(name, classPath, ShardedJob.class.getName(), args, "768m", dir.resolve(name + ".log"));
        children.add(child);
        return child;
    }

    private static void await(final ChildProcess child, final Predicate<String> line, final long seconds, final String what)
        throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (child.lastLine(line) == null) {
            assertTrue(System.nanoTime() < deadline && child.isAlive(), what + ": " + child.lines());
            Thread.sleep(50);
        }
    }
}
