package io.dlion.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.dlion.testkit.ChildProcess;
import io.dlion.testkit.chaos.ChaosChecker;
import io.dlion.testkit.chaos.ChaosRun;
import io.dlion.testkit.chaos.FaultKind;
import io.dlion.testkit.chaos.Injected;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The chaos soak of real processes ({@code ./dlion chaos}): a sharded job of worker processes over UDP loopback under the
 * seeded nemesis, checked by the history checker. The default suite runs one short soak (3 workers, one minute: a kill of
 * the relay and its restart, a stop past the deadline, a loss burst, garbage, as the seed draws them); the slow suite runs
 * three seeds for ten minutes each with every fault kind. A failure names the seed and the command that replays it. A run
 * stopped before its end (SIGTERM) kills what it started and removes their Aeron directories.
 */
class ChaosCommandTest {

    private static ChaosRun.Result chaos(final String... args) throws Exception {
        final ChaosCommand command = new ChaosCommand();
        new CommandLine(command).parseArgs(args);
        final ChaosRun.Context ctx = command.context();
        final ChaosRun.Result result = new ChaosRun(ctx, new PrintStream(System.out, true)).run();
        assertTrue(result.ok(), "the chaos run failed; replay with: " + ctx.replay() + "\n" + result.summary());
        return result;
    }

    @Test
    void shouldRejectBadOptionsNamingThem() {
        for (final String[] bad : List.of(new String[] {"--minutes", "1", "--seed", "1", "--kinds", "kill-all"},
            new String[] {"--minutes", "0", "--seed", "1"}, new String[] {"--minutes", "1", "--seed", "1", "--workers", "2"},
            new String[] {"--minutes", "1", "--seed", "1", "--min-voters", "4"})) {
            final ChaosCommand command = new ChaosCommand();
            new CommandLine(command).parseArgs(bad);
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, command::context);
            final String option = bad[bad.length - 2];
            assertTrue(e.getMessage().contains(option.equals("--seed") ? "--minutes" : option), option + ": " + e.getMessage());
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void shouldHoldEveryPropertyInAShortSoak() throws Exception {
        final ChaosRun.Result result = chaos("--workers", "3", "--min-voters", "1", "--minutes", "1", "--seed", "5", "--mean-gap-s", "6",
            // 10 epochs (1,250 rounds): with 6, a quiet machine (21 rounds/s) had under 20 s of rounds left at the relay's
            // kill (15 s in), and the nemesis skipped it for the quiet end
            "--warm-up-s", "15", "--quiet-end-s", "20", "--epochs", "10", "--kinds", "kill-relay,stop,loss,garbage",
            // a relay's failover is 5 s of silence plus the fresh server's round deadline plus a HELLO: 7.0-7.3 s measured here,
            // against the 8 s of the default margin; the suite runs beside other builds, so it allows 2 s more
            "--failover-margin-s", "8",
            "--out", Path.of("target", "chaos-run-test").toString());
        final Map<FaultKind, Integer> kinds = ChaosChecker.byKind(result.injected());
        final long distinct = kinds.values().stream().filter(c -> c > 0).count();
        assertTrue(result.injected().size() >= 3 && distinct >= 3, "at least 3 faults of 3 kinds injected: " + kinds);
        assertTrue(kinds.get(FaultKind.KILL_RELAY) >= 1, "the relay was killed: " + kinds);
        assertTrue(result.verdict().recoveries().stream().anyMatch(r -> r.measured() && "failover".equals(r.measure())),
            "a relay's failover was measured: " + result.verdict().recoveries());
        assertTrue(result.verdict().recoveries().stream().anyMatch(r -> r.measured() && "rejoin".equals(r.measure())),
            "a restarted worker rejoined: " + result.verdict().recoveries());
    }

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void shouldLeaveNothingBehindWhenStoppedBeforeItsEnd() throws Exception {
        final Path out = Path.of("target", "chaos-stopped-test").toAbsolutePath();
        final Set<String> before = chaosDirectories();
        final ChildProcess run = ChildProcess.start("chaos", DLionCli.class.getName(), List.of("chaos", "--workers", "3", "--min-voters", "1",
            "--minutes", "1", "--seed", "7", "--epochs", "4", "--out", out.toString()), "512m", out.resolveSibling("chaos-stopped-test.log"));
        try {
            final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
            while (run.lastLine(l -> l.contains("every worker applied a round")) == null) {
                assertTrue(run.isAlive() && System.nanoTime() - deadline < 0, "the job did not start: " + run.lines());
                Thread.sleep(200);
            }
            run.stop(); // SIGTERM, as Ctrl-C or a scheduler's cancel
        } finally {
            ChildProcess.killLiving(List.of(run));
        }
        final String said = run.lastLine(l -> l.contains("stopped before its end"));
        assertTrue(said != null && said.contains("3 processes killed"), "the run said what it stopped: " + run.lines());
        try (Stream<ProcessHandle> all = ProcessHandle.allProcesses()) {
            final List<String> left = all.map(p -> p.info().commandLine().orElse("")).filter(c -> c.contains(out.toString())).toList();
            assertEquals(List.of(), left, "no process of the run left");
        }
        assertEquals(before, chaosDirectories(), "no Aeron directory of the run left in /dev/shm");
    }

    private static Set<String> chaosDirectories() throws IOException {
        try (Stream<Path> shm = Files.list(Path.of("/dev/shm"))) {
            return shm.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("aeron-chaos-")).collect(Collectors.toSet());
        }
    }

    @Test
    @Tag("slow")
    @Timeout(value = 75, unit = TimeUnit.MINUTES)
    void shouldHoldEveryPropertyForThreeSeedsOfTenMinutes() throws Exception {
        for (final long seed : List.of(101L, 202L, 303L)) {
            final ChaosRun.Result result = chaos("--workers", "4", "--minutes", "10", "--seed", Long.toString(seed), "--mean-gap-s", "12",
                "--out", Path.of("target", "chaos-soak-" + seed).toString());
            final List<Injected> injected = result.injected();
            assertTrue(injected.size() >= 20, "seed " + seed + ": " + injected.size() + " faults injected");
        }
    }
}
