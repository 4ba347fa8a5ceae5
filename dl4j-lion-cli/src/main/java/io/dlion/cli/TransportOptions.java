package io.dlion.cli;

import io.aeron.driver.ThreadingMode;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Channels;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.Topology;
import picocli.CommandLine.Option;

/** Options shared by the server and worker commands: which driver, which channels. */
final class TransportOptions {
    @Option(names = "--aeron-dir", description = "Use the standalone media driver in this directory (default: an embedded driver).")
    String aeronDir;

    @Option(names = "--threading", defaultValue = "SHARED",
        description = "Threading mode of the embedded driver: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    ThreadingMode threading;

    @Option(names = "--udp", paramLabel = "HOST:VOTE_PORT:CONTROL_PORT",
        description = "UDP: votes to HOST:VOTE_PORT by unicast, results by MDC with control HOST:CONTROL_PORT (default: IPC).")
    String udp;

    @Option(names = "--topology", defaultValue = "star", converter = OptionTypes.TopologyKind.class, description = "star: one"
        + " aggregation server (--udp); sharded: every worker serves one slice of the parameters in its own process, rank r on the r-th of"
        + " --hosts (default: ${DEFAULT-VALUE}).")
    Topology.Kind topology;

    @Option(names = "--hosts", split = ",", paramLabel = "HOST", description = "With --topology sharded: every worker's address, by rank.")
    java.util.List<String> hosts;

    @Option(names = "--vote-port", defaultValue = "40123", description = "With --topology sharded: vote port of slice 0; slice r votes on"
        + " VOTE_PORT + 2r and controls its results from VOTE_PORT + 2r + 1 (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--local-host", defaultValue = "127.0.0.1", description = "Worker address results arrive on (UDP; default: ${DEFAULT-VALUE}).")
    String localHost;

    @Option(names = "--vote-channel", description = "Explicit vote channel (overrides --udp).")
    String voteChannel;

    @Option(names = "--result-channel", description = "Explicit result channel (overrides --udp).")
    String resultChannel;

    @Option(names = "--vote-stream", defaultValue = "" + Configuration.VOTE_STREAM_ID_DEFAULT, description = "Vote stream id (default: ${DEFAULT-VALUE}).")
    int voteStream;

    @Option(names = "--result-stream", defaultValue = "" + Configuration.RESULT_STREAM_ID_DEFAULT,
        description = "Result stream id (default: ${DEFAULT-VALUE}).")
    int resultStream;

    @Option(names = "--chunk-words", defaultValue = "" + Configuration.CHUNK_WORDS_DEFAULT,
        description = "Words (64 params) per chunk, the same everywhere (default: ${DEFAULT-VALUE}).")
    int chunkWords;

    @Option(names = "--secret-file", description = "File holding the job's shared secret (at least 16 bytes, owner-only permissions;"
        + " './dlion secret FILE' writes one). HELLOs and the server's answers carry its HMAC-SHA256. Required over UDP unless --insecure.")
    java.nio.file.Path secretFile;

    @Option(names = "--insecure", description = "Run over UDP without a secret: anyone who reaches the ports can take over a worker id.")
    boolean insecure;

    @Option(names = "--frame-mac", description = "Tag every vote and result frame with an HMAC-SHA256 of the job's secret (16 bytes a"
        + " frame), against an attacker on the path; the server and every worker must agree. Needs --secret-file.")
    boolean frameMac;

    /**
     * @param secret the job's secret the command runs with, or null.
     * @return the --frame-mac flag, checked against the secret.
     */
    boolean frameMac(final byte[] secret) {
        return JobSecret.checkFrameMac(frameMac, secret);
    }

    /**
     * @param role "server" or "worker", for the messages.
     * @return the job's secret: required over UDP (unless --insecure, which warns), optional over IPC.
     */
    byte[] secret(final String role) {
        if (isUdp()) {
            return JobSecret.forUdp(secretFile, insecure, role);
        }
        if (insecure) {
            throw new IllegalArgumentException("--insecure is for UDP jobs; over IPC a secret is optional");
        }
        return secretFile == null ? null : JobSecret.read(secretFile);
    }

    /** @return true when votes or results go over UDP. */
    boolean isUdp() {
        return udp != null || topology != Topology.Kind.STAR || (voteChannel != null && voteChannel.startsWith("aeron:udp"))
            || (resultChannel != null && resultChannel.startsWith("aeron:udp"));
    }

    @Option(names = "--loss-rate", defaultValue = "0", description = "Fault injection: fraction of received UDP data frames the embedded"
        + " driver drops (Aeron's debug receive endpoint; default: ${DEFAULT-VALUE}).")
    double lossRate;

    AeronRuntime launch() {
        final AeronRuntime.Context ctx = new AeronRuntime.Context()
            .embeddedDriver(aeronDir == null)
            .aeronDirectoryName(aeronDir)
            .threadingMode(threading);
        if (lossRate > 0) {
            ctx.receiveLossRate(lossRate);
        }
        return AeronRuntime.launch(ctx);
    }

    /**
     * @param workers the workers of the job (their votes share the server's link).
     * @return the vote channel: explicit, over UDP from {@code --udp}, or IPC.
     */
    String voteChannel(final int workers) {
        if (voteChannel != null) {
            return voteChannel;
        }
        if (udp != null) {
            final String[] parts = udpParts();
            return Channels.udpVotes(parts[0], Integer.parseInt(parts[1]), workers);
        }
        return Channels.ipc();
    }

    String serverResultChannel(final int workers) {
        if (resultChannel != null) {
            return resultChannel;
        }
        if (udp != null) {
            final String[] parts = udpParts();
            return Channels.udpResultsPublication(parts[0], Integer.parseInt(parts[2]), workers);
        }
        return Channels.ipc();
    }

    /**
     * @param workers the workers of the job (the result leaves the server's link once for each).
     * @return a worker's result channel: explicit, over UDP on {@code --local-host}, or IPC.
     */
    String workerResultChannel(final int workers) {
        if (resultChannel != null) {
            return resultChannel;
        }
        if (udp != null) {
            udpParts();
            return Channels.udpResultsSubscription(localHost, workers);
        }
        return Channels.ipc();
    }

    /**
     * @param workers the workers of the job.
     * @return the sharded topology (every worker serves a slice), or null for the star.
     * @throws IllegalArgumentException naming the option that is wrong or missing.
     */
    Topology topology(final int workers) {
        if (topology == Topology.Kind.STAR) {
            if (hosts != null) {
                throw new IllegalArgumentException("--hosts is for --topology sharded");
            }
            return null;
        }
        if (udp != null || voteChannel != null || resultChannel != null) {
            throw new IllegalArgumentException("--topology sharded takes --hosts and --vote-port, not --udp, --vote-channel or --result-channel");
        }
        if (hosts == null || hosts.size() != workers) {
            throw new IllegalArgumentException("--topology sharded needs --hosts with one address per worker (" + workers + "), got "
                + (hosts == null ? "none" : hosts.size() + ": " + hosts));
        }
        return Topology.sharded(hosts, port);
    }

    /**
     * For the commands that talk to one server ({@code server}, {@code garbage}): the sharded topology has no server
     * process, so {@code --topology sharded} there is a mistake, refused naming it.
     *
     * @param command the command's name, for the message.
     */
    void requireStar(final String command) {
        if (topology != Topology.Kind.STAR || hosts != null) {
            throw new IllegalArgumentException("./dlion " + command + " takes --topology star only: in a sharded job every worker serves"
                + " its slice itself (./dlion vote-worker --topology sharded --hosts ...)");
        }
    }

    private String[] udpParts() {
        final String[] parts = udp.split(":");
        if (parts.length != 3) {
            throw new IllegalArgumentException("--udp must be HOST:VOTE_PORT:CONTROL_PORT, got " + udp);
        }
        return parts;
    }
}
