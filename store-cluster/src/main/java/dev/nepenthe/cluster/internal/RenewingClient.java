package dev.nepenthe.cluster.internal;

import java.io.Closeable;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.api.AsyncApi;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.RaftRetryFailureException;

/**
 * This replica's Raft client, replaced by a new one once Ratis has failed it for good. When an
 * ordered write runs out of retries (no leader within the retry policy's time, as when a partition
 * and a crash together leave no majority for a while), Ratis fails the client's ordered window, and
 * every later write through that client fails at once as "closed": without a new client the replica
 * could not put anything in the log again, its own attestations included, so no forget would seal.
 */
final class RenewingClient implements Closeable {

    private static final System.Logger LOG = System.getLogger(RenewingClient.class.getName());

    private final Supplier<RaftClient> factory;
    // Guarded by this.
    private RaftClient current;
    private boolean closed;

    /**
     * @param factory makes a client for the group (called now, and again at each renewal)
     */
    RenewingClient(Supplier<RaftClient> factory) {
        this.factory = factory;
        this.current = factory.get();
    }

    private synchronized RaftClient current() {
        return current;
    }

    /**
     * Sends an ordered write through the current client; a failure that ends that client makes a
     * new one for the writes that follow (this one fails as it did).
     */
    CompletableFuture<RaftClientReply> send(Message m) {
        RaftClient c = current();
        return c.async()
                .send(m)
                .whenComplete(
                        (r, t) -> {
                            Throwable cause = t == null ? null : cause(t);
                            if (cause instanceof RaftRetryFailureException
                                    || cause instanceof AlreadyClosedException) {
                                renew(c, cause);
                            }
                        });
    }

    /** The current client's asynchronous API, for reads and watches (not ordered writes). */
    AsyncApi async() {
        return current().async();
    }

    private static Throwable cause(Throwable t) {
        Throwable c = t;
        while ((c instanceof CompletionException || c instanceof ExecutionException)
                && c.getCause() != null) {
            c = c.getCause();
        }
        return c;
    }

    // Identity on purpose: renew only if the failed client is still the one in use.
    @SuppressWarnings("ReferenceEquality")
    private void renew(RaftClient failed, Throwable why) {
        synchronized (this) {
            if (closed || current != failed) {
                return; // closing, or renewed already by another failed write
            }
            current = factory.get();
        }
        LOG.log(
                System.Logger.Level.WARNING,
                "the Raft client failed for good ({0}); a new one takes its place",
                why.getClass().getSimpleName());
        // Outside the lock: closing fails the client's writes still in flight (each may or may not
        // be in the log), and their callbacks come here, on other threads, while it waits.
        closeQuietly(failed);
    }

    private static void closeQuietly(RaftClient c) {
        try {
            c.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "closing the failed Raft client: {0}", e);
        }
    }

    @Override
    public void close() throws IOException {
        RaftClient last;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            last = current;
        }
        // Outside the lock, as in renew: the writes it fails call back into renew.
        last.close();
    }
}
