package io.dlion.ui;

import java.util.concurrent.CountDownLatch;

import org.deeplearning4j.ui.api.UIServer;

/**
 * {@code ./dlion ui [PORT]}: DL4J's training UI on {@code http://0.0.0.0:PORT} (default 9000), with its remote listener on,
 * so that workers started with {@code --ui http://HOST:PORT} (or a {@code DLionUi.remote(...)}) show up in it, each under
 * its worker id. Runs until SIGTERM or Ctrl-C.
 */
public final class UiServerMain {
    /** The UI's port unless given: DL4J's own default. */
    static final int DEFAULT_PORT = 9000;

    private UiServerMain() {
    }

    /**
     * @param args the port, optional.
     */
    public static void main(final String[] args) throws InterruptedException {
        final int port;
        try {
            port = args.length == 0 ? DEFAULT_PORT : Integer.parseInt(args[0]);
        } catch (final NumberFormatException ex) {
            System.err.println("./dlion ui [PORT]: PORT must be a number, got '" + args[0] + "'");
            System.exit(2);
            return;
        }
        if (port < 1 || port > 65535) {
            System.err.println("./dlion ui [PORT]: PORT must be in [1, 65535], got " + port);
            System.exit(2);
        }
        System.setProperty("org.deeplearning4j.ui.port", Integer.toString(port));
        final UIServer server = UIServer.getInstance();
        server.enableRemoteListener();
        System.out.println("DL4J training UI: http://0.0.0.0:" + server.getPort() + "/train (remote listener on; workers: --ui http://THIS_HOST:"
            + server.getPort() + ")");
        final CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.stop();
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            stop.countDown();
        }, "dlion-ui-stop"));
        stop.await();
    }
}
