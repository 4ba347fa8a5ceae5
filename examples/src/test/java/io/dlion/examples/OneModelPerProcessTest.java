package io.dlion.examples;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.dlion.testkit.ChildProcess;
import io.dlion.testkit.Frames;
import io.dlion.testkit.TestPorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The guide's "one model per process" snippet (docs/guide.md) is this example's code, and it works as a user would run it: a server
 * process and three worker processes over UDP loopback, one worker killed and started again with rejoin, all three
 * ending with the same parameters.
 */
class OneModelPerProcessTest {
    private static final int WORKERS = 3;
    private final List<ChildProcess> children = new ArrayList<>();

    @TempDir
    Path dir;

    @AfterEach
    void tearDown() throws InterruptedException {
        ChildProcess.killLiving(children);
    }

    @Test
    void shouldShowTheExampleCodeInTheReadme() throws IOException {
        final String example = Files.readString(Path.of("src/main/java/io/dlion/examples/OneModelPerProcess.java"));
        final Matcher m = Pattern.compile("// README:begin\\n(.*?)\\n\\s*// README:end", Pattern.DOTALL).matcher(example);
        assertTrue(m.find(), "README markers in the example");
        final String snippet = dedent(m.group(1));
        final String guide = Files.readString(Path.of("../docs/guide.md"));
        assertTrue(guide.contains(snippet), "docs/guide.md shows the example's code verbatim:\n" + snippet);
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void shouldTrainThreeWorkerProcessesAndRejoinAKilledOneBitIdentical() throws Exception {
        final int votePort = TestPorts.freeUdpPort();
        final int controlPort = votePort + 1;
        final Path sync = dir.resolve("sync");
        final Path secret = Frames.writeSecret(dir.resolve("job.secret"));
        children.add(ChildProcess.start("server", "io.dlion.cli.DLionCli", List.of("server", "--job", "1", "--workers", "" + WORKERS,
            "--params", "203530", "--udp", "127.0.0.1:" + votePort + ":" + controlPort, "--round-timeout-ms", "10000",
            "--status-interval", "1", "--secret-file", secret.toString()), "1g", dir.resolve("server.log")));
        final ChildProcess[] workers = new ChildProcess[WORKERS];
        for (int i = 0; i < WORKERS; i++) {
            workers[i] = worker(i, votePort, sync, false);
        }
        final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (workers[2].lastLine(l -> l.contains("Score at iteration 200")) == null) {
            assertTrue(System.nanoTime() < deadline && workers[2].isAlive(), "worker 2 reached iteration 200: " + workers[2].lines());
            Thread.sleep(50);
        }
        workers[2].kill();
        workers[2] = worker(2, votePort, sync, true);
        final List<String> hashes = new ArrayList<>();
        for (final ChildProcess w : workers) {
            hashes.add(w.awaitParamsHash(420));
        }
        assertTrue(workers[2].lastLine(l -> l.contains("took worker")) != null, "worker 2 rejoined: " + workers[2].lines());
        assertEquals(1, hashes.stream().distinct().count(), "all workers end bit-identical: " + hashes);
    }

    private ChildProcess worker(final int id, final int votePort, final Path sync, final boolean rejoin) throws IOException {
        final List<String> args = new ArrayList<>(List.of("127.0.0.1", "127.0.0.1", "" + votePort, "" + id, "" + WORKERS, "4", "12000",
            sync.toString(), dir.resolve("job.secret").toString()));
        if (rejoin) {
            args.add("--rejoin");
        }
        final String name = "worker-" + id + (rejoin ? "-rejoined" : "");
        final ChildProcess child = ChildProcess.start(name, OneModelPerProcess.class.getName(), args, "1g", dir.resolve(name + ".log"));
        children.add(child);
        return child;
    }

    private static String dedent(final String text) {
        final List<String> lines = text.lines().collect(Collectors.toList());
        int indent = Integer.MAX_VALUE;
        for (final String l : lines) {
            if (!l.isBlank()) {
                indent = Math.min(indent, l.length() - l.stripLeading().length());
            }
        }
        final int cut = indent;
        return lines.stream().map(l -> l.length() >= cut ? l.substring(cut) : l.strip()).collect(Collectors.joining("\n"));
    }
}
