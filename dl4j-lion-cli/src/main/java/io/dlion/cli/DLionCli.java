package io.dlion.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of {@code ./dlion}: the one command-line root, one sub-command per tool, one error policy. */
@Command(name = "dlion", mixinStandardHelpOptions = true, version = "dl4j-lion 0.1.0",
    description = "Distributed Lion for Deeplearning4j: training, the aggregation server, the media driver and fault tools.",
    subcommands = {Demo.class, TrainCommand.class, CompareCommand.class, WorkerCommand.class, ServerCommand.class, DriverCommand.class,
        FaultCommand.class, ChaosCommand.class, GarbageCommand.class, SyntheticWorkerCommand.class, SweepCommand.class, SecretCommand.class,
        AttacksCommand.class})
public final class DLionCli {
    private DLionCli() {
    }

    public static void main(final String[] args) {
        System.exit(commandLine().execute(args));
    }

    /**
     * @return the command line with its error policy: a bad option or value prints one line naming it and
     * exits with 2; other failures print their message and exit with 1.
     */
    public static CommandLine commandLine() {
        final CommandLine cli = new CommandLine(new DLionCli());
        cli.setParameterExceptionHandler((ex, args) -> {
            ex.getCommandLine().getErr().println("dlion: " + ex.getMessage() + " (see --help)");
            return 2;
        });
        cli.setExecutionExceptionHandler((ex, command, parseResult) -> {
            if (ex instanceof IllegalArgumentException) {
                command.getErr().println("dlion: " + ex.getMessage());
                return 2;
            }
            throw ex;
        });
        return cli;
    }
}
