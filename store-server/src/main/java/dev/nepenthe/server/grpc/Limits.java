package dev.nepenthe.server.grpc;

/**
 * What one call may ask of the server. Exceeding a limit ends the call RESOURCE_EXHAUSTED with a
 * description naming the limit, the value allowed and the value that arrived; the store's own
 * rules (dimension, finite values, id and text sizes) answer INVALID_ARGUMENT.
 *
 * @param maxMessageBytes  largest request message, in bytes (gRPC refuses larger ones itself)
 * @param maxBatch         most records in one upsert message, or ids in one delete
 * @param maxK             most hits one search may ask for
 * @param maxTextChars     longest record text, in characters
 * @param maxDimension     largest vector dimension a collection may have
 * @param maxStreamsPerCaller most streaming calls (bulk upserts, watches) one token may hold open at once
 * @param shutdownGraceSeconds how long a shutdown lets calls in flight finish before it cancels them
 * @param cacheEntries most search results the query cache keeps (0: no cache)
 * @param cacheBytes   most bytes the query cache's results may take, by its estimate
 */
record Limits(int maxMessageBytes, int maxBatch, int maxK, int maxTextChars, int maxDimension,
        int maxStreamsPerCaller, int shutdownGraceSeconds, int cacheEntries, long cacheBytes) {

    static final Limits DEFAULTS = new Limits(32 << 20, 10_000, 1_000, 65_536, 4_096, 8, 30, 10_000, 64L << 20);

    Limits {
        if (maxMessageBytes < 1024 || maxBatch < 1 || maxK < 1 || maxTextChars < 1 || maxDimension < 1
                || maxStreamsPerCaller < 1 || shutdownGraceSeconds < 0 || cacheEntries < 0 || cacheBytes < 0) {
            throw new IllegalArgumentException("server limits: expected positive limits (messages of 1 KiB or more),"
                    + " got " + this);
        }
    }

    static void check(String what, long allowed, long arrived) {
        if (arrived > allowed) {
            throw new LimitExceeded(what + ": expected at most " + allowed + ", got " + arrived);
        }
    }

    /** A configured limit was exceeded: RESOURCE_EXHAUSTED, not INVALID_ARGUMENT. */
    static final class LimitExceeded extends RuntimeException {
        LimitExceeded(String message) {
            super(message, null, false, false);
        }
    }
}
