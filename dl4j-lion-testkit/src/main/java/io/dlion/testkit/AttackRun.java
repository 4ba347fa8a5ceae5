package io.dlion.testkit;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.Channels;
import io.dlion.aeron.Configuration;
import io.dlion.aeron.wire.ChunkLayout;
import io.dlion.aeron.wire.Encoding;
import io.dlion.aeron.wire.HelloAckFlyweight;
import io.dlion.aeron.wire.HelloCredentials;
import io.dlion.aeron.wire.JoinNoticeFlyweight;
import io.dlion.aeron.wire.MessageHeaderFlyweight;
import io.dlion.aeron.wire.MessageType;
import io.dlion.aeron.wire.ResultChunkFlyweight;
import io.dlion.codec.SignEncoding;
import io.dlion.vote.VoteRule;
import io.dlion.vote.VoterSet;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import static io.dlion.testkit.TestPorts.freeUdpPort;

/**
 * A stranger's attacks on a running job of real processes over UDP loopback ({@code ./dlion attacks}): a
 * {@code ./dlion server} with a secret and N {@code ./dlion vote-worker}s (seeded votes, so every round's result can be
 * checked against the naive vote of an undisturbed job), and, on the same host with the same job id and the default
 * stream ids, a second job with its own secret. The attacker is this process, on a media driver of its own; it knows
 * no secret. While the jobs run it
 * <ol>
 *   <li>subscribes to the first job's result broadcast (dynamic MDC at the server's port) and never polls, for the
 *       whole run;</li>
 *   <li>sets up an image on worker 0's result port and publishes forged results (every sign +1) of the rounds to come
 *       and a HELLO_ACK it cannot sign;</li>
 *   <li>says HELLO for worker 1, unsigned and signed with a guessed secret, asking for the results;</li>
 *   <li>replays worker 2's HELLO and vote frames, which it reads off the wire (a spy on worker 2's media driver, which
 *       runs in this process), from its own session.</li>
 * </ol>
 * Every worker of both jobs must print, every round, the undisturbed job's result, and each attack must show in the
 * counters of the process it hit.
 */
public final class AttackRun {
    private static final String DLION_CLI = "io.dlion.cli.DLionCli";
    private static final Pattern ROUND = Pattern.compile("^round (\\d+) voters (\\d+) digest ([0-9a-f]+)");
    private static final Pattern COUNTER = Pattern.compile("([a-zA-Z-]+)=(\\d+)");
    private static final byte[] LOOPBACK = {127, 0, 0, 1};
    private static final byte[] GUESSED_SECRET = "a guessed secret, 32 bytes long!".getBytes(StandardCharsets.US_ASCII);
    private static final int JOB = 1;

    private final int workers;
    private final long params;
    private final int rounds;
    private final long seed;
    private final Path out;
    private final PrintStream log;
    private final List<ChildProcess> children = new ArrayList<>();

    /**
     * @param workers per job, at least 3 (workers 0, 1 and 2 are attacked).
     * @param params  parameter count of the synthetic votes.
     * @param rounds  rounds every worker runs.
     * @param seed    of the first job's votes (the second job's: seed + 1).
     * @param out     directory for the processes' logs.
     * @param log     where progress goes.
     */
    public AttackRun(final int workers, final long params, final int rounds, final long seed, final Path out, final PrintStream log) {
        if (workers < 3 || workers > 64) {
            throw new IllegalArgumentException("workers must be in [3, 64], got " + workers);
        }
        if (rounds < 10) {
            throw new IllegalArgumentException("rounds must be >= 10, got " + rounds);
        }
        if (params < 64) {
            throw new IllegalArgumentException("params must be >= 64, got " + params);
        }
        this.workers = workers;
        this.params = params;
        this.rounds = rounds;
        this.seed = seed;
        this.out = out;
        this.log = log;
    }

