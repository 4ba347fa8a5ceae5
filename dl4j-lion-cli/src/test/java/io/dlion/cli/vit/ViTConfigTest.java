package io.dlion.cli.vit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import io.dlion.Lion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.nd4j.linalg.api.buffer.DataType;

class ViTConfigTest {

    @Test
    void shouldDescribeThePaperModel() {
        final ViTConfig c = ViTConfig.paper();
        assertEquals(32, c.imageSize());
        assertEquals(3, c.channels());
        assertEquals(4, c.patch());
        assertEquals(512, c.hidden());
        assertEquals(6, c.depth());
        assertEquals(8, c.heads());
        assertEquals(4, c.mlpRatio());
        assertEquals(10, c.classes());
        assertEquals(64, c.tokens());
        assertEquals(48, c.patchDim());
        assertEquals(3072, c.inputSize());
        assertEquals(2048, c.mlpHidden());
        assertEquals(new Lion(ViTConfig.DEFAULT_LEARNING_RATE), c.updater());
        assertEquals(DataType.FLOAT, c.dataType());
    }

    @Test
    void shouldDescribeTheTinyFashionMnistModel() {
        final ViTConfig c = ViTConfig.tinyFashionMnist();
        assertEquals(28, c.imageSize());
        assertEquals(1, c.channels());
        assertEquals(7, c.patch());
        assertEquals(64, c.hidden());
        assertEquals(2, c.depth());
        assertEquals(4, c.heads());
        assertEquals(16, c.tokens());
        assertEquals(784, c.inputSize());
    }

    @Test
    void shouldRoundTripThroughToBuilder() {
        final ViTConfig c = ViTConfig.tinyFashionMnist().toBuilder().seed(7).weightDecay(0.1).updater(new Lion(3e-4, 0.95, 0.98)).build();
        assertEquals(c, c.toBuilder().build());
        assertEquals(c.hashCode(), c.toBuilder().build().hashCode());
        assertNotEquals(c, c.toBuilder().seed(8).build());
        assertEquals(new Lion(3e-4, 0.95, 0.98), c.updater());
    }

    static Stream<Arguments> badValues() {
        return Stream.of(
            Arguments.of("imageSize", (UnaryOperator<ViTConfig.Builder>) b -> b.imageSize(0)),
            Arguments.of("channels", (UnaryOperator<ViTConfig.Builder>) b -> b.channels(-1)),
            Arguments.of("patch", (UnaryOperator<ViTConfig.Builder>) b -> b.patch(0)),
            Arguments.of("hidden", (UnaryOperator<ViTConfig.Builder>) b -> b.hidden(0)),
            Arguments.of("depth", (UnaryOperator<ViTConfig.Builder>) b -> b.depth(0)),
            Arguments.of("heads", (UnaryOperator<ViTConfig.Builder>) b -> b.heads(0)),
            Arguments.of("mlpRatio", (UnaryOperator<ViTConfig.Builder>) b -> b.mlpRatio(0)),
            Arguments.of("imageSize (32) must be a multiple of patch (5)", (UnaryOperator<ViTConfig.Builder>) b -> b.patch(5)),
            Arguments.of("hidden (512) must be a multiple of heads (6)", (UnaryOperator<ViTConfig.Builder>) b -> b.heads(6)),
            Arguments.of("classes", (UnaryOperator<ViTConfig.Builder>) b -> b.classes(1)),
            Arguments.of("updater", (UnaryOperator<ViTConfig.Builder>) b -> b.updater(null)),
            Arguments.of("weightDecay", (UnaryOperator<ViTConfig.Builder>) b -> b.weightDecay(-0.1)),
            Arguments.of("weightDecay", (UnaryOperator<ViTConfig.Builder>) b -> b.weightDecay(Double.NaN)),
            Arguments.of("dataType", (UnaryOperator<ViTConfig.Builder>) b -> b.dataType(DataType.INT32)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badValues")
    void shouldRejectBadValuesNamingTheField(final String field, final UnaryOperator<ViTConfig.Builder> change) {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> change.apply(ViTConfig.builder()).build());
        assertTrue(e.getMessage().startsWith(field), e.getMessage());
    }
}
