package io.dlion.cli;

import java.util.List;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@code ./dlion compare}: the "Produced by" line of results.md names the command as it was run. */
class CompareCommandTest {

    private static String produced(final String... args) {
        final CompareCommand command = new CompareCommand();
        new CommandLine(command).parseArgs(args);
        return String.join(" ", command.commandLine());
    }

    @Test
    void shouldNameTheLabRateAndTopologyAndNoTransportForNetlabRuns() {
        assertEquals("./dlion compare --netlab 100mbit --topology star --dataset fashion-mnist --model mlp --workers 8 --epochs 2"
                + " --batch 128 --seed 42 --lr-lion 0.000300000 --lr-adamw 0.00100000 --train-limit 6000 --only mavo,dense-lion"
                + " --target-accuracy 0.8 --out /tmp/lab",
            produced("--netlab", "100mbit", "--topology", "star", "--workers", "8", "--batch", "128", "--train-limit", "6000",
                "--only", "mavo,dense-lion", "--out", "/tmp/lab"));
    }

    @Test
    void shouldNameTheTransportForRunsInThisMachine() {
        final String line = produced("--transport", "aeron-udp", "--workers", "3", "--weight-decay-lion", "0.1", "--out", "/tmp/cmp");
        assertEquals(List.of("./dlion compare --dataset fashion-mnist --model mlp --workers 3 --transport aeron-udp --epochs 2"
            + " --batch 128 --seed 42 --lr-lion 0.000300000 --lr-adamw 0.00100000 --weight-decay-lion 0.100000 --target-accuracy 0.8"
            + " --out /tmp/cmp"), List.of(line));
    }
}