    /**
     * @return what each attack did to the job.
     * @throws Exception when a process cannot be started or the run times out.
     */
    public Report run() throws Exception {
        Files.createDirectories(out);
        final Path secretA = secret(out.resolve("job-a.secret"));
        final Path secretB = secret(out.resolve("job-b.secret"));
        final int votePortA = freeUdpPort();
        final int controlPortA = freeUdpPort();
        final int votePortB = freeUdpPort();
        final int controlPortB = freeUdpPort();
        final Report report = new Report();
        report.workers = workers;
        try (AeronRuntime attacker = AeronRuntime.launch(new AeronRuntime.Context());
             AeronRuntime spiedDriver = AeronRuntime.launch(new AeronRuntime.Context().aeronDirectoryName(out.resolve("worker-2-driver")
                 .toString()))) {
            final ChildProcess serverA = server("a", votePortA, controlPortA, secretA);
            final ChildProcess serverB = server("b", votePortB, controlPortB, secretB);
            final Subscription neverPolled = attacker.aeron().addSubscription("aeron:udp?endpoint=127.0.0.1:0|control=127.0.0.1:" + controlPortA
                + "|control-mode=dynamic", Configuration.RESULT_STREAM_ID_DEFAULT);
            final String voteChannelA = Channels.udpVotes("127.0.0.1", votePortA, workers);
            final Subscription spy = spiedDriver.aeron().addSubscription("aeron-spy:" + voteChannelA, Configuration.VOTE_STREAM_ID_DEFAULT);
            final List<ChildProcess> jobA = new ArrayList<>();
            final List<ChildProcess> jobB = new ArrayList<>();
            for (int i = 0; i < workers; i++) {
                jobA.add(worker("a", i, votePortA, controlPortA, secretA, seed, i == 2 ? spiedDriver.aeronDirectoryName() : null));
                jobB.add(worker("b", i, votePortB, controlPortB, secretB, seed + 1, null));
            }
            final Captured captured = new Captured();
            awaitRound(jobA, 4, spy, captured);
            spy.close();
            report.forgedFrames = forgeResults(attacker, resultEndpoint(jobA.get(0)));
            report.impostorHellos = impostorHellos(attacker, voteChannelA);
            report.replayedHellos = captured.hellos.size();
            report.replayedVotes = captured.votes.size();
            replay(attacker, voteChannelA, captured);
            for (final ChildProcess w : jobA) {
                report.exitCodes.add(w.await(300));
            }
            for (final ChildProcess w : jobB) {
                report.exitCodes.add(w.await(300));
            }
            report.neverPolledImages = neverPolled.imageCount();
            CloseHelper.closeAll(neverPolled);
            serverA.stop();
            serverB.stop();
            report.serverA = counters(serverA.lastLine(l -> l.startsWith("rounds=")));
            for (final String line : serverA.lines()) {
                if (line.startsWith("rounds=")) {
                    report.maxDestinations = Math.max(report.maxDestinations, counters(line).getOrDefault("destinations", 0L));
                }
            }
            report.serverB = counters(serverB.lastLine(l -> l.startsWith("rounds=")));
            report.worker0 = counters(jobA.get(0).lastLine(l -> l.startsWith("counters ")));
            report.identicalA = matchesUndisturbed(jobA, seed, report);
            report.identicalB = matchesUndisturbed(jobB, seed + 1, report);
        } finally {
            for (final ChildProcess child : children) {
                if (child.isAlive()) {
                    child.kill();
                }
            }
        }
        return report;
    }

