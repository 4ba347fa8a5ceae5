package io.dlion.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.dlion.testkit.CliProcesses;
import io.dlion.testkit.TestPorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every {@code ./dlion} command in the shell blocks of the README and of docs/guide.md runs as written: the launcher's own commands
 * ({@code test}) are cases of the {@code dlion} script, every other one is parsed and validated by the same
 * command line the launcher runs (hosts and the shell variables {@code $ME}, {@code $I} set as a user on one host
 * would set them), and the separate-hosts job is started on localhost (a server and three worker processes) and
 * must end with every worker holding the same parameters.
 */
class ReadmeCommandsTest {
    private static final Pattern BASH_BLOCK = Pattern.compile("```bash\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern HASH = Pattern.compile("params-sha256 worker=(\\d+) ([0-9a-f]{64})");
    private final CliProcesses processes = new CliProcesses();

    @TempDir
    Path dir;

    @AfterEach
    void tearDown() {
        processes.close();
    }

    @Test
    void shouldParseAndValidateEveryReadmeCommand() throws IOException {
        final List<List<String>> commands = readmeCommands();
        assertTrue(commands.size() >= 8, "the README's commands: " + commands);
        final String launcher = Files.readString(Path.of("../dlion"));
        final Set<String> seen = new LinkedHashSet<>();
        for (final List<String> command : commands) {
            final List<String> args = substitute(command, Map.of("ME", "127.0.0.1", "I", "0"));
            if (launcher.contains("\n    " + args.get(1) + ")\n")) {
                seen.add(args.get(1));
                continue;
            }
            final CommandLine cli = DLionCli.commandLine();
            final ParseResult parsed = cli.parseArgs(args.subList(1, args.size()).toArray(new String[0]));
            final String name = parsed.subcommand() == null ? "(launcher)" : parsed.subcommand().commandSpec().name();
            seen.add(name);
            if (parsed.subcommand() != null && parsed.subcommand().commandSpec().userObject() instanceof WorkerCommand) {
                ((WorkerCommand) parsed.subcommand().commandSpec().userObject()).config();
            }
        }
        assertTrue(seen.containsAll(List.of("test", "demo", "server", "worker")), "commands checked: " + seen);
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void shouldRunTheSeparateHostsJobOnLocalhost() throws Exception {
        final List<List<String>> block = readmeCommands().stream()
            .filter(c -> c.contains("--params") && c.contains("203530") && c.contains("--rule") || c.contains("--model") && c.contains("mlp"))
            .toList();
        assertEquals(2, block.size(), "the separate-hosts block: a server and a worker command: " + block);
        final int port = TestPorts.freeUdpPort();
        final Map<String, String> hostIsLocal = Map.of("10.0.0.1:40123:40124", "127.0.0.1:" + port + ":" + (port + 1));
        final List<String> server = new ArrayList<>(substitute(block.get(0), hostIsLocal));
        server.addAll(List.of("--status-interval", "0"));
        start(server);
        final List<Process> workers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            final List<String> worker = new ArrayList<>(substitute(block.get(1), Map.of("ME", "127.0.0.1", "I", Integer.toString(i))));
            replace(worker, "10.0.0.1", "127.0.0.1");
            // smaller data, the same options otherwise
            worker.addAll(List.of("--vote-port", Integer.toString(port), "--control-port", Integer.toString(port + 1),
                "--train-limit", "1200", "--test-limit", "200"));
            workers.add(start(worker));
        }
        final Set<String> hashes = new LinkedHashSet<>();
        for (final Process w : workers) {
            assertTrue(w.waitFor(4, TimeUnit.MINUTES), "worker finished");
            final String out = new String(w.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, w.exitValue(), out);
            final Matcher m = HASH.matcher(out);
            assertTrue(m.find(), "params-sha256 line: " + out);
            hashes.add(m.group(2));
        }
        assertEquals(1, hashes.size(), "all three workers end with the same parameters: " + hashes);
    }

    /** @return every {@code ./dlion} command of the README's bash blocks, continuation lines joined, comments cut. */
    static List<List<String>> readmeCommands() throws IOException {
        // the README's two commands, and the guide's, which holds what the README points to
        final String readme = Files.readString(Path.of("../README.md")) + Files.readString(Path.of("../docs/guide.md"));
        final List<List<String>> commands = new ArrayList<>();
        final Matcher block = BASH_BLOCK.matcher(readme);
        while (block.find()) {
            final String joined = block.group(1).replace("\\\n", " ");
            for (final String line : joined.split("\n")) {
                final String code = line.replaceAll("\\s+#.*$", "").trim();
                if (code.startsWith("./dlion ")) {
                    commands.add(List.of(code.split("\\s+")));
                }
            }
        }
        return commands;
    }

    /** @return the command with {@code $NAME} replaced from the map, and whole arguments equal to a key replaced. */
    private List<String> substitute(final List<String> command, final Map<String, String> values) throws IOException {
        final Path secret = dir.resolve("job.secret");
        if (!Files.exists(secret)) {
            Files.write(secret, "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII));
            Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
        }
        final List<String> out = new ArrayList<>();
        for (final String arg : command) {
            String a = values.getOrDefault(arg, arg);
            for (final Map.Entry<String, String> v : values.entrySet()) {
                a = a.replace("$" + v.getKey(), v.getValue());
            }
            a = a.replace("/shared/job-1/sync", dir.resolve("sync").toString()).replace("/data/cifar-10-batches-bin", dir.toString());
            if (a.equals("job.secret") || a.equals("FILE")) {
                a = secret.toString();
            }
            out.add(a);
        }
        return out;
    }

    private static void replace(final List<String> args, final String from, final String to) {
        args.replaceAll(a -> a.equals(from) ? to : a);
    }

    private Process start(final List<String> command) throws IOException {
        return processes.start(dir, command, Map.of());
    }
}
