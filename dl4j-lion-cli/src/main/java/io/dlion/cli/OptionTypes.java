package io.dlion.cli;

import java.util.Locale;

import io.dlion.aeron.Topology;
import io.dlion.aeron.server.Payload;
import io.dlion.cli.train.Sharing;
import io.dlion.cli.train.TrainConfig;
import io.dlion.vote.VoteRule;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The option types every command parses the same way, as picocli converters: {@code --rule}, {@code --topology},
 * {@code --sharing} and {@code --transport}. A bad value is refused while the command line is parsed, and picocli's
 * message names the option ({@code Invalid value for option '--rule': ...}).
 */
final class OptionTypes {
    private OptionTypes() {
    }

    /** {@code --rule}: {@code majority} (or {@code mavo}) and {@code average} (or {@code avg}), any case. */
    static final class Rule implements ITypeConverter<VoteRule> {
        @Override
        public VoteRule convert(final String value) {
            switch (value.toLowerCase(Locale.ROOT)) {
                case "majority":
                case "mavo":
                    return VoteRule.MAJORITY;
                case "average":
                case "avg":
                    return VoteRule.AVERAGE;
                default:
                    throw new TypeConversionException("must be majority (mavo) or average (avg), got '" + value + "'");
            }
        }
    }

    /** {@code --topology}: {@code star} or {@code sharded}, any case: the kinds of {@link Topology} a job's workers run. */
    static final class TopologyKind implements ITypeConverter<Topology.Kind> {
        @Override
        public Topology.Kind convert(final String value) {
            switch (value.toLowerCase(Locale.ROOT)) {
                case "star":
                    return Topology.Kind.STAR;
                case "sharded":
                    return Topology.Kind.SHARDED;
                default:
                    throw new TypeConversionException("must be star or sharded, got '" + value + "'");
            }
        }
    }

    /** {@code --sharing} of a training command: one of {@link Sharing}'s command-line names. */
    static final class SharingName implements ITypeConverter<Sharing> {
        @Override
        public Sharing convert(final String value) {
            for (final Sharing s : Sharing.values()) {
                if (s.cliName().equals(value)) {
                    return s;
                }
            }
            throw new TypeConversionException("must be one of none, dlion-mavo, dlion-avg, dl4j-threshold, dense-lion, dense-adamw, got '"
                + value + "'");
        }
    }

    /**
     * {@code --sharing} of a server or a synthetic worker, which only tell votes from gradients: {@code dlion} (or a
     * D-Lion sharing's name) for sign votes, {@code dense} (or a dense baseline's name) for fp32 gradients.
     */
    static final class PayloadName implements ITypeConverter<Payload> {
        @Override
        public Payload convert(final String value) {
            if ("dlion".equals(value)) {
                return Payload.SIGNS;
            }
            if ("dense".equals(value)) {
                return Payload.FP32;
            }
            for (final Sharing s : Sharing.values()) {
                if (s.cliName().equals(value) && (s.isDLion() || s.isDense())) {
                    return s.isDense() ? Payload.FP32 : Payload.SIGNS;
                }
            }
            throw new TypeConversionException("must be dlion or dense (or dlion-mavo, dlion-avg, dense-lion, dense-adamw), got '"
                + value + "'");
        }
    }

    /** {@code --transport}: {@code inproc}, {@code aeron-ipc} or {@code aeron-udp}. */
    static final class TransportName implements ITypeConverter<TrainConfig.Transport> {
        @Override
        public TrainConfig.Transport convert(final String value) {
            try {
                return TrainConfig.Transport.parse(value);
            } catch (final IllegalArgumentException ex) {
                throw new TypeConversionException("must be inproc, aeron-ipc or aeron-udp, got '" + value + "'");
            }
        }
    }
}
