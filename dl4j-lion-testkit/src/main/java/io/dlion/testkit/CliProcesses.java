package io.dlion.testkit;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code ./dlion} commands as separate JVMs, started the way the launcher starts them (its JVM flags, this process's
 * classpath) but without the launcher's build step, each in a given working directory and with only the scheduler
 * variables a test gives. {@link #close()} kills whatever is still running.
 */
public final class CliProcesses implements AutoCloseable {
    /** The command-line root every {@code ./dlion} command runs. */
    public static final String DLION_CLI = "io.dlion.cli.DLionCli";
    private static final Set<String> SCHEDULER = Set.of("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "JOB_COMPLETION_INDEX");
    private final List<Process> processes = new ArrayList<>();

    /**
     * @param dir     working directory (relative paths of the command are resolved there).
     * @param command the command as written, starting with {@code ./dlion}.
     * @param env     scheduler variables to set; any the test JVM inherited are removed first.
     * @return the process, stdout and stderr merged into its input stream.
     * @throws IOException when it cannot start.
     */
    public Process start(final Path dir, final List<String> command, final Map<String, String> env) throws IOException {
        final List<String> java = ChildProcess.java();
        java.addAll(List.of("-Xmx1g", "-cp", System.getProperty("java.class.path"), DLION_CLI));
        java.addAll(command.subList(1, command.size()));
        final ProcessBuilder pb = new ProcessBuilder(java).directory(dir.toFile()).redirectErrorStream(true);
        pb.environment().keySet().removeIf(k -> k.startsWith("SLURM_") || k.startsWith("OMPI_") || SCHEDULER.contains(k));
        pb.environment().putAll(env);
        final Process p = pb.start();
        processes.add(p);
        return p;
    }

    @Override
    public void close() {
        for (final Process p : processes) {
            p.destroyForcibly();
        }
    }
}
