package io.dlion.testkit;

import java.nio.file.Path;
import java.util.List;

/**
 * What a {@link FaultRun} does to a job, and the job itself.
 *
 * @param job            job id.
 * @param workers        worker processes.
 * @param params         parameters of the model (the server's --params).
 * @param epochs         epochs the workers train (to turn their progress lines into a fraction of the run).
 * @param trainArgs      the training options every worker gets (data, model, epochs, batch, seed, limits, lr).
 * @param killWorker     the worker that is killed and restarted.
 * @param killWorkerAt   fraction of the run at which it is killed (0: never).
 * @param rejoinAt       fraction at which it is started again with --rejoin (0: never).
 * @param killServerAt   fraction at which the server is killed and restarted (0: never).
 * @param serverDownMs   how long the server stays down.
 * @param lossRate       fraction of received UDP data frames every process's driver drops.
 * @param garbageRate    garbage frames per second sent to the restarted server (0: none).
 * @param roundTimeoutMs the server's round deadline.
 * @param timeoutSeconds longest the disturbed run may take.
 * @param out            output directory: logs of every process, the report.
 */
public record FaultPlan(int job, int workers, long params, int epochs, List<String> trainArgs, int killWorker, double killWorkerAt,
    double rejoinAt, double killServerAt, long serverDownMs, double lossRate, int garbageRate, long roundTimeoutMs, long timeoutSeconds,
    Path out) {

    /** @return this, checked: every error names its option. */
    public FaultPlan validate() {
        require(workers >= 2 && workers <= 64, "--workers must be in [2, 64], got " + workers);
        require(killWorker >= 0 && killWorker < workers, "--kill-worker must be in [0, --workers), got " + killWorker);
        require(killWorkerAt >= 0 && killWorkerAt < 1, "--kill-worker-at must be in [0, 1), got " + killWorkerAt);
        require(rejoinAt == 0 || (killWorkerAt > 0 && rejoinAt > killWorkerAt && rejoinAt < 1),
            "--rejoin-at must be 0 or in (--kill-worker-at, 1), got " + rejoinAt);
        require(killServerAt >= 0 && killServerAt < 1, "--kill-server-at must be in [0, 1), got " + killServerAt);
        require(serverDownMs >= 0, "--server-down-ms must be >= 0, got " + serverDownMs);
        require(lossRate >= 0 && lossRate < 1, "--loss-rate must be in [0, 1), got " + lossRate);
        require(garbageRate >= 0, "--garbage-rate must be >= 0, got " + garbageRate);
        require(garbageRate == 0 || killServerAt > 0, "--garbage-rate goes to the restarted server: it needs --kill-server-at");
        require(roundTimeoutMs >= 100, "--round-timeout-ms must be >= 100, got " + roundTimeoutMs);
        require(timeoutSeconds >= 1, "--timeout-s must be >= 1, got " + timeoutSeconds);
        return this;
    }

    private static void require(final boolean ok, final String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
