package io.dlion.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import io.dlion.testkit.AttackRun;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./dlion attacks}: a stranger's attacks on a running job of real processes over UDP loopback
 * ({@link AttackRun}); prints and writes {@code report.md}, a table of attack, detected, counted and job unaffected.
 * Exit code 0 when every worker got the undisturbed job's result every round and every attack was counted.
 */
@Command(name = "attacks", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Attack run: a stranger without the secret attacks a running job (server and worker processes, UDP loopback).")
public final class AttacksCommand implements Callable<Integer> {
    @Option(names = "--workers", description = "worker processes per job, at least 3 (default: ${DEFAULT-VALUE})")
    int workers = 3;

    @Option(names = "--params", description = "parameters of the synthetic votes (default: ${DEFAULT-VALUE})")
    long params = 1_000_003;

    @Option(names = "--rounds", description = "rounds every worker runs (default: ${DEFAULT-VALUE})")
    int rounds = 300;

    @Option(names = "--seed", description = "seed of the votes (default: ${DEFAULT-VALUE})")
    long seed = 7;

    @Option(names = "--out", description = "directory for the logs and report.md (default: ${DEFAULT-VALUE})")
    Path out = Path.of("runs/attacks");

    @Override
    public Integer call() throws Exception {
        final AttackRun.Report report = new AttackRun(workers, params, rounds, seed, out, System.out).run();
        final String markdown = report.markdown();
        System.out.println(markdown);
        Files.writeString(out.resolve("report.md"), markdown);
        final boolean ok = report.unaffected() && report.allCounted();
        System.out.println(ok ? "attack run: OK" : "attack run: FAILED (see the report and the logs in " + out + ")");
        return ok ? 0 : 1;
    }
}
