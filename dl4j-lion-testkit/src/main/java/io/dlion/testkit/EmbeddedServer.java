package io.dlion.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

import io.dlion.aeron.AeronRuntime;
import io.dlion.aeron.client.AeronVoteExchange;
import io.dlion.aeron.server.AggregationServer;
import org.agrona.CloseHelper;

/**
 * A real slice server on its own agent thread, on an embedded driver, with real workers connected to it and a pool of
 * threads to run their rounds: the set-up of the system tests that send a real server frames next to real rounds.
 * <pre>{@code
 * try (EmbeddedServer s = EmbeddedServer.launch(new AeronRuntime.Context(), serverCtx, 3)) {
 *     List<AeronVoteExchange> workers = s.connect(0, 3, id -> new AeronVoteExchange.Context().jobId(...).workerId(id)...);
 *     ...
 * }
 * assertNull(s.error());
 * }</pre>
 * {@link #close()} closes the workers, the pool, the server's agent and the driver; {@link #error()} is what the server's
 * agent threw, if anything.
 */
public final class EmbeddedServer implements AutoCloseable {
    private final AeronRuntime runtime;
    private final AggregationServer server;
    private final ExecutorService pool;
    private final AtomicReference<Throwable> error = new AtomicReference<>();
    private final List<AeronVoteExchange> workers = new ArrayList<>();

    private EmbeddedServer(final AeronRuntime.Context runtimeCtx, final AggregationServer.Context serverCtx, final int threads) {
        this.runtime = AeronRuntime.launch(runtimeCtx);
        try {
            this.server = AggregationServer.launch(serverCtx.aeron(runtime.aeron()).errorHandler(error::set));
        } catch (final RuntimeException ex) {
            CloseHelper.quietClose(runtime);
            throw ex;
        }
        this.pool = Executors.newFixedThreadPool(threads);
    }

    /**
     * @param runtimeCtx the embedded driver's settings (e.g. injected loss).
     * @param serverCtx  the server's settings; its Aeron client is set here.
     * @param threads    threads of the pool the workers connect and run rounds on.
     * @return the running server.
     */
    public static EmbeddedServer launch(final AeronRuntime.Context runtimeCtx, final AggregationServer.Context serverCtx, final int threads) {
        return new EmbeddedServer(runtimeCtx, serverCtx, threads);
    }

    /**
     * Connect workers {@code first .. first + count - 1} at once, each on a thread of the pool (a worker connects once
     * the server answered its HELLO), within 20 s; they are closed with this server.
     *
     * @param first   the first worker id.
     * @param count   how many.
     * @param context the context of worker {@code id}, without the Aeron client (set here).
     * @return the connected workers, in id order.
     * @throws Exception when one did not connect in time.
     */
    public List<AeronVoteExchange> connect(final int first, final int count, final IntFunction<AeronVoteExchange.Context> context)
        throws Exception {
        final List<Future<AeronVoteExchange>> connecting = new ArrayList<>();
        for (int id = first; id < first + count; id++) {
            final AeronVoteExchange.Context ctx = context.apply(id).aeron(runtime.aeron());
            connecting.add(pool.submit(() -> new AeronVoteExchange(ctx)));
        }
        final List<AeronVoteExchange> connected = new ArrayList<>();
        for (final Future<AeronVoteExchange> future : connecting) {
            final AeronVoteExchange worker = future.get(20, TimeUnit.SECONDS);
            workers.add(worker);
            connected.add(worker);
        }
        return connected;
    }

    /** @return the driver and client. */
    public AeronRuntime runtime() {
        return runtime;
    }

    /** @return the server (its counters and layout; its duty cycle runs on its own thread). */
    public AggregationServer server() {
        return server;
    }

    /** @return threads to run the workers' rounds on. */
    public ExecutorService pool() {
        return pool;
    }

    /** @return what the server's agent threw, or null. */
    public Throwable error() {
        return error.get();
    }

    @Override
    public void close() {
        pool.shutdownNow();
        try {
            pool.awaitTermination(5, TimeUnit.SECONDS);
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        CloseHelper.closeAll(workers);
        CloseHelper.closeAll(server, runtime);
    }
}