    private static Path secret(final Path file) throws IOException {
        final byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        Files.write(file, key);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    private ChildProcess server(final String job, final int votePort, final int controlPort, final Path secret) throws IOException {
        return track(ChildProcess.start("server-" + job, DLION_CLI, List.of("server", "--job", Integer.toString(JOB), "--workers",
            Integer.toString(workers), "--params", Long.toString(params), "--udp", "127.0.0.1:" + votePort + ":" + controlPort, "--secret-file",
            secret.toString(), "--status-interval", "1"), "512m", out.resolve("server-" + job + ".log")));
    }

    private ChildProcess worker(final String job, final int id, final int votePort, final int controlPort, final Path secret,
        final long voteSeed, final String aeronDir) throws IOException {
        final List<String> args = new ArrayList<>(List.of("vote-worker", "--job", Integer.toString(JOB), "--worker-id", Integer.toString(id),
            "--workers", Integer.toString(workers), "--params", Long.toString(params), "--rounds", Integer.toString(rounds), "--seed",
            Long.toString(voteSeed), "--round-pause-ms", "50", "--timeout-ms", "60000", "--connect-timeout-ms", "60000", "--udp",
            "127.0.0.1:" + votePort + ":" + controlPort, "--secret-file", secret.toString()));
        if (aeronDir != null) {
            args.add("--aeron-dir");
            args.add(aeronDir);
        }
        final String name = "worker-" + job + id;
        return track(ChildProcess.start(name, DLION_CLI, args, "512m", out.resolve(name + ".log")));
    }

    private ChildProcess track(final ChildProcess child) {
        children.add(child);
        log.println("started " + child.name());
        return child;
    }

    /** Wait until every worker printed a round's result, reading worker 2's frames off its driver meanwhile. */
    private void awaitRound(final List<ChildProcess> job, final int round, final Subscription spy, final Captured captured)
        throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        while (job.stream().anyMatch(w -> w.lastLine(l -> l.startsWith("round " + round + " ")) == null)) {
            if (System.nanoTime() - deadline > 0 || job.stream().anyMatch(w -> !w.isAlive())) {
                throw new IllegalStateException("the job did not reach round " + round + "; see the logs in " + out);
            }
            spy.poll(captured::onFrame, 100);
            Thread.sleep(1);
        }
        spy.poll(captured::onFrame, 1000);
    }

    private static String resultEndpoint(final ChildProcess worker) {
        final String line = worker.lastLine(l -> l.startsWith("results at "));
        if (line == null) {
            throw new IllegalStateException(worker.name() + " did not print its result endpoint");
        }
        return line.substring("results at ".length()).trim();
    }

    /** Attack 2: an image on a worker's result port, forged results of the rounds to come and a HELLO_ACK. */
    private int forgeResults(final AeronRuntime attacker, final String endpoint) throws InterruptedException {
        int sent = 0;
        try (ExclusivePublication forger = attacker.aeron().addExclusivePublication("aeron:udp?endpoint=" + endpoint + "|mtu=8k",
            Configuration.RESULT_STREAM_ID_DEFAULT)) {
            Await.awaitConnected(forger);
            final ChunkLayout layout = new ChunkLayout(params, 0, params, Configuration.chunkWords());
            final long[] ones = new long[(int)((params + 63) >>> 6)];
            Arrays.fill(ones, -1L);
            final VoterSet all = VoterSet.all(workers);
            for (long round = 3; round < 8; round++) {
                for (int c = 0; c < layout.chunkCount(); c++) {
                    final int wordOffset = layout.wordOffset(c);
                    final int words = layout.wordsOf(c);
                    final byte[] frame = new byte[ResultChunkFlyweight.length(all.wordCount(), SignEncoding.INSTANCE, params, wordOffset, wordOffset + words)];
                    new ResultChunkFlyweight().wrap(new UnsafeBuffer(frame), 0).encode(Encoding.SIGN_BITS, JOB, round, wordOffset, words, 0, all,
                        SignEncoding.INSTANCE, new long[][] {ones}, params, wordOffset);
                    Frames.send(forger, frame);
                    sent++;
                }
            }
            final byte[] ack = new byte[HelloAckFlyweight.SIGNED_LENGTH];
            new HelloAckFlyweight().wrap(new UnsafeBuffer(ack), 0).encode(JOB, HelloAckFlyweight.NO_JOIN, 0, JoinNoticeFlyweight.NO_DONOR, 0, 0,
                params, 42, forger.sessionId(), new HelloCredentials(GUESSED_SECRET));
            Frames.send(forger, ack);
            sent++;
            // keep the image up until the worker refuses it (an image unproven for 5 s)
            Thread.sleep(TimeUnit.SECONDS.toMillis(8));
        }
        return sent;
    }

