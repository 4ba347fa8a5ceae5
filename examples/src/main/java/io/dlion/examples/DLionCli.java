package io.dlion.examples;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of {@code ./dlion}: one sub-command per example. */
@Command(name = "dlion", mixinStandardHelpOptions = true, version = "dl4j-lion 0.1.0",
    description = "Distributed Lion for Deeplearning4j: examples and tools.",
    subcommands = {Demo.class})
public final class DLionCli {
    private DLionCli() {
    }

    public static void main(final String[] args) {
        System.exit(new CommandLine(new DLionCli()).execute(args));
    }
}
