package io.dlion.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import io.dlion.aeron.Topology;
import io.dlion.aeron.server.Payload;
import io.dlion.cli.train.Sharing;
import io.dlion.cli.train.TrainConfig;
import io.dlion.vote.VoteRule;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every command parses --rule, --topology, --sharing and --transport the same way, and refuses a bad value naming the option. */
class OptionTypesTest {
    @ParameterizedTest
    @CsvSource({
        "server, --rule, median, --params 100",
        "worker, --rule, median, ''",
        "vote-worker, --rule, median, --workers 1 --params 100",
        "worker, --topology, ring, ''",
        "server, --topology, ring, --params 100",
        "train, --topology, ring, ''",
        "compare, --topology, ring, ''",
        "vote-worker, --topology, ring, --workers 1 --params 100",
        "worker, --sharing, dense, ''",
        "train, --sharing, dlion, ''",
        "server, --sharing, none, --params 100",
        "vote-worker, --sharing, dl4j-threshold, --workers 1 --params 100",
        "train, --transport, udp, ''",
        "demo, --transport, udp, ''",
        "compare, --transport, udp, ''",
    })
    void shouldRefuseABadValueNamingTheOption(final String command, final String option, final String value, final String rest) {
        final String bad = value;
        final StringWriter err = new StringWriter();
        final CommandLine cli = DLionCli.commandLine();
        cli.setErr(new PrintWriter(err));
        final List<String> args = new java.util.ArrayList<>(List.of(command, option, bad));
        if (!rest.isBlank()) {
            args.addAll(List.of(rest.split(" ")));
        }
        final int exit = cli.execute(args.toArray(new String[0]));
        assertEquals(2, exit, err.toString());
        assertTrue(err.toString().contains("Invalid value for option '" + option + "'") && err.toString().contains(bad), err.toString());
    }

    @Test
    void shouldParseTheRuleTheSameWayInEveryCommand() {
        for (final String rule : List.of("avg", "average", "AVERAGE")) {
            final ServerCommand server = parsed("server", "--job", "1", "--params", "100", "--rule", rule);
            final WorkerCommand worker = parsed("worker", "--out", "o", "--rule", rule);
            final SyntheticWorkerCommand voteWorker = parsed("vote-worker", "--job", "1", "--worker-id", "0", "--workers", "1",
                "--params", "100", "--rule", rule);
            assertEquals(VoteRule.AVERAGE, server.rule, "server --rule " + rule);
            assertEquals(VoteRule.AVERAGE, worker.rule, "worker --rule " + rule);
            assertEquals(VoteRule.AVERAGE, voteWorker.rule, "vote-worker --rule " + rule);
        }
        assertEquals(VoteRule.MAJORITY, this.<WorkerCommand>parsed("worker", "--out", "o", "--rule", "mavo").rule);
        assertEquals(VoteRule.MAJORITY, this.<ServerCommand>parsed("server", "--job", "1", "--params", "100").rule, "the default");
    }

    @Test
    void shouldParseTopologySharingAndTransportAsTheirTypes() {
        assertEquals(Topology.Kind.SHARDED, this.<WorkerCommand>parsed("worker", "--out", "o", "--topology", "SHARDED").topologyKind);
        assertEquals(Topology.Kind.STAR, this.<TrainCommand>parsed("train", "--out", "o", "--topology", "star").topology);
        assertEquals(Topology.Kind.SHARDED, this.<CompareCommand>parsed("compare", "--out", "o").topology, "the default");
        assertEquals(Sharing.DENSE_LION, this.<WorkerCommand>parsed("worker", "--out", "o", "--sharing", "dense-lion").sharing);
        assertEquals(Payload.FP32, this.<ServerCommand>parsed("server", "--job", "1", "--params", "100", "--sharing", "dense").sharing);
        assertEquals(Payload.FP32, this.<ServerCommand>parsed("server", "--job", "1", "--params", "100", "--sharing", "dense-adamw").sharing);
        assertEquals(Payload.SIGNS, this.<ServerCommand>parsed("server", "--job", "1", "--params", "100").sharing);
        assertEquals(TrainConfig.Transport.AERON_UDP, this.<TrainCommand>parsed("train", "--out", "o", "--transport", "aeron-udp").transport);
        assertEquals(TrainConfig.Transport.AERON_IPC, this.<Demo>parsed("demo").transport, "the demo's default");
    }

    @SuppressWarnings("unchecked")
    private <T> T parsed(final String... args) {
        final CommandLine.ParseResult result = DLionCli.commandLine().parseArgs(args);
        return (T) result.subcommand().commandSpec().userObject();
    }
}
