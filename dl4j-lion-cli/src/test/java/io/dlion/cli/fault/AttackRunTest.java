package io.dlion.cli.fault;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import io.dlion.testkit.AttackRun;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ./dlion attacks} on real processes: a server and three workers with a secret, a second job beside them, and a
 * stranger's attacks; every worker gets the undisturbed job's result every round and every attack is counted.
 */
class AttackRunTest {
    @TempDir
    Path dir;

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void shouldLeaveTheJobUnaffectedAndCountEveryAttack() throws Exception {
        final ByteArrayOutputStream progress = new ByteArrayOutputStream();
        final AttackRun.Report report = new AttackRun(3, 200_003, 300, 11, dir, new PrintStream(progress, true, StandardCharsets.UTF_8)).run();
        final String table = report.markdown();
        assertTrue(report.unaffected(), "every worker of both jobs got the undisturbed results:\n" + table);
        assertTrue(report.allCounted(), "every attack counted:\n" + table);
    }
}
