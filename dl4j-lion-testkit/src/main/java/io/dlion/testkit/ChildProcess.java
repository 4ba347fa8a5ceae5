package io.dlion.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * One JVM of a fault run (server, worker or garbage sender) on this JVM's class path and flags: its output goes to a
 * log file and is kept, line by line, for the run to read.
 */
public final class ChildProcess {
    /** System property with the path of the project's JVM argument file, {@code jvm.args}; Surefire sets it. */
    public static final String JVM_ARGFILE_PROP_NAME = "dlion.jvmArgfile";
    /** A training worker's last line of its parameters' digest. */
    private static final java.util.regex.Pattern PARAMS_HASH = java.util.regex.Pattern.compile("params-sha256 worker=\\d+ ([0-9a-f]{64})");

    private final String name;
    private final Process process;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final List<Long> times = new CopyOnWriteArrayList<>();
    private final Thread reader;

    private ChildProcess(final String name, final Process process, final Path log) throws IOException {
        this.name = name;
        this.process = process;
        final PrintWriter file = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8), true);
        this.reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
                 PrintWriter out = file) {
                String line;
                while ((line = in.readLine()) != null) {
                    times.add(System.nanoTime());
                    lines.add(line);
                    out.println(line);
                }
            } catch (final IOException ignored) {
                // the process died: its output ends here
            }
        }, "fault-run-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * The JVM flags a child JVM of a test needs: the project's argument file ({@code @jvm.args}, whose path Surefire
     * passes as {@value #JVM_ARGFILE_PROP_NAME}), or, when this JVM was not started by Surefire, the {@code --add-}
     * flags this JVM runs with.
     *
     * @return the flags, to go before {@code -cp}.
     */
    public static List<String> jvmFlags() {
        final String argfile = System.getProperty(JVM_ARGFILE_PROP_NAME);
        final List<String> flags = new ArrayList<>();
        if (argfile != null && !argfile.isBlank() && Files.isRegularFile(Path.of(argfile))) {
            flags.add("@" + argfile);
        } else {
            for (final String flag : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
                if (flag.startsWith("--add-")) {
                    flags.add(flag);
                }
            }
        }
        return flags;
    }

    /**
     * @return the start of a child JVM's command line, to add to: this JVM's {@code java} and {@link #jvmFlags()}.
     */
    public static List<String> java() {
        final List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(jvmFlags());
        return command;
    }

    /**
     * @param name      for logs and messages.
     * @param mainClass the class to run.
     * @param args      its arguments.
     * @param heap      the child's -Xmx, e.g. "2g".
     * @param log       file the child's output (stdout and stderr) is written to.
     * @return the running child.
     */
    public static ChildProcess start(final String name, final String mainClass, final List<String> args, final String heap, final Path log)
        throws IOException {
        return start(name, System.getProperty("java.class.path"), mainClass, List.of(), args, heap, log);
    }

    /**
     * @param name      for logs and messages.
     * @param mainClass the class to run.
     * @param jvmFlags  more JVM flags, e.g. {@code -Dname=value} system properties.
     * @param args      its arguments.
     * @param heap      the child's -Xmx, e.g. "2g".
     * @param log       file the child's output (stdout and stderr) is written to.
     * @return the running child.
     */
    public static ChildProcess start(final String name, final String mainClass, final List<String> jvmFlags, final List<String> args,
        final String heap, final Path log) throws IOException {
        return start(name, System.getProperty("java.class.path"), mainClass, jvmFlags, args, heap, log);
    }

    /**
     * @param name      for logs and messages.
     * @param classPath the child's class path (e.g. this one without a module's classes).
     * @param mainClass the class to run.
     * @param args      its arguments.
     * @param heap      the child's -Xmx, e.g. "2g".
     * @param log       file the child's output (stdout and stderr) is written to.
     * @return the running child.
     */
    public static ChildProcess start(final String name, final String classPath, final String mainClass, final List<String> args,
        final String heap, final Path log) throws IOException {
        return start(name, classPath, mainClass, List.of(), args, heap, log);
    }

    private static ChildProcess start(final String name, final String classPath, final String mainClass, final List<String> jvmFlags,
        final List<String> args, final String heap, final Path log) throws IOException {
        final List<String> command = java();
        for (final String flag : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (flag.startsWith("-Dorg.bytedeco") || flag.startsWith("-Djava.io.tmpdir")) {
                command.add(flag);
            }
        }
        command.addAll(jvmFlags);
        command.add("-Xmx" + heap);
        command.add("-cp");
        command.add(classPath);
        command.add(mainClass);
        command.addAll(args);
        return new ChildProcess(name, new ProcessBuilder(command).redirectErrorStream(true).start(), log);
    }

    public String name() {
        return name;
    }

    /**
     * Wait for a training worker ({@code ./dlion worker}, an example) to exit and take the parameters' SHA-256 it printed
     * last ({@code params-sha256 worker=W HEX}).
     *
     * @param timeoutSeconds how long to wait for the exit.
     * @return the digest, hex.
     * @throws IllegalStateException when the process did not exit with 0 in time or printed no digest, with its output.
     */
    public String awaitParamsHash(final long timeoutSeconds) throws InterruptedException {
        final int exit = await(timeoutSeconds);
        if (exit != 0) {
            throw new IllegalStateException(name + " exited with " + exit + ": " + lines);
        }
        final String line = lastLine(l -> PARAMS_HASH.matcher(l).find());
        if (line == null) {
            throw new IllegalStateException(name + " printed no params-sha256 line: " + lines);
        }
        final java.util.regex.Matcher m = PARAMS_HASH.matcher(line);
        m.find();
        return m.group(1);
    }

    /**
     * Kill (SIGKILL) those still alive: a test's tear-down.
     *
     * @param children the processes a test started.
     */
    public static void killLiving(final Iterable<ChildProcess> children) throws InterruptedException {
        for (final ChildProcess child : children) {
            if (child.isAlive()) {
                child.kill();
            }
        }
    }

    /** @return every line printed so far. */
    public List<String> lines() {
        return lines;
    }

    /** @return the last line printed so far that matches, or null. */
    public String lastLine(final Predicate<String> match) {
        for (int i = lines.size() - 1; i >= 0; i--) {
            if (match.test(lines.get(i))) {
                return lines.get(i);
            }
        }
        return null;
    }

    /**
     * @param afterNs  a {@link System#nanoTime()}.
     * @param match    which lines.
     * @return the {@link System#nanoTime()} at which the first matching line after {@code afterNs} was read, or -1.
     */
    public long timeOfFirstLine(final long afterNs, final Predicate<String> match) {
        for (int i = 0; i < lines.size(); i++) {
            if (times.get(i) - afterNs > 0 && match.test(lines.get(i))) {
                return times.get(i);
            }
        }
        return -1;
    }

    /** @return the process id. */
    public long pid() {
        return process.pid();
    }

    /**
     * Send a signal with {@code kill -SIG pid}, e.g. STOP or CONT.
     *
     * @param signal the signal's name without SIG.
     * @throws IOException when {@code kill} failed.
     */
    public void signal(final String signal) throws IOException, InterruptedException {
        final Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).redirectErrorStream(true).start();
        final String said = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (kill.waitFor() != 0) {
            throw new IOException("kill -" + signal + " " + process.pid() + " failed: " + said);
        }
    }

    /** @return the exit code, or null while the process runs. */
    public Integer exitCode() {
        return process.isAlive() ? null : process.exitValue();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** SIGKILL, as a crash: no shutdown hook runs; returns once the process has exited. */
    public void kill() throws InterruptedException {
        sendKill();
        awaitExit();
    }

    /**
     * SIGKILL without waiting for the exit: the kernel tears a killed process down (its memory, then its sockets) in
     * anything from milliseconds to seconds, and a kill of several processes at once should not wait for each in turn.
     */
    public void sendKill() {
        process.destroyForcibly();
    }

    /** Waits for the exit (at most 30 s), and for the last lines of its output. */
    public void awaitExit() throws InterruptedException {
        process.waitFor(30, TimeUnit.SECONDS);
        reader.join(5_000);
    }

    /**
     * SIGTERM and wait for the exit (the shutdown hooks print final lines).
     *
     * @return the exit code.
     */
    public int stop() throws InterruptedException {
        // the handle's destroy sends SIGTERM and leaves the output pipe open; Process.destroy() would close it and lose
        // what the shutdown hooks print
        process.toHandle().destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        reader.join(5_000);
        return process.exitValue();
    }

    /**
     * @param timeoutSeconds how long to wait.
     * @return the exit code, or -1 when the process was still running and has been killed.
     */
    public int await(final long timeoutSeconds) throws InterruptedException {
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            kill();
            return -1;
        }
        reader.join(5_000);
        return process.exitValue();
    }
}
