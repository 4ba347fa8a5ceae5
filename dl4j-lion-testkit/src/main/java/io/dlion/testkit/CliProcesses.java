package io.dlion.testkit;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@code ./dlion} commands as separate JVMs, started the way the launcher starts them (its JVM flags, this process's
 * classpath) but without the launcher's build step, each in a given working directory and with only the scheduler
 * variables a test gives. {@link #close()} stops whatever is still running: SIGTERM first, so that a server's embedded
 * media driver deletes its directory under {@code /dev/shm} on the way out, then SIGKILL after {@value #STOP_MILLIS} ms.
 */
public final class CliProcesses implements AutoCloseable {
    /** The command-line root every {@code ./dlion} command runs. */
    public static final String DLION_CLI = "io.dlion.cli.DLionCli";
    private static final Set<String> SCHEDULER = Set.of("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "JOB_COMPLETION_INDEX");
    /** How long a process may take to exit on SIGTERM before it is killed. */
    static final long STOP_MILLIS = 10_000;
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
            p.destroy();
        }
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STOP_MILLIS);
        for (final Process p : processes) {
            try {
                if (!p.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    p.destroyForcibly();
                }
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
            }
        }
    }
}
