package dev.nepenthe.server.grpc;

/**
 * What one call may ask of the server. Exceeding a limit ends the call RESOURCE_EXHAUSTED with a
 * description naming the limit, the value allowed and the value that arrived; the store's own rules
 * (dimension, finite values, id and text sizes) answer INVALID_ARGUMENT.
 *
 * @param maxMessageBytes largest request message, in bytes (gRPC refuses larger ones itself)
 * @param maxBatch most records in one upsert message, or ids in one delete
 * @param maxK most hits one search may ask for
 * @param maxTextChars longest record text, in characters
 * @param maxDimension largest vector dimension a collection may have
 * @param maxStreamsPerCaller most streaming calls (bulk upserts, watches) one token may hold open
 *     at once
 * @param shutdownGraceSeconds how long a shutdown lets calls in flight finish before it cancels
 *     them
 * @param cacheEntries most search results the query cache keeps (0: no cache)
 * @param cacheBytes most bytes the query cache's results may take, by its estimate
 * @param calls how many calls and request bytes the server holds at once, and for how long
 * @param queries how much work one filter or search knob may ask for
 */
record Limits(
        int maxMessageBytes,
        int maxBatch,
        int maxK,
        int maxTextChars,
        int maxDimension,
        int maxStreamsPerCaller,
        int shutdownGraceSeconds,
        int cacheEntries,
        long cacheBytes,
        Calls calls,
        Queries queries) {

    static final Limits DEFAULTS =
            new Limits(
                    32 << 20,
                    10_000,
                    1_000,
                    65_536,
                    4_096,
                    8,
                    30,
                    10_000,
                    64L << 20,
                    Calls.DEFAULTS,
                    Queries.DEFAULTS);

    Limits {
        if (maxMessageBytes < 1024
                || maxBatch < 1
                || maxK < 1
                || maxTextChars < 1
                || maxDimension < 1
                || maxStreamsPerCaller < 1
                || shutdownGraceSeconds < 0
                || cacheEntries < 0
                || cacheBytes < 0
                || calls == null
                || queries == null) {
            throw new IllegalArgumentException(
                    "server limits: expected positive limits (messages of 1 KiB or more),"
                            + " got "
                            + this);
        }
    }

    Limits withCalls(Calls c) {
        return copy(cacheEntries, cacheBytes, c, queries);
    }

    Limits withQueries(Queries q) {
        return copy(cacheEntries, cacheBytes, calls, q);
    }

    Limits withCache(int entries, long bytes) {
        return copy(entries, bytes, calls, queries);
    }

    /** These per-message limits with the given cache, call and query limits. */
    private Limits copy(int entries, long bytes, Calls c, Queries q) {
        return new Limits(
                maxMessageBytes,
                maxBatch,
                maxK,
                maxTextChars,
                maxDimension,
                maxStreamsPerCaller,
                shutdownGraceSeconds,
                entries,
                bytes,
                c,
                q);
    }

    /**
     * What the server holds for its callers at once. A call counts from the moment its headers are
     * authenticated until it ends, whatever it is waiting for (its request's bytes, a thread, the
     * store), so a client that opens calls and never finishes sending them holds at most {@code
     * inFlightPerToken} of them, and a tenant at most {@code inFlightPerTenant}: the rest of the
     * server's {@code inFlight} stays for the other tenants.
     *
     * @param inFlight most calls in flight over all callers; the server runs its handlers on this
     *     many threads (plus a few for health checks and refusals), so an admitted call never waits
     *     for a thread behind another tenant
     * @param inFlightPerTenant most calls in flight for the tokens of one tenant
     * @param inFlightPerToken most calls in flight for one token
     * @param receivingBytes most bytes of request messages still arriving, over all calls: a
     *     message is counted from its first byte until it is complete (or the call ends), so
     *     half-sent bodies cannot fill the memory
     * @param receivingBytesPerTenant the same for the calls of one tenant
     * @param requestIdleSeconds longest wait for a call's next request message, or for the end of
     *     its request, before the call is ended
     * @param connectionIdleSeconds a connection with no call for this long is closed (0: never)
     * @param connectionAgeSeconds a connection this old is asked to reconnect (GOAWAY; 0: never)
     * @param connectionAgeGraceSeconds the calls of such a connection then get this long to finish
     * @param keepAlivePermitSeconds a client may ping at most this often; more often, and the
     *     connection is closed (HTTP/2 ENHANCE_YOUR_CALM)
     * @param streamsPerConnection most HTTP/2 streams one connection may hold open at once (calls
     *     admitted or waiting to be)
     */
    record Calls(
            int inFlight,
            int inFlightPerTenant,
            int inFlightPerToken,
            long receivingBytes,
            long receivingBytesPerTenant,
            int requestIdleSeconds,
            int connectionIdleSeconds,
            int connectionAgeSeconds,
            int connectionAgeGraceSeconds,
            int keepAlivePermitSeconds,
            int streamsPerConnection) {

        /**
         * 64 calls, 32 a tenant, 16 a token; 256 MiB arriving, 128 MiB a tenant; a minute for the
         * next request message; connections idle 5 minutes closed, asked to reconnect after a day
         * with an hour to finish (a bulk upload is one long stream); pings at most once a minute;
         * 128 streams a connection.
         */
        static final Calls DEFAULTS =
                new Calls(64, 32, 16, 256L << 20, 128L << 20, 60, 300, 86_400, 3_600, 60, 128);

        Calls {
            if (inFlight < 1
                    || inFlightPerTenant < 1
                    || inFlightPerToken < 1
                    || receivingBytes < 1
                    || receivingBytesPerTenant < 1
                    || requestIdleSeconds < 1
                    || connectionIdleSeconds < 0
                    || connectionAgeSeconds < 0
                    || connectionAgeGraceSeconds < 0
                    || keepAlivePermitSeconds < 0
                    || streamsPerConnection < 1) {
                throw new IllegalArgumentException(
                        "server call limits: expected positive limits (0 allowed for the"
                                + " connection ages and keep-alive), got "
                                + this);
            }
        }

        /**
         * Threads that run handlers: one per call in flight, and a few for health checks and
         * refusals.
         */
        int handlerThreads() {
            return inFlight + 4;
        }
    }

    /**
     * How much one filter or search may ask of the store. A filter is answered from keyed hashes of
     * the metadata, so its cost is counted in hashes: one for {@code eq} and {@code exists}, one
     * per value of {@code in}, and up to {@value #RANGE_HASHES} for a {@code range} (a union of
     * trie buckets in two tries, up to 30 buckets on each of 16 levels).
     *
     * @param filterTerms most terms (eq, in, range, exists, not, all, any) in one filter
     * @param filterDepth deepest nesting of not, all and any
     * @param filterHashes most keyed hashes one filter may cost, by the count above
     * @param params most search knobs in one request
     * @param efSearch largest {@code efSearch} (HNSW beam width)
     * @param nprobe largest {@code nprobe} (IVF lists probed)
     * @param rerank largest {@code rerank} (candidates re-scored exactly)
     * @param window largest {@code window} (candidates each list gives a hybrid fusion)
     * @param rrfK largest {@code rrfK} (the fusion's constant)
     */
    record Queries(
            int filterTerms,
            int filterDepth,
            int filterHashes,
            int params,
            int efSearch,
            int nprobe,
            int rerank,
            int window,
            int rrfK) {

        /** Keyed hashes a range filter may cost: 2 tries, 16 levels, up to 30 buckets a level. */
        static final int RANGE_HASHES = 2 * 16 * 30;

        /**
         * 1,024 terms, 32 deep, 16,384 hashes; 16 knobs, efSearch and nprobe 4,096, rerank and
         * window 10,000, rrfK 1,000,000.
         */
        static final Queries DEFAULTS =
                new Queries(1_024, 32, 16_384, 16, 4_096, 4_096, 10_000, 10_000, 1_000_000);

        Queries {
            if (filterTerms < 1
                    || filterDepth < 1
                    || filterHashes < 1
                    || params < 0
                    || efSearch < 1
                    || nprobe < 1
                    || rerank < 0
                    || window < 1
                    || rrfK < 0) {
                throw new IllegalArgumentException(
                        "server query limits: expected positive limits, got " + this);
            }
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
