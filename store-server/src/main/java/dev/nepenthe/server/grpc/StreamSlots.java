package dev.nepenthe.server.grpc;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Streaming calls (bulk upserts, watches) each caller holds open at once, against {@link
 * Limits#maxStreamsPerCaller()}: one token cannot tie up the server's threads and connections on
 * its own.
 */
final class StreamSlots {

    private final int max;
    private final ConcurrentHashMap<String, AtomicInteger> open = new ConcurrentHashMap<>();

    StreamSlots(int max) {
        this.max = max;
    }

    /** A slot for the caller, or RESOURCE_EXHAUSTED when it holds {@code max} already. */
    Slot acquire(Caller caller) {
        AtomicInteger n = open.computeIfAbsent(caller.tokenId(), k -> new AtomicInteger());
        int now = n.incrementAndGet();
        if (now > max) {
            n.decrementAndGet();
            throw new Limits.LimitExceeded(
                    "streams open for this token: expected at most " + max + ", got " + now);
        }
        return new Slot(n);
    }

    /** One open stream; releasing twice releases once. */
    static final class Slot {
        private final AtomicInteger count;
        private final AtomicBoolean released = new AtomicBoolean();

        private Slot(AtomicInteger count) {
            this.count = count;
        }

        void release() {
            if (released.compareAndSet(false, true)) {
                count.decrementAndGet();
            }
        }
    }
}
