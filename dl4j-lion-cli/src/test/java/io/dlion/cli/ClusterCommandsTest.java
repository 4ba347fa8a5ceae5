package io.dlion.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.dlion.testkit.CliProcesses;
import io.dlion.testkit.Frames;
import io.dlion.testkit.TestPorts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The server and worker command lines of {@code docs/cluster.md} — the Slurm batch script, the torchrun-style
 * commands and the Kubernetes manifest's containers — run on localhost with only the variables the scheduler would
 * set (no rank or address flags), and every worker ends with the same parameters.
 */
class ClusterCommandsTest {
    private static final Pattern HASH = Pattern.compile("params-sha256 worker=(\\d+) ([0-9a-f]{64})");
    private static final int WORKERS = 4;
    private static final List<String> SMALL = List.of("--train-limit", "1280", "--test-limit", "200");
    private final CliProcesses processes = new CliProcesses();

    @TempDir
    Path dir;

    @AfterEach
    void tearDown() {
        processes.close();
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void shouldRunTheSlurmScriptsCommandsWithSlurmsVariables() throws Exception {
        final String script = block("bash", "#SBATCH");
        final List<String> server = command(line(script, "./dlion server"));
        final Matcher srun = Pattern.compile("srun bash -c '(.*)'").matcher(script);
        assertTrue(srun.find(), "the srun line");
        final Map<String, String> job = Map.of("SLURM_NTASKS", "" + WORKERS, "SLURM_JOB_NODELIST", "localhost", "SLURM_JOB_ID", "77");
        final Map<String, String> batchStep = new HashMap<>(job);
        batchStep.put("SLURM_PROCID", "0");
        start(server, batchStep);
        final List<Process> workers = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            final Map<String, String> task = new HashMap<>(job);
            task.put("SLURM_PROCID", "" + i);
            task.put("SLURM_LOCALID", "" + i % 2);
            workers.add(start(with(command(srun.group(1).replace("$SLURM_PROCID", "" + i)), SMALL), task));
        }
        assertSameParameters(workers);
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void shouldRunTheTorchrunStyleCommandsWithTheirVariables() throws Exception {
        final String commands = block("bash", "--out runs/worker-$RANK");
        final int port = TestPorts.freeUdpPort();
        final Map<String, String> env = Map.of("WORLD_SIZE", "" + WORKERS, "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", "" + port);
        final Map<String, String> rank0 = new HashMap<>(env);
        rank0.put("RANK", "0");
        start(command(line(commands, "./dlion server")), rank0);
        assertSameParameters(startRanks(line(commands, "./dlion worker"), env, ""));
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void shouldRunTheWorkersWithTheServerInsideRankZero() throws Exception {
        final String commands = block("bash", "--with-server");
        final int port = TestPorts.freeUdpPort();
        final Map<String, String> env = Map.of("WORLD_SIZE", "" + WORKERS, "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", "" + port);
        final List<String> outputs = assertSameParameters(startRanks(line(commands, "./dlion worker"), env, ""));
        assertTrue(outputs.get(0).contains("worker 0 hosts the aggregation server"), outputs.get(0));
        assertTrue(outputs.get(0).contains("rounds="), "rank 0 printed its server's counters: " + outputs.get(0));
        for (int i = 1; i < WORKERS; i++) {
            assertTrue(!outputs.get(i).contains("hosts the aggregation server"), "only rank 0 hosts it: " + outputs.get(i));
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void shouldRunTheKubernetesContainersWithTheJobCompletionIndex() throws Exception {
        final String manifest = block("yaml", "completionMode: Indexed");
        final List<List<String>> args = new ArrayList<>();
        final Matcher m = Pattern.compile("args: \\[(.*)\\]").matcher(manifest);
        while (m.find()) {
            final List<String> a = new ArrayList<>(List.of("./dlion"));
            for (final String quoted : m.group(1).split(",\\s*")) {
                a.add(quoted.trim().replaceAll("^\"|\"$", ""));
            }
            args.add(a);
        }
        assertEquals(2, args.size(), "the server's and the workers' container args");
        args.forEach(a -> a.replaceAll(arg -> arg.equals("/etc/dlion/job.secret") ? "job.secret" : arg));
        start(args.get(0), Map.of());
        final List<Process> workers = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            // the Service name resolves to the server pod; on one machine that is loopback
            final List<String> worker = new ArrayList<>(args.get(1));
            final String out = dir.resolve("runs-" + i).toString();
            worker.replaceAll(a -> a.equals("dlion-server") ? "127.0.0.1" : a.equals("/runs") ? out : a);
            workers.add(start(with(worker, SMALL), Map.of("JOB_COMPLETION_INDEX", "" + i)));
        }
        assertSameParameters(workers);
    }

    /**
     * docs/cluster.md's sharded command line: every worker serves a slice, no server; the workers end with the parameters
     * the same job ends with in the star (the --with-server command line), bit for bit.
     */
    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void shouldTrainTheStarsParametersWhenEveryWorkerServesASlice() throws Exception {
        final String star = line(block("bash", "--with-server"), "./dlion worker");
        final String sharded = block("bash", "--topology sharded").replace("\\\n", " ");
        final int starPort = TestPorts.freeUdpPort();
        final Map<String, String> starEnv = Map.of("WORLD_SIZE", "" + WORKERS, "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", "" + starPort);
        final String starHash = hash(assertSameParameters(startRanks(star, starEnv, "star-")).get(0));

        final int base = TestPorts.freeUdpPorts(2 * WORKERS);
        final String localHosts = line(sharded, "./dlion worker")
            .replaceAll("--hosts \\S+", "--hosts " + String.join(",", java.util.Collections.nCopies(WORKERS, "127.0.0.1")));
        final List<String> outputs = assertSameParameters(startRanks(localHosts, Map.of("WORLD_SIZE", "" + WORKERS, "MASTER_PORT", "" + base),
            "sharded-"));
        assertEquals(starHash, hash(outputs.get(0)), "the sharded job ends with the star's parameters");
        for (int i = 0; i < WORKERS; i++) {
            assertTrue(outputs.get(i).contains("worker " + i + " serves slice " + i + " of " + WORKERS), outputs.get(i));
        }
    }

    /**
     * @param workerLine the worker's command line, {@code $RANK} in it replaced by {@code outPrefix + rank}.
     * @param env        the job's variables; every rank also gets {@code RANK} and {@code LOCAL_RANK}, as torchrun sets.
     * @param outPrefix  in front of the rank in {@code $RANK} (the output directory), so two jobs of one test stay apart.
     * @return the worker processes, by rank.
     */
    private List<Process> startRanks(final String workerLine, final Map<String, String> env, final String outPrefix) throws IOException {
        final List<Process> workers = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            final Map<String, String> task = new HashMap<>(env);
            task.put("RANK", "" + i);
            task.put("LOCAL_RANK", "" + i);
            workers.add(start(with(command(workerLine.replace("$RANK", outPrefix + i)), SMALL), task));
        }
        return workers;
    }

    private static String hash(final String output) {
        final Matcher m = HASH.matcher(output);
        assertTrue(m.find(), output);
        return m.group(2);
    }

    private static List<String> assertSameParameters(final List<Process> workers) throws Exception {
        final Set<String> hashes = new LinkedHashSet<>();
        final List<String> outputs = new ArrayList<>();
        for (final Process w : workers) {
            assertTrue(w.waitFor(4, TimeUnit.MINUTES), "worker finished");
            final String out = new String(w.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, w.exitValue(), out);
            assertTrue(out.contains("scheduler variables"), "placed by the scheduler's variables: " + out);
            final Matcher m = HASH.matcher(out);
            assertTrue(m.find(), "params-sha256 line: " + out);
            hashes.add(m.group(2));
            outputs.add(out);
        }
        assertEquals(1, hashes.size(), "every worker ends with the same parameters: " + hashes);
        return outputs;
    }

    /** @return the first fenced block of the language in docs/cluster.md that contains the marker. */
    private static String block(final String language, final String marker) throws IOException {
        final Matcher m = Pattern.compile("```" + language + "\\n(.*?)```", Pattern.DOTALL).matcher(Files.readString(Path.of("../docs/cluster.md")));
        while (m.find()) {
            if (m.group(1).contains(marker)) {
                return m.group(1);
            }
        }
        return null;
    }

    private static String line(final String block, final String start) {
        for (final String l : block.split("\n")) {
            if (l.startsWith(start)) {
                return l.replaceAll("\\s*&\\s*$", "");
            }
        }
        throw new AssertionError("no line starting with " + start + " in\n" + block);
    }

    private static List<String> command(final String line) {
        return List.of(line.trim().split("\\s+"));
    }

    private static List<String> with(final List<String> command, final List<String> more) {
        final List<String> all = new ArrayList<>(command);
        all.addAll(more);
        return all;
    }

    /** The job's secret every command names, {@code job.secret} in the working directory, owner-only. */
    @BeforeEach
    void writeSecret() {
        Frames.writeSecret(dir.resolve("job.secret"));
    }

    private Process start(final List<String> command, final Map<String, String> env) throws IOException {
        return processes.start(dir, command, env);
    }
}
