package io.dlion.job;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import io.dlion.dist.RoundObserver;
import io.dlion.vote.RoundResult;
import io.dlion.vote.VoterSet;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * One worker's history of a job, for a checker of the whole run: an append-only text file, one line per event, each
 * written and flushed at once (a process killed with SIGKILL loses nothing it logged). A worker restarted into the same
 * job appends to the same file. Lines, fields separated by one space:
 * <pre>
 *   t=MS w=ID start pid=PID                      the process opened the history
 *   t=MS w=ID applied r=ROUND d=DIGEST v=VOTERS m=MASK   it applied that round's result
 *   t=MS w=ID joined r=ROUND donor=ID            it (re)joined the job: its next round is ROUND, with the donor's parameters
 *   t=MS w=ID epoch e=EPOCH r=ROUND p=SHA256     an epoch ended, ROUND rounds done; the parameters' digest
 * </pre>
 * {@code MS} is the wall clock in milliseconds (comparable across the processes of one host); {@code DIGEST} the first 16
 * bytes of the SHA-256 of everything the result makes a worker apply (rule, parameter count, sign and tie words, count
 * planes and segments), in hex; {@code MASK} the voter set's words in hex, separated by dots; {@code SHA256} the SHA-256
 * of the parameters' values as stored, in hex (as the CLI's {@code params-sha256} line). Give it to a job with
 * {@link DLionJob.Builder#history(RoundHistory)}.
 */
public final class RoundHistory implements RoundObserver, AutoCloseable {
    private static final HexFormat HEX = HexFormat.of();
    private final OutputStream out;
    private final int worker;
    private final MessageDigest sha;
    private final StringBuilder line = new StringBuilder(128);
    private byte[] scratch = new byte[0];

    private RoundHistory(final OutputStream out, final int worker) {
        this.out = out;
        this.worker = worker;
        try {
            this.sha = MessageDigest.getInstance("SHA-256");
        } catch (final NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Open (create or append to) a worker's history and log its start.
     *
     * @param file   the history file; its directory must exist.
     * @param worker the worker's id.
     * @return the history.
     * @throws IOException when the file cannot be opened.
     */
    public static RoundHistory open(final Path file, final int worker) throws IOException {
        final RoundHistory h = new RoundHistory(Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
            StandardOpenOption.WRITE), worker);
        h.begin("start").append(" pid=").append(ProcessHandle.current().pid());
        h.flush();
        return h;
    }

    @Override
    public synchronized void applied(final RoundResult result) {
        final VoterSet voters = result.voterSet();
        begin("applied").append(" r=").append(result.round()).append(" d=").append(digestOf(result)).append(" v=").append(voters.count())
            .append(" m=");
        for (int i = 0; i < voters.wordCount(); i++) {
            if (i > 0) {
                line.append('.');
            }
            line.append(Long.toHexString(voters.word(i)));
        }
        flush();
    }

    /**
     * @param round the first round the worker votes in after it (re)joined.
     * @param donor the worker whose parameters it took.
     */
    public synchronized void joined(final long round, final int donor) {
        begin("joined").append(" r=").append(round).append(" donor=").append(donor);
        flush();
    }

    /**
     * @param epoch  the epoch that ended, 1-based.
     * @param rounds the rounds done at its end.
     * @param params the parameters.
     */
    public synchronized void epochEnd(final int epoch, final long rounds, final INDArray params) {
        Nd4j.getExecutioner().commit();
        sha.reset();
        final String digest = HEX.formatHex(sha.digest(params.dup().data().asBytes()));
        begin("epoch").append(" e=").append(epoch).append(" r=").append(rounds).append(" p=").append(digest);
        flush();
    }

    /**
     * @param result a round's result.
     * @return the first 16 bytes of the SHA-256 of what it makes a worker apply, in hex.
     */
    public static String digest(final RoundResult result) {
        try {
            final MessageDigest sha = MessageDigest.getInstance("SHA-256");
            return digest(sha, result, new byte[0]);
        } catch (final NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private String digestOf(final RoundResult result) {
        final long words = (result.paramCount() + 63) >>> 6;
        if (scratch.length < words * 8) {
            scratch = new byte[(int) (words * 8)];
        }
        return digest(sha, result, scratch);
    }

    private static String digest(final MessageDigest sha, final RoundResult result, final byte[] buffer) {
        sha.reset();
        sha.update((byte) result.rule().ordinal());
        update(sha, new long[] {result.paramCount(), result.segmentCount()}, buffer);
        update(sha, result.sign(), buffer);
        update(sha, result.tie(), buffer);
        if (result.countPlanes() != null) {
            for (final long[] plane : result.countPlanes()) {
                update(sha, plane, buffer);
            }
        }
        for (int s = 0; s < result.segmentCount(); s++) {
            update(sha, new long[] {result.segmentStartWord(s), result.segmentVoters(s)}, buffer);
        }
        final byte[] full = sha.digest();
        return HEX.formatHex(full, 0, 16);
    }

    private static void update(final MessageDigest sha, final long[] words, final byte[] buffer) {
        if (words == null) {
            sha.update((byte) 0);
            return;
        }
        sha.update((byte) 1);
        final byte[] bytes = buffer.length >= words.length * 8 ? buffer : new byte[words.length * 8];
        for (int i = 0; i < words.length; i++) {
            final long w = words[i];
            for (int b = 0; b < 8; b++) {
                bytes[8 * i + b] = (byte) (w >>> (8 * b));
            }
        }
        sha.update(bytes, 0, words.length * 8);
    }

    private StringBuilder begin(final String event) {
        line.setLength(0);
        return line.append("t=").append(System.currentTimeMillis()).append(" w=").append(worker).append(' ').append(event);
    }

    private void flush() {
        line.append('\n');
        try {
            out.write(line.toString().getBytes(StandardCharsets.US_ASCII));
            out.flush();
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot write the round history: " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void close() {
        try {
            out.close();
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