    /** Attack 3: HELLOs for worker 1 without the secret and with a guessed one, asking for the results. */
    private int impostorHellos(final AeronRuntime attacker, final String voteChannel) throws InterruptedException {
        try (ExclusivePublication impostor = attacker.aeron().addExclusivePublication(voteChannel, Configuration.VOTE_STREAM_ID_DEFAULT);
             Subscription results = attacker.aeron().addSubscription(Channels.udpResultsSubscription("127.0.0.1", workers),
                 Configuration.RESULT_STREAM_ID_DEFAULT)) {
            Await.awaitConnected(impostor);
            while (results.resolvedEndpoint() == null) {
                Thread.sleep(1);
            }
            final String endpoint = results.resolvedEndpoint();
            final int port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
            final long now = System.currentTimeMillis();
            Frames.send(impostor, GarbageFrames.hello(JOB, 5, 1, 0, params, impostor.sessionId(), LOOPBACK, port, null, now, 1));
            Frames.send(impostor, GarbageFrames.hello(JOB, 5, 1, 0, params, impostor.sessionId(), LOOPBACK, port, GUESSED_SECRET, now, 2));
            Thread.sleep(1000);
            if (results.imageCount() != 0) {
                throw new IllegalStateException("the impostor was sent results");
            }
            return 2;
        }
    }

    /** Attack 4: worker 2's HELLO and vote frames, read off the wire, sent again from another session. */
    private static void replay(final AeronRuntime attacker, final String voteChannel, final Captured captured) throws InterruptedException {
        try (ExclusivePublication replayer = attacker.aeron().addExclusivePublication(voteChannel, Configuration.VOTE_STREAM_ID_DEFAULT)) {
            Await.awaitConnected(replayer);
            for (final byte[] hello : captured.hellos) {
                Frames.send(replayer, hello);
            }
            for (final byte[] vote : captured.votes) {
                Frames.send(replayer, vote);
            }
            Thread.sleep(500);
        }
    }

