package io.dlion.aeron.client;

import java.util.List;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.SliceEndpoint;
import io.dlion.aeron.wire.GradientChunkFlyweight;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The settings both exchanges share ({@link ExchangeContext}), validated once for the vote and the dense context. */
class ExchangeContextTest {
    private static AeronRuntime runtime;

    @BeforeAll
    static void launch() {
        runtime = AeronRuntime.launch(new AeronRuntime.Context());
    }

    @AfterAll
    static void close() {
        CloseHelper.close(runtime);
    }

    static Stream<Arguments> contexts() {
        return Stream.of(
            Arguments.of("vote", (Supplier<ExchangeContext<?>>) AeronVoteExchange.Context::new),
            Arguments.of("dense", (Supplier<ExchangeContext<?>>) AeronMeanExchange.Context::new));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("contexts")
    void shouldNameTheExchangeFieldThatIsWrong(final String name, final Supplier<ExchangeContext<?>> context) {
        final NullPointerException aeron = assertThrows(NullPointerException.class,
            () -> context.get().jobId(1).workers(2).paramCount(100).workerId(0).conclude());
        assertEquals("aeron", aeron.getMessage());
        assertRefused(context, "workerId", c -> c.workerId(2));
        assertRefused(context, "connectTimeoutNs", c -> c.connectTimeoutNs(0));
        assertRefused(context, "fragmentLimit", c -> c.fragmentLimit(0));
        assertRefused(context, "firstRound", c -> c.firstRound(-1));
        final NullPointerException idle = assertThrows(NullPointerException.class, () -> valid(context).idleStrategy(null).conclude());
        assertEquals("idleStrategy", idle.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("contexts")
    void shouldCoverEveryParameterWithOneServerByDefault(final String name, final Supplier<ExchangeContext<?>> context) {
        final ExchangeContext<?> ctx = valid(context).conclude();
        assertEquals(1, ctx.slices().size());
        assertEquals(0, ctx.slices().get(0).fromParam());
        assertEquals(-1, ctx.slices().get(0).toParam(), "to the last parameter");
    }

    @Test
    void shouldRefuseFrameTagsAndSlicesWithAGapForTheDenseExchange() {
        final IllegalArgumentException tags = assertThrows(IllegalArgumentException.class,
            () -> new AeronMeanExchange.Context().aeron(runtime.aeron()).jobId(1).workers(2).workerId(0).paramCount(100)
                .secret(new byte[32]).frameMac(true).conclude());
        assertTrue(tags.getMessage().startsWith("frameMac"), tags.getMessage());
        final long params = 4L * GradientChunkFlyweight.CHUNK_WORDS * 64;
        final List<SliceEndpoint> gap = List.of(new SliceEndpoint(0, 0, 64, "aeron:ipc", 1, "aeron:ipc", 2),
            new SliceEndpoint(1, 128, -1, "aeron:ipc", 3, "aeron:ipc", 4));
        final IllegalArgumentException uncovered = assertThrows(IllegalArgumentException.class, () -> new AeronMeanExchange.Context()
            .aeron(runtime.aeron()).jobId(1).workers(2).workerId(0).paramCount(params).slices(gap).conclude());
        assertTrue(uncovered.getMessage().startsWith("slices"), uncovered.getMessage());
        final List<SliceEndpoint> onGrid = List.of(new SliceEndpoint(0, 0, 2L * GradientChunkFlyweight.CHUNK_WORDS * 64, "aeron:ipc", 1,
            "aeron:ipc", 2), new SliceEndpoint(1, 2L * GradientChunkFlyweight.CHUNK_WORDS * 64, -1, "aeron:ipc", 3, "aeron:ipc", 4));
        assertEquals(2, new AeronMeanExchange.Context().aeron(runtime.aeron()).jobId(1).workers(2).workerId(0).paramCount(params)
            .slices(onGrid).conclude().slices().size());
    }

    private static ExchangeContext<?> valid(final Supplier<ExchangeContext<?>> context) {
        return context.get().aeron(runtime.aeron()).jobId(1).workers(2).paramCount(100).workerId(0);
    }

    private static void assertRefused(final Supplier<ExchangeContext<?>> context, final String field,
        final UnaryOperator<ExchangeContext<?>> settings) {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> settings.apply(valid(context)).conclude());
        assertTrue(ex.getMessage().startsWith(field), ex.getMessage());
    }
}
