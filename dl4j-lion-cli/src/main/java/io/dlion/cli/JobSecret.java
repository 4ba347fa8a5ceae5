package io.dlion.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.EnumSet;
import java.util.Set;

import io.dlion.aeron.wire.HelloCredentials;

/**
 * The job's shared secret on disk, kept as ssh keeps a private key: written with owner-only permissions
 * ({@code ./dlion secret FILE}), and refused when the file can be read or written by its group or others.
 */
final class JobSecret {
    /** Bytes of a secret written by {@link #write(Path)}. */
    static final int LENGTH = 32;

    private static final Set<PosixFilePermission> NOT_OWNER = EnumSet.of(PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
        PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    private JobSecret() {
    }

    /**
     * Write {@value #LENGTH} random bytes into a new file readable and writable by its owner only.
     *
     * @param file the new file; an existing file is not overwritten.
     * @throws IllegalArgumentException when the file exists.
     */
    static void write(final Path file) {
        final byte[] secret = new byte[LENGTH];
        new SecureRandom().nextBytes(secret);
        try {
            if (Files.getFileAttributeView(file.toAbsolutePath().getParent(), PosixFileAttributeView.class) != null) {
                Files.createFile(file, PosixFilePermissions.asFileAttribute(EnumSet.of(PosixFilePermission.OWNER_READ,
                    PosixFilePermission.OWNER_WRITE)));
            } else {
                Files.createFile(file);
            }
            Files.write(file, secret);
        } catch (final FileAlreadyExistsException ex) {
            throw new IllegalArgumentException("secret file " + file + " exists: not overwritten (remove it first to make a new secret)", ex);
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot write secret file " + file, ex);
        }
    }

    /**
     * Read a job's secret, refusing a file its group or others may read or write.
     *
     * @param file the secret file.
     * @return its bytes.
     * @throws IllegalArgumentException naming the file when it is missing, too open or too short.
     */
    static byte[] read(final Path file) {
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("secret file " + file + " does not exist or is not a file (write one with './dlion secret "
                + file + "')");
        }
        try {
            final PosixFileAttributeView view = Files.getFileAttributeView(file, PosixFileAttributeView.class);
            if (view != null) {
                final Set<PosixFilePermission> permissions = view.readAttributes().permissions();
                if (permissions.stream().anyMatch(NOT_OWNER::contains)) {
                    throw new IllegalArgumentException("secret file " + file + " is accessible by group or others ("
                        + PosixFilePermissions.toString(permissions) + "): refused, as ssh refuses such a key; run 'chmod 600 " + file + "'");
                }
            }
            final byte[] secret = Files.readAllBytes(file);
            if (secret.length < HelloCredentials.MIN_SECRET_LENGTH) {
                throw new IllegalArgumentException("secret file " + file + " holds " + secret.length + " bytes, at least "
                    + HelloCredentials.MIN_SECRET_LENGTH + " are needed (write one with './dlion secret FILE')");
            }
            return secret;
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot read secret file " + file, ex);
        }
    }

    /**
     * @param frameMac the --frame-mac flag.
     * @param secret   the secret the command runs with, or null.
     * @return the flag.
     * @throws IllegalArgumentException naming --secret-file when the flag is set without a secret.
     */
    static boolean checkFrameMac(final boolean frameMac, final byte[] secret) {
        if (frameMac && secret == null) {
            throw new IllegalArgumentException("--frame-mac needs the job's secret: give --secret-file");
        }
        return frameMac;
    }

    /**
     * The secret a UDP server or worker runs with: {@code --secret-file}, or none with an explicit {@code --insecure}
     * (and a warning on standard error).
     *
     * @param secretFile the --secret-file, or null.
     * @param insecure   the --insecure flag.
     * @param role       "server" or "worker", for the messages.
     * @return the secret, or null when insecure.
     * @throws IllegalArgumentException when neither or both are given.
     */
    static byte[] forUdp(final Path secretFile, final boolean insecure, final String role) {
        if (secretFile != null && insecure) {
            throw new IllegalArgumentException("--secret-file and --insecure exclude each other");
        }
        if (secretFile != null) {
            return read(secretFile);
        }
        if (!insecure) {
            throw new IllegalArgumentException("a UDP " + role + " needs the job's secret: --secret-file FILE (write one with"
                + " './dlion secret FILE' and give the same file to the server and every worker), or --insecure to run without"
                + " authentication");
        }
        System.err.println("WARNING: " + role + " runs with --insecure: no job secret. Anyone who reaches its UDP ports can take over a"
            + " worker id with a HELLO and vote in its place, and a worker cannot tell its server from an impostor that answers its"
            + " HELLO. Use --secret-file outside a trusted, isolated network.");
        return null;
    }
}
