package io.dlion.aeron;

import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.AggregationServer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shared settings of a job, set and validated once for the server's, the worker's and the local job's context. */
class JobContextTest {

    static Stream<Arguments> contexts() {
        return Stream.of(
            Arguments.of("server", (Supplier<JobContext<?>>)AggregationServer.Context::new),
            Arguments.of("worker", (Supplier<JobContext<?>>)() -> new AeronVoteExchange.Context().workerId(0)),
            Arguments.of("local job", (Supplier<JobContext<?>>)LocalAeronJob.Context::new));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("contexts")
    void shouldNameTheSharedFieldThatIsWrong(final String name, final Supplier<JobContext<?>> context) {
        assertRefused(context, "jobId", c -> c.workers(2).paramCount(100));
        assertRefused(context, "workers", c -> c.jobId(1).workers(1025).paramCount(100));
        assertRefused(context, "paramCount", c -> c.jobId(1).workers(2).paramCount(0));
        assertRefused(context, "chunkWords", c -> c.jobId(1).workers(2).paramCount(100).chunkWords(30));
        assertRefused(context, "secret", c -> c.jobId(1).workers(2).paramCount(100).secret(new byte[15]));
        assertRefused(context, "frameMac", c -> c.jobId(1).workers(2).paramCount(100).frameMac(true));
        final NullPointerException rule = assertThrows(NullPointerException.class,
            () -> context.get().jobId(1).workers(2).paramCount(100).rule(null).conclude());
        assertEquals("rule", rule.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("contexts")
    void shouldKeepACopyOfTheSecret(final String name, final Supplier<JobContext<?>> context) {
        final byte[] secret = new byte[16];
        final JobContext<?> ctx = context.get().secret(secret);
        secret[0] = 1;
        assertEquals(0, ctx.secret()[0], "copied on set");
        ctx.secret()[1] = 1;
        assertEquals(0, ctx.secret()[1], "copied on get");
        assertNull(context.get().secret(), "no secret by default");
        assertEquals(Configuration.chunkWords(), context.get().chunkWords());
    }

    private static void assertRefused(final Supplier<JobContext<?>> context, final String field,
        final UnaryOperator<JobContext<?>> settings) {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> settings.apply(context.get()).conclude());
        assertTrue(ex.getMessage().startsWith(field), ex.getMessage());
    }
}
