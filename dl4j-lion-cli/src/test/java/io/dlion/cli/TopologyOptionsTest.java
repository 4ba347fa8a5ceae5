package io.dlion.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code --topology}, {@code --hosts} and {@code --port}: a wrong or missing value is refused with exit 2, naming it. */
class TopologyOptionsTest {
    private static final String[] WORKER = {"vote-worker", "--job", "1", "--worker-id", "0", "--workers", "3", "--insecure"};

    @Test
    void shouldRefuseAShardedJobWithoutOneHostPerWorker() {
        assertRefused("--hosts", "--params", "1000", "--topology", "sharded");
        assertRefused("3", "--params", "1000", "--topology", "sharded", "--hosts", "127.0.0.1,127.0.0.1");
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
}
