package io.dlion.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code --topology}, {@code --hosts} and {@code --port}: a wrong or missing value is refused with exit 2, naming it. */
class TopologyOptionsTest {
    private static final String[] WORKER = {"vote-worker", "--job", "1", "--worker-id", "0", "--workers", "3", "--insecure"};

    @Test
    void shouldRefuseAShardedJobWithoutOneHostPerWorker() {
        assertRefused("--hosts", "--params", "1000", "--topology", "sharded");
        assertRefused("3", "--params", "1000", "--topology", "sharded", "--hosts", "127.0.0.1,127.0.0.1");
    }

    /** Under Slurm a sharded worker needs no --hosts: rank r's host follows from the node list and the tasks per node. */
    @Test
    void shouldTakeEveryRanksHostFromSlurmWhenHostsAreNotGiven() {
        final WorkerCommand worker = placedWorker(Map.of("SLURM_NTASKS", "4", "SLURM_PROCID", "2", "SLURM_JOB_NODELIST", "n[1-2]",
            "SLURM_TASKS_PER_NODE", "2(x2)"), "--vote-port", "40200");
        worker.config();
        assertEquals("sharded[n1:40200:40201, n1:40202:40203, n2:40204:40205, n2:40206:40207]", worker.topology().toString());

        final WorkerCommand torchrun = placedWorker(Map.of("WORLD_SIZE", "2", "RANK", "0", "MASTER_ADDR", "h0"));
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, torchrun::config);
        assertTrue(e.getMessage().contains("--hosts") && e.getMessage().contains("DLION_HOSTS"), e.getMessage());
    }

    @Test
    void shouldRefuseAnUnknownTopologyAndHostsForTheStar() {
        assertRefused("--topology", "--params", "1000", "--topology", "ring");
        assertRefused("--hosts", "--params", "1000", "--hosts", "127.0.0.1,127.0.0.1,127.0.0.1", "--udp", "127.0.0.1:9:10");
    }

    @Test
    void shouldRefuseAServerChannelBesideTheShardedTopology() {
        assertRefused("--udp", "--params", "1000", "--topology", "sharded", "--hosts", "127.0.0.1,127.0.0.1,127.0.0.1", "--udp", "127.0.0.1:9:10");
    }

    @Test
    void shouldRefuseTheShardedTopologyOnTheServer() {
        final StringWriter err = new StringWriter();
        final CommandLine cli = DLionCli.commandLine();
        cli.setErr(new PrintWriter(err, true));
        assertEquals(2, cli.execute("server", "--job", "1", "--workers", "3", "--params", "1000", "--insecure", "--topology", "sharded",
            "--hosts", "127.0.0.1,127.0.0.1,127.0.0.1"), err.toString());
        assertTrue(err.toString().contains("--topology star only"), err.toString());
    }

    /** Without --topology a job of worker processes is sharded when every rank's host is known and no server is named. */
    @Test
    void shouldSliceByDefaultWhenEveryRanksHostIsKnown() {
        final Map<String, String> slurm = Map.of("SLURM_NTASKS", "2", "SLURM_PROCID", "1", "SLURM_JOB_NODELIST", "n[1-2]",
            "SLURM_TASKS_PER_NODE", "1(x2)");
        assertEquals("sharded[n1:40123:40124, n2:40125:40126]", configured(worker(slurm)).topology().toString());
        assertEquals("sharded[a:40123:40124, b:40125:40126, c:40127:40128]",
            configured(worker(Map.of(), "--workers", "3", "--worker-id", "0", "--batch", "96", "--hosts", "a,b,c")).topology().toString());
        assertEquals("star[h0:40123:40124]", configured(worker(slurm, "--server", "h0", "--local-host", "127.0.0.1")).topology().toString(),
            "a named server makes the star");
        assertEquals("star[n1:40123:40124]", configured(worker(slurm, "--with-server", "--local-host", "127.0.0.1")).topology().toString(),
            "rank 0's server makes the star");
        assertEquals("star[h0:29500:29501]", configured(worker(Map.of("WORLD_SIZE", "2", "RANK", "0", "MASTER_ADDR", "h0", "MASTER_PORT",
            "29500"), "--local-host", "127.0.0.1")).topology().toString(), "torchrun names no host per rank: the star at MASTER_ADDR");
    }

    private static WorkerCommand configured(final WorkerCommand worker) {
        worker.config();
        return worker;
    }

    /** @return a worker without --topology, its options parsed, in the scheduler environment given. */
    private static WorkerCommand worker(final Map<String, String> env, final String... options) {
        final WorkerCommand worker = new WorkerCommand();
        final List<String> args = new ArrayList<>(List.of("--job", "1", "--insecure", "--out", "target/unused"));
        args.addAll(List.of(options));
        new CommandLine(worker).parseArgs(args.toArray(new String[0]));
        worker.env = env;
        return worker;
    }

    /** {@code --silence-ms}: the sharded vote exchange's, at least a HELLO interval, and only with the embedded driver. */
    @Test
    void shouldRefuseASilenceOutsideTheShardedExchange() {
        final String[] sharded = {"--workers", "3", "--worker-id", "0", "--batch", "96", "--hosts", "a,b,c"};
        assertEquals("sharded[a:40123:40124, b:40125:40126, c:40127:40128]",
            configured(worker(Map.of(), concat(sharded, "--silence-ms", "3000"))).topology().toString());
        assertSilenceRefused("must be >= 1000", worker(Map.of(), concat(sharded, "--silence-ms", "999")));
        assertSilenceRefused("needs --topology sharded", worker(Map.of(), "--workers", "3", "--worker-id", "0", "--batch", "96", "--server", "h0",
            "--local-host", "127.0.0.1", "--silence-ms", "3000"));
        assertSilenceRefused("needs --topology sharded", worker(Map.of(), concat(sharded, "--sharing", "dense-lion", "--silence-ms", "3000")));
        assertSilenceRefused("aeron.publication.connection.timeout", worker(Map.of(), concat(sharded, "--aeron-dir", "/dev/shm/x", "--silence-ms",
            "3000")));
    }

    private static void assertSilenceRefused(final String says, final WorkerCommand worker) {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, worker::config);
        assertTrue(e.getMessage().contains("--silence-ms") && e.getMessage().contains(says), e.getMessage());
    }

    private static String[] concat(final String[] a, final String... b) {
        final String[] out = new String[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void shouldRefuseMoreSlicesThanChunks() {
        assertRefused("chunks", "--topology", "sharded", "--hosts", "127.0.0.1,127.0.0.1,127.0.0.1", "--params", "100");
    }

    private static void assertRefused(final String named, final String... options) {
        final String[] args = new String[WORKER.length + options.length];
        System.arraycopy(WORKER, 0, args, 0, WORKER.length);
        System.arraycopy(options, 0, args, WORKER.length, options.length);
        final StringWriter err = new StringWriter();
        final CommandLine cli = DLionCli.commandLine();
        cli.setErr(new PrintWriter(err, true));
        assertEquals(2, cli.execute(args), String.join(" ", args) + ": " + err);
        assertTrue(err.toString().contains(named), "names " + named + ": " + err);
    }

    /** @return a sharded worker without --hosts, its options parsed, in the scheduler environment given. */
    private static WorkerCommand placedWorker(final Map<String, String> env, final String... options) {
        final WorkerCommand worker = new WorkerCommand();
        final List<String> args = new ArrayList<>(List.of("--job", "1", "--insecure", "--topology", "sharded", "--out", "target/unused"));
        args.addAll(List.of(options));
        new CommandLine(worker).parseArgs(args.toArray(new String[0]));
        worker.env = env;
        return worker;
    }
}
