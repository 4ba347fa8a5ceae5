package io.dlion.monitor;

import java.lang.reflect.Field;
import java.util.Collection;
import java.util.Objects;

import org.deeplearning4j.core.storage.StatsStorageRouter;
import org.deeplearning4j.core.storage.impl.RemoteUIStatsStorageRouter;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.deeplearning4j.ui.model.stats.StatsListener;
import org.deeplearning4j.ui.model.stats.impl.DefaultStatsUpdateConfiguration;

/**
 * A D-Lion job's workers in DL4J's training UI, the way DL4J's own Spark training reports them: every worker's model
 * gets a {@link StatsListener} whose worker id is the D-Lion worker's ({@code worker-<id>}), all of one job under one
 * session id, sent to a {@code UIServer} in another process through a {@link RemoteUIStatsStorageRouter} (the UI
 * server must have called {@code UIServer.enableRemoteListener()}; {@code ./dlion ui} starts one).
 * <pre>{@code
 * try (DLionUi ui = DLionUi.remote("http://uihost:9000", "job-1")) {
 *     ui.attach(net, workerId);                  // before DLionJob.builder(net, ...)
 *     job.fit();
 * }                                              // close: sends what is still queued
 * }</pre>
 * Only the listener's side is here (DL4J's {@code deeplearning4j-ui-model}, a few hundred KB); the UI server itself
 * (Vert.x, {@code deeplearning4j-ui}) runs elsewhere.
 */
public final class DLionUi implements AutoCloseable {
    /** Longest {@link #close()} waits for the router to send what is queued. */
    static final long FLUSH_TIMEOUT_MS = 10_000;
    /** A report every this many iterations unless told otherwise: DL4J's StatsListener's own default. */
    public static final int DEFAULT_REPORT_EVERY = 10;

    private final StatsStorageRouter router;
    private final String sessionId;
    private final boolean ownsRouter;
    private int reportEvery = DEFAULT_REPORT_EVERY;

    private DLionUi(final StatsStorageRouter router, final String sessionId, final boolean ownsRouter) {
        this.router = Objects.requireNonNull(router, "router");
        this.sessionId = Objects.requireNonNull(sessionId, "sessionId");
        this.ownsRouter = ownsRouter;
    }

    /**
     * @param iterations report every this many iterations (rounds), >= 1; default {@value #DEFAULT_REPORT_EVERY}.
     * @return this for a fluent API.
     */
    public DLionUi reportEvery(final int iterations) {
        if (iterations < 1) {
            throw new IllegalArgumentException("the UI's reporting frequency must be >= 1 iteration, got " + iterations);
        }
        this.reportEvery = iterations;
        return this;
    }

    /**
     * @param url       the UI server, e.g. {@code http://uihost:9000}.
     * @param sessionId the job's session in the UI, the same on every worker (e.g. {@code dlion-job-1}).
     * @return reports to that UI server.
     * @throws IllegalArgumentException when the URL is not an http(s) URL.
     */
    public static DLionUi remote(final String url, final String sessionId) {
        if (url == null || !(url.startsWith("http://") || url.startsWith("https://"))) {
            throw new IllegalArgumentException("--ui must be the UI server's http://HOST:PORT, got '" + url + "'");
        }
        return new DLionUi(new RemoteUIStatsStorageRouter(url), sessionId, true);
    }

    /**
     * @param router    where the reports go (e.g. an in-memory {@code StatsStorage} in the same process); not closed here.
     * @param sessionId the job's session.
     * @return reports to that router.
     */
    public static DLionUi to(final StatsStorageRouter router, final String sessionId) {
        return new DLionUi(router, sessionId, false);
    }

    /**
     * @param workerId a D-Lion worker id.
     * @return DL4J's worker id for it in the UI.
     */
    public static String workerName(final int workerId) {
        return "worker-" + workerId;
    }

    /**
     * @param workerId the D-Lion worker this listener reports for.
     * @return a listener reporting every iteration of the model it is added to, as that worker of this job.
     */
    public TrainingListener listener(final int workerId) {
        return new StatsListener(router, null, new DefaultStatsUpdateConfiguration.Builder().reportingFrequency(reportEvery).build(),
            sessionId, workerName(workerId));
    }

    /**
     * Add this worker's listener to the model's listeners.
     *
     * @param model    a MultiLayerNetwork or ComputationGraph.
     * @param workerId the D-Lion worker it is.
     */
    public void attach(final Model model, final int workerId) {
        final TrainingListener l = listener(workerId);
        if (model instanceof MultiLayerNetwork) {
            ((MultiLayerNetwork) model).addListeners(l);
        } else if (model instanceof ComputationGraph) {
            ((ComputationGraph) model).addListeners(l);
        } else {
            throw new IllegalArgumentException("model must be a MultiLayerNetwork or ComputationGraph, got " + model.getClass().getName());
        }
    }

    /** @return the session every worker of this job reports under. */
    public String sessionId() {
        return sessionId;
    }

    /**
     * Send what is queued (waits at most {@value #FLUSH_TIMEOUT_MS} ms), then stop the router. DL4J's remote router
     * sends from a background thread and drops its queue when shut down, so a process that exits right after training
     * would lose its last reports without this.
     */
    @Override
    public void close() {
        if (!ownsRouter) {
            return;
        }
        final RemoteUIStatsStorageRouter remote = (RemoteUIStatsStorageRouter) router;
        final long deadline = System.nanoTime() + FLUSH_TIMEOUT_MS * 1_000_000L;
        try {
            while (!sent(remote) && System.nanoTime() - deadline < 0) {
                Thread.sleep(20);
            }
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
        } finally {
            remote.shutdown();
        }
    }

    /**
     * @return true when the router's queue is empty and its sending thread waits for more (the router keeps both private:
     *     read reflectively; if that fails, true, and close does not wait).
     */
    private static boolean sent(final RemoteUIStatsStorageRouter router) {
        try {
            final Collection<?> queue = (Collection<?>) field(router, "queue");
            final Thread thread = (Thread) field(router, "postThread");
            return queue == null || (queue.isEmpty() && (thread == null || !thread.isAlive() || thread.getState() == Thread.State.WAITING));
        } catch (final ReflectiveOperationException | RuntimeException ex) {
            return true;
        }
    }

    private static Object field(final Object target, final String name) throws ReflectiveOperationException {
        final Field f = RemoteUIStatsStorageRouter.class.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(target);
    }
}