    private boolean matchesUndisturbed(final List<ChildProcess> job, final long voteSeed, final Report report) {
        final List<String> expected = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            final long[][] votes = new long[workers][];
            for (int w = 0; w < workers; w++) {
                votes[w] = SyntheticVotes.vote(voteSeed, r, w, params);
            }
            expected.add(Long.toHexString(SyntheticVotes.digest(NaiveVote.reference(r, votes, params, VoteRule.MAJORITY))));
        }
        boolean identical = true;
        for (final ChildProcess w : job) {
            final List<String> digests = new ArrayList<>();
            for (final String line : w.lines()) {
                final Matcher m = ROUND.matcher(line);
                if (m.find()) {
                    digests.add(m.group(3));
                }
            }
            final boolean same = digests.equals(expected);
            report.workerLines.add(w.name() + ": " + digests.size() + " rounds, " + (same ? "every result the undisturbed job's"
                : "DIFFERENT from the undisturbed job"));
            identical &= same;
        }
        return identical;
    }

    private static Map<String, Long> counters(final String line) {
        final Map<String, Long> values = new HashMap<>();
        if (line != null) {
            final Matcher m = COUNTER.matcher(line);
            while (m.find()) {
                values.put(m.group(1), Long.parseLong(m.group(2)));
            }
        }
        return values;
    }

    /** Worker 2's HELLO and round-vote frames as read off its driver. */
    private static final class Captured {
        final List<byte[]> hellos = new ArrayList<>();
        final List<byte[]> votes = new ArrayList<>();
        private final MessageHeaderFlyweight header = new MessageHeaderFlyweight();

        void onFrame(final DirectBuffer buffer, final int offset, final int length, final Header frameHeader) {
            if (frameHeader.flags() != FrameDescriptor.UNFRAGMENTED || length < MessageHeaderFlyweight.HEADER_LENGTH) {
                return;
            }
            header.wrapForRead(buffer, offset);
            final byte[] copy = new byte[length];
            buffer.getBytes(offset, copy);
            if (header.type() == MessageType.HELLO) {
                hellos.add(copy);
            } else if (header.type() == MessageType.VOTE_CHUNK && votes.size() < 10_000) {
                votes.add(copy);
            }
        }
    }

    /** What the attacks did. */
    public static final class Report {
        final List<Integer> exitCodes = new ArrayList<>();
        int workers;
        final List<String> workerLines = new ArrayList<>();
        Map<String, Long> serverA = Map.of();
        Map<String, Long> serverB = Map.of();
        Map<String, Long> worker0 = Map.of();
        int forgedFrames;
        int impostorHellos;
        int replayedHellos;
        int replayedVotes;
        int neverPolledImages;
        long maxDestinations;
        boolean identicalA;
        boolean identicalB;

        /** @return true when every worker of both jobs finished and printed the undisturbed job's result every round. */
        public boolean unaffected() {
            return identicalA && identicalB && exitCodes.stream().allMatch(c -> c == 0);
        }

        private long workerCount() {
            return workers;
        }

        /** @return true when every attack was refused and counted. */
        public boolean allCounted() {
            return neverPolledImages == 0 && maxDestinations == workerCount()
                && worker0.getOrDefault("refused-images", 0L) >= 1
                && worker0.getOrDefault("unproven-frames", 0L) + worker0.getOrDefault("stale-results", 0L) >= forgedFrames
                && serverA.getOrDefault("bad-credentials", 0L) >= impostorHellos
                && serverA.getOrDefault("replayed-hello", 0L) >= replayedHellos && replayedHellos > 0
                && serverA.getOrDefault("unauthenticated", 0L) >= replayedVotes && replayedVotes > 0
                && serverB.getOrDefault("rejected", -1L) == 0;
        }

        /** @return the table: attack, detected, counted, job unaffected. */
        public String markdown() {
            final String ok = unaffected() ? "yes" : "NO";
            final StringBuilder sb = new StringBuilder();
            sb.append("| attack | detected | counted | job unaffected |\n|---|---|---|---|\n");
            sb.append("| stranger subscribes to job A's results (dynamic MDC at the server's port) and never polls, the whole run | ")
                .append(neverPolledImages == 0 ? "yes: never made a destination, sent no frame" : "NO: it received results")
                .append(" | server A's result destinations: at most ").append(maxDestinations).append(" (its workers)")
                .append(" | ").append(ok).append(" |\n");
            sb.append("| stranger's SETUP, ").append(forgedFrames - 1).append(" forged result frames and a forged HELLO_ACK at worker 0's result port | ")
                .append(worker0.getOrDefault("refused-images", 0L) >= 1 ? "yes: image never proven, rejected" : "NO")
                .append(" | worker 0: unproven-frames=").append(worker0.get("unproven-frames")).append(" stale-results=")
                .append(worker0.get("stale-results")).append(" refused-images=").append(worker0.get("refused-images"))
                .append(" | ").append(ok).append(" |\n");
            sb.append("| ").append(impostorHellos).append(" HELLOs for live worker 1 without the secret / with a guessed one | ")
                .append(serverA.getOrDefault("bad-credentials", 0L) >= impostorHellos ? "yes: refused, never answered" : "NO")
                .append(" | server A: bad-credentials=").append(serverA.get("bad-credentials"))
                .append(" | ").append(ok).append(" |\n");
            sb.append("| ").append(replayedHellos).append(" HELLOs and ").append(replayedVotes)
                .append(" vote frames of worker 2, copied off the wire and replayed from another session | ")
                .append(serverA.getOrDefault("replayed-hello", 0L) >= replayedHellos ? "yes" : "NO")
                .append(" | server A: replayed-hello=").append(serverA.get("replayed-hello")).append(" unauthenticated=")
                .append(serverA.get("unauthenticated")).append(" | ").append(ok).append(" |\n");
            sb.append("| job B on the same host: same job id, default stream ids, its own secret | ")
                .append("nothing crossed: results go only to the destinations each server added")
                .append(" | server B: rejected=").append(serverB.get("rejected")).append(" | ")
                .append(identicalB ? "yes" : "NO").append(" |\n");
            sb.append('\n');
            for (final String line : workerLines) {
                sb.append("- ").append(line).append('\n');
            }
            sb.append("- exit codes of the workers: ").append(exitCodes).append('\n');
            return sb.toString();
        }
    }
}
