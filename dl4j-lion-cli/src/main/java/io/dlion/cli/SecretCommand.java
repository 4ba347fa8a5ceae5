package io.dlion.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code ./dlion secret FILE}: write a new job secret, 32 random bytes, readable by its owner only. */
@Command(name = "secret", mixinStandardHelpOptions = true,
    description = "Write a new job secret (32 random bytes, owner-only permissions) for --secret-file of the server and every worker.")
public final class SecretCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "FILE", description = "The file to create; an existing file is not overwritten.")
    Path file;

    @Override
    public Integer call() {
        JobSecret.write(file);
        System.out.println("wrote a job secret of " + JobSecret.LENGTH + " random bytes to " + file + " (rw-------); give it to the server"
            + " and every worker with --secret-file " + file);
        return 0;
    }
}
