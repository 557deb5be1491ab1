package dev.nepenthe.cluster.chaos;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy for the connections one replica opens to another, so the test can part them without
 * touching the kernel: it pipes bytes both ways (two virtual threads per connection) until it is
 * cut, and counts what it carried, so a round can show that replication really went through it.
 *
 * <p>Two ways to cut, as a network fails: {@link Cut#RESET} resets every connection at once and
 * every new one as it arrives (a peer that is unreachable and says so); {@link Cut#STALL} holds the
 * bytes of every connection, old and new, until {@link #heal} lets them through again, none lost (a
 * network that drops packets while TCP waits it out).
 */
final class LinkProxy implements AutoCloseable {

    /** How a cut link fails. */
    enum Cut {
        /** Connections are reset, live and new ones. */
        RESET,
        /** Bytes wait in the proxy (and in both sockets' buffers) until the link heals. */
        STALL
    }

    private static final int CONNECT_MILLIS = 2_000;

    private final String name;
    private final InetSocketAddress target;
    private final ServerSocket server;
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong connections = new AtomicLong();
    // Guarded by this.
    private final Set<Pipe> live = new HashSet<>();
    private Cut cut;
    private boolean closed;

    private LinkProxy(String name, ServerSocket server, InetSocketAddress target) {
        this.name = name;
        this.server = server;
        this.target = target;
    }

    /**
     * Listens on {@code listen} and forwards each connection to {@code target}, healed.
     *
     * @param name the link's name, for threads and messages (e.g. {@code n1->n2})
     * @throws IOException if {@code listen} cannot be bound
     */
    static LinkProxy open(String name, InetSocketAddress listen, InetSocketAddress target)
            throws IOException {
        ServerSocket server = new ServerSocket();
        try {
            server.bind(listen, 64);
        } catch (IOException e) {
            server.close();
            throw new IOException(
                    "link " + name + ": cannot listen on " + listen + ": " + e.getMessage(), e);
        }
        LinkProxy p = new LinkProxy(name, server, target);
        Thread.ofVirtual().name("link " + name).start(p::accept);
        return p;
    }

    String name() {
        return name;
    }

    /** Bytes carried, both ways, over every connection so far. */
    long bytes() {
        return bytes.get();
    }

    /** Connections forwarded to the target so far. */
    long connections() {
        return connections.get();
    }

    /** Cuts the link: live connections are reset or held, new ones likewise. */
    synchronized void cut(Cut how) {
        cut = how;
        if (how == Cut.RESET) {
            List.copyOf(live).forEach(Pipe::reset);
            live.clear();
        }
        notifyAll();
    }

    /** Lets bytes and connections through again (held bytes first). */
    synchronized void heal() {
        cut = null;
        notifyAll();
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            List.copyOf(live).forEach(Pipe::reset);
            live.clear();
            notifyAll();
        }
        try {
            server.close();
        } catch (IOException e) {
            // Nothing listens any more either way.
        }
    }

    /**
     * Waits while the link is stalled; true when bytes may pass, false when the link resets them or
     * is closed.
     */
    private synchronized boolean passing() {
        while (cut == Cut.STALL && !closed) {
            try {
                wait();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return cut == null && !closed;
    }

    private void accept() {
        while (true) {
            Socket from;
            try {
                from = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            Thread.ofVirtual().name("link " + name + " connect").start(() -> connect(from));
        }
    }

    /** Connects an accepted socket to the target once the link lets it, and pipes both ways. */
    private void connect(Socket from) {
        if (!passing()) {
            resetQuietly(from);
            return;
        }
        Socket to = new Socket();
        try {
            to.connect(target, CONNECT_MILLIS);
        } catch (IOException e) {
            // The target is down (killed): the caller sees its connection reset, as if refused.
            resetQuietly(to);
            resetQuietly(from);
            return;
        }
        Pipe p = new Pipe(from, to);
        synchronized (this) {
            if (cut == Cut.RESET || closed) {
                p.reset();
                return;
            }
            live.add(p);
        }
        connections.incrementAndGet();
        Thread.ofVirtual().name("link " + name + " back").start(() -> pump(p, to, from));
        pump(p, from, to);
    }

    /** Copies one direction until its end of stream, an error or a reset. */
    private void pump(Pipe p, Socket in, Socket out) {
        byte[] buf = new byte[16 * 1024];
        try {
            InputStream is = in.getInputStream();
            OutputStream os = out.getOutputStream();
            int n;
            while ((n = is.read(buf)) >= 0) {
                if (!passing()) {
                    p.reset();
                    return;
                }
                os.write(buf, 0, n);
                os.flush();
                bytes.addAndGet(n);
            }
            // The end of the stream is news too: a cut link holds or resets it.
            if (!passing()) {
                p.reset();
                return;
            }
            out.shutdownOutput();
            p.oneWayDone();
        } catch (IOException e) {
            p.reset();
        } finally {
            if (p.done()) {
                synchronized (this) {
                    live.remove(p);
                }
            }
        }
    }

    private static void resetQuietly(Socket s) {
        try {
            if (!s.isClosed()) {
                // Linger 0: the close sends a reset, not an orderly end.
                s.setSoLinger(true, 0);
            }
        } catch (IOException e) {
            // Closed below either way.
        }
        try {
            s.close();
        } catch (IOException e) {
            // Nothing more to release.
        }
    }

    /** One proxied connection: the socket accepted and the one opened to the target. */
    private static final class Pipe {
        private final Socket from;
        private final Socket to;
        private final AtomicInteger open = new AtomicInteger(2);

        Pipe(Socket from, Socket to) {
            this.from = from;
            this.to = to;
        }

        /** One direction reached its end of stream; both done closes the sockets. */
        void oneWayDone() {
            if (open.decrementAndGet() == 0) {
                close(from);
                close(to);
            }
        }

        void reset() {
            open.set(0);
            resetQuietly(from);
            resetQuietly(to);
        }

        boolean done() {
            return open.get() <= 0;
        }

        private static void close(Socket s) {
            try {
                s.close();
            } catch (IOException e) {
                // Nothing more to release.
            }
        }
    }
}
