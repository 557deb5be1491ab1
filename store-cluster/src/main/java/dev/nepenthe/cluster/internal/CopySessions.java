package dev.nepenthe.cluster.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A replica's copies of its store for others that catch up, served in chunks through Ratis's
 * read-only queries (the channel replicas already share, with mutual TLS when it is on). A copy is
 * taken whole at a session's first chunk, held in memory (never on disk, where a leftover would
 * keep keys a later forget destroys) and dropped, zeroed, when its last chunk is sent or after
 * {@value #IDLE_MILLIS} ms without a call. At most {@value #MAX_SESSIONS} at once.
 */
final class CopySessions {

    /** The first byte of a copy query; the read barrier's query is empty. */
    static final byte QUERY = 'C';

    static final int CHUNK = 4 << 20;
    static final long IDLE_MILLIS = 60_000;
    static final int MAX_SESSIONS = 2;
    private static final long CAPTURE_WAIT_SECONDS = 600;

    /** Takes a copy of this replica (the state machine's image, under its apply lock). */
    interface Capture {
        void to(OutputStream out) throws IOException;
    }

    /** A buffer whose bytes are zeroed once taken. */
    private static final class Buffer extends ByteArrayOutputStream {
        byte[] take() {
            byte[] out = Arrays.copyOf(buf, count);
            Arrays.fill(buf, (byte) 0);
            reset();
            return out;
        }
    }

    private static final class Session {
        final CompletableFuture<byte[]> image = new CompletableFuture<>();
        long lastUse;
        boolean done;

        Session(long now) {
            this.lastUse = now;
        }
    }

    private final Map<Long, Session> sessions = new LinkedHashMap<>();
    private final Capture capture;

    CopySessions(Capture capture) {
        this.capture = capture;
    }

    /** A query asking for the chunk at {@code offset} of session {@code id}. */
    static byte[] query(long id, long offset) {
        return ByteBuffer.allocate(17).put(QUERY).putLong(id).putLong(offset).array();
    }

    /**
     * Answers a chunk query: the image's total length, then its bytes from the offset on (at most
     * {@link #CHUNK}).
     */
    byte[] answer(byte[] query) throws IOException {
        if (query.length != 17 || query[0] != QUERY) {
            throw new IOException(
                    "copy query: expected 17 bytes starting with 'C', got " + query.length);
        }
        ByteBuffer q = ByteBuffer.wrap(query, 1, 16);
        long id = q.getLong();
        long offset = q.getLong();
        long now = System.currentTimeMillis();
        Session s;
        boolean capturing = false;
        synchronized (this) {
            expire(now);
            s = sessions.get(id);
            if (s == null && offset != 0) {
                throw new IOException(
                        "copy session "
                                + Long.toHexString(id)
                                + ": expected a session that exists, got none (it expired or was"
                                + " finished); start again from offset 0");
            }
            if (s == null && sessions.size() >= MAX_SESSIONS) {
                throw new IOException(
                        "expected at most "
                                + MAX_SESSIONS
                                + " copies in flight, got as many already; try again later");
            }
            if (s == null) {
                // A retried first call (the client gave up waiting) finds this one and waits for
                // the same copy rather than taking another.
                s = new Session(now);
                sessions.put(id, s);
                capturing = true;
            }
        }
        if (capturing) {
            Buffer out = new Buffer();
            try {
                capture.to(out);
                s.image.complete(out.take());
            } catch (IOException | RuntimeException e) {
                out.take();
                s.image.completeExceptionally(e);
                synchronized (this) {
                    sessions.remove(id);
                }
                throw e;
            }
        }
        byte[] image;
        try {
            image = s.image.get(CAPTURE_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while a copy was taken", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException(
                    "copy session "
                            + Long.toHexString(id)
                            + ": the copy could not be taken ("
                            + e.getClass().getSimpleName()
                            + ")",
                    e);
        }
        // Under the lock: the last chunk sent drops and zeroes the copy, and a call for the same
        // session (a retry) must not read it zeroed.
        synchronized (this) {
            if (s.done) {
                throw new IOException(
                        "copy session "
                                + Long.toHexString(id)
                                + ": expected a session that exists, got one that was sent whole"
                                + " or expired; start again from offset 0");
            }
            if (offset < 0 || offset > image.length) {
                throw new IOException(
                        "copy session "
                                + Long.toHexString(id)
                                + ": expected an offset of 0 to "
                                + image.length
                                + ", got "
                                + offset);
            }
            int n = (int) Math.min(CHUNK, image.length - offset);
            ByteBuffer out = ByteBuffer.allocate(8 + n);
            out.putLong(image.length).put(image, (int) offset, n);
            s.lastUse = now;
            if (offset + n == image.length) {
                drop(id);
            }
            return out.array();
        }
    }

    private void expire(long now) {
        Iterator<Map.Entry<Long, Session>> it = sessions.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<Long, Session> e = it.next();
            if (now - e.getValue().lastUse > IDLE_MILLIS && e.getValue().image.isDone()) {
                zero(e.getValue());
                it.remove();
            }
        }
    }

    private void drop(long id) {
        Session s = sessions.remove(id);
        if (s != null) {
            zero(s);
        }
    }

    private static void zero(Session s) {
        s.done = true;
        byte[] image = s.image.getNow(null);
        if (image != null) {
            Arrays.fill(image, (byte) 0);
        }
    }

    /** Drops every copy. */
    synchronized void close() {
        for (Session s : sessions.values()) {
            zero(s);
        }
        sessions.clear();
    }
}
