package io.dlion.cli;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import io.dlion.cli.train.Monitor;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MonitorOptionsTest {
    private static MonitorOptions parse(final String... args) {
        final WorkerCommand worker = new WorkerCommand();
        new CommandLine(worker).parseArgs(args);
        return worker.monitor;
    }

    @Test
    void shouldServeMetricsOnTheGivenPortAndNothingWithoutOptions() throws Exception {
        assertSame(Monitor.NONE, parse("--out", "x").open("s"));
        try (Monitor m = parse("--out", "x", "--metrics-port", "0").open("s")) {
            final int port = m.metrics().port();
            assertTrue(port > 0);
            final HttpResponse<String> r = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            assertTrue(r.body().contains("jvm_memory_used_bytes"), "the JVM's metrics are served");
        }
    }

    @Test
    void shouldNameTheOptionThatIsWrong() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> parse("--out", "x", "--metrics-port", "70000").open("s"))
            .getMessage().contains("--metrics-port"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> parse("--out", "x", "--ui", "uihost:9000").open("s"))
            .getMessage().contains("--ui"));
        assertTrue(assertThrows(IllegalArgumentException.class,
            () -> parse("--out", "x", "--ui", "http://uihost:9000", "--ui-every", "0").open("s")).getMessage().contains("--ui-every"));
    }
}
