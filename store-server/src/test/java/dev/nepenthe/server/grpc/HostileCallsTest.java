package dev.nepenthe.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.grpc.v1.UpsertRequest;
import dev.nepenthe.testing.Seeds;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile clients against the server's bounds on calls, over the real transport (Netty on
 * loopback): half-sent calls in numbers (raw HTTP/2, {@link HalfSentCalls}), request bytes still
 * arriving past a tenant's budget, and bulk uploads that end badly. Each case checks that the
 * server stays up, that tenants who are not attacking are answered within {@link
 * HostileServer#SERVED_WITHIN_SECONDS}, and (when {@link HostileServer} closes) that a digest of
 * every stored record is unchanged. {@link HostileInputTest} has the random requests, the query
 * bounds and the plaintext refusal.
 */
class HostileCallsTest {

    @TempDir Path tmp;

    /**
     * Two hundred half-sent calls, each declaring a 32 MiB body and sending 2 MiB of it, from two
     * tokens of one tenant, over raw HTTP/2: a hundred from the first token, then a hundred from
     * the second. The first gets 16 calls in flight (its token's cap), the second the tenant's
     * remaining 8 (the tenant's cap of 24); the other 176 are refused at once, each naming its cap.
     * The admitted 24 read 48 MiB between them, over the tenant's 32 MiB of bytes arriving, so some
     * are ended for that; the others stall and are ended after the 5 s request idle time. Meanwhile
     * acme and globex are served (each search within {@link HostileServer#SERVED_WITHIN_SECONDS}),
     * the bytes held for arriving requests stay within the tenant's budget, and afterwards no call
     * or byte is still counted.
     */
    @Test
    void halfSentCallsAreBoundedAndOtherTenantsAreStillServed() throws Exception {
        long seed = Seeds.draw("HostileInputTest.halfSent");
        Limits limits = HostileServer.attackLimits();
        try (HostileServer h = new HostileServer(tmp, seed, limits)) {
            String path = "/" + RecordsGrpc.getUpsertMethod().getFullMethodName();
            long maxReceiving = 0;
            int maxInFlight = 0;
            // The first token's calls, then the second's once the first's 84 refusals are in: 16
            // admitted for the first (its token cap), 8 for the second (the tenant's 24).
            try (HalfSentCalls a =
                            new HalfSentCalls(
                                    h.server.port(), 2, 100, path, h.mallory, 32 << 20, 2 << 20);
                    HalfSentCalls b =
                            awaitEndings(a, "calls in flight for this token", 84, 30)
                                    ? new HalfSentCalls(
                                            h.server.port(),
                                            2,
                                            100,
                                            path,
                                            h.mallory2,
                                            32 << 20,
                                            2 << 20)
                                    : null) {
                assertTrue(
                        b != null,
                        "the first token's 84 refusals did not come within 30 s: " + a.endings());
                // While the admitted calls stall (until their 5 s idle time), the others are
                // served.
                for (int i = 0; i < 20; i++) {
                    h.assertServed(i % 2 == 0 ? h.acme : h.globex, i % 2 == 0 ? "acme" : "globex");
                    maxReceiving = Math.max(maxReceiving, h.server.budget.receiving());
                    maxInFlight = Math.max(maxInFlight, h.server.limiter.inFlight());
                }
                assertTrue(
                        a.awaitAll(60) && b.awaitAll(60),
                        "every half-sent call ended within the idle time and"
                                + " a minute's slack: "
                                + (a.endings().size() + b.endings().size())
                                + " of 200");
                Map<String, Integer> reasons = new TreeMap<>();
                for (HalfSentCalls.Ending e : concat(a.endings(), b.endings())) {
                    assertEquals(Status.Code.RESOURCE_EXHAUSTED.value(), e.code(), "ended " + e);
                    String reason = e.message().replaceAll(": expected.*", "");
                    reasons.merge(reason, 1, Integer::sum);
                }
                System.out.println(
                        "[hostile] seed " + seed + ": half-sent calls ended by " + reasons);
                assertEquals(
                        84,
                        reasons.get("calls in flight for this token"),
                        "the first token's past its 16: " + reasons);
                assertEquals(
                        92,
                        reasons.get("calls in flight for this tenant"),
                        "the second's past the tenant's 24: " + reasons);
                // The 24 admitted read 48 MiB against the tenant's 32 MiB: those that take it past
                // the budget are ended for it, the rest stall until their idle time.
                assertEquals(
                        24,
                        reasons.getOrDefault("request bytes arriving for this tenant", 0)
                                + reasons.getOrDefault("request idle time", 0),
                        "the admitted 24: " + reasons);
                assertTrue(
                        reasons.containsKey("request bytes arriving for this tenant")
                                && reasons.containsKey("request idle time"),
                        "both ended some: " + reasons);
                assertEquals(4, reasons.size(), "no other ending: " + reasons);
            }
            // Counted while adding a read's bytes, before the read is refused: a read is at most a
            // 1 MiB flow-control window, so the budget can be passed by that much, never more.
            assertTrue(
                    maxReceiving <= limits.calls().receivingBytesPerTenant() + (1 << 20),
                    "held " + maxReceiving);
            assertTrue(maxInFlight <= limits.calls().inFlight(), "in flight " + maxInFlight);
            h.assertServed(h.acme, "acme");
            awaitQuiet(h);
            assertEquals(0, h.server.limiter.inFlight(), "every ended call's count was given back");
            assertEquals(0, h.server.budget.receiving(), "no bytes are held for ended calls");
            h.assertUp();
        }
    }

    /**
     * The byte budget on its own: twelve half-sent calls of one token, all admitted, each declaring
     * 32 MiB and sending 4 MiB: 48 MiB against the tenant's 32 MiB of bytes arriving. Calls are
     * ended RESOURCE_EXHAUSTED naming that bound until the rest fit in it (at least four), the
     * bytes held stay within it, and acme is served meanwhile. The request idle time is a minute
     * here, so that only the budget ends calls.
     */
    @Test
    void requestBytesStillArrivingAreBoundedPerTenant() throws Exception {
        long seed = Seeds.draw("HostileInputTest.bytes");
        Limits limits =
                HostileServer.attackLimits()
                        .withCalls(
                                new Limits.Calls(
                                        64, 24, 16, 48L << 20, 32L << 20, 60, 300, 0, 0, 60, 128));
        try (HostileServer h = new HostileServer(tmp, seed, limits)) {
            String path = "/" + RecordsGrpc.getUpsertMethod().getFullMethodName();
            try (HalfSentCalls a =
                    new HalfSentCalls(h.server.port(), 1, 12, path, h.mallory, 32 << 20, 4 << 20)) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(50);
                while (a.endings().size() < 4 && System.nanoTime() < deadline) {
                    h.assertServed(h.acme, "acme");
                    Thread.sleep(100);
                }
                List<HalfSentCalls.Ending> ended = a.endings();
                System.out.println(
                        "[hostile] seed "
                                + seed
                                + ": "
                                + ended.size()
                                + " of 12 ended by the byte budget");
                assertTrue(
                        ended.size() >= 4,
                        "48 MiB sent against 32 MiB: at least 4 of 12 ended, got " + ended);
                for (HalfSentCalls.Ending e : ended) {
                    assertEquals(Status.Code.RESOURCE_EXHAUSTED.value(), e.code(), "ended " + e);
                    assertTrue(
                            e.message()
                                    .startsWith(
                                            "request bytes arriving for this tenant: expected at"
                                                    + " most "
                                                    + (32 << 20)
                                                    + ", got "),
                            e.message());
                }
                // The survivors' bytes, held until their calls end: within the budget plus one
                // read.
                long held = h.server.budget.receiving();
                assertTrue(held <= (32L << 20) + (1 << 20), "held " + held);
                h.assertServed(h.globex, "globex");
            }
            awaitQuiet(h);
            assertEquals(
                    0,
                    h.server.limiter.inFlight(),
                    "the client's calls were counted out when it went");
            assertEquals(0, h.server.budget.receiving(), "and their bytes");
            h.assertUp();
        }
    }

    /**
     * The server's own cap: with 10 calls in flight allowed, 8 a tenant, mallory holds 8 half-sent
     * calls and acme's 5 then find 2 places; the other 3 are refused naming the server's cap. While
     * they all stall, globex's search is refused at once (the server is full) rather than left
     * waiting; once the stalled calls reach their 5 s idle time and end, globex is answered.
     */
    @Test
    void theServersCapRefusesPastItsTotal() throws Exception {
        long seed = Seeds.draw("HostileCallsTest.total");
        Limits limits =
                HostileServer.attackLimits()
                        .withCalls(
                                new Limits.Calls(
                                        10, 8, 8, 48L << 20, 32L << 20, 5, 300, 0, 0, 60, 128));
        try (HostileServer h = new HostileServer(tmp, seed, limits)) {
            String path = "/" + RecordsGrpc.getUpsertMethod().getFullMethodName();
            try (HalfSentCalls m =
                    new HalfSentCalls(h.server.port(), 1, 8, path, h.mallory, 1 << 20, 1024)) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (h.server.limiter.inFlight() < 8 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertEquals(8, h.server.limiter.inFlight(), "mallory's 8 admitted");
                try (HalfSentCalls a =
                        new HalfSentCalls(h.server.port(), 1, 5, path, h.acme, 1 << 20, 1024)) {
                    assertTrue(
                            awaitEndings(a, "calls in flight at the server", 3, 30),
                            "acme's 3 refusals within 30 s: " + a.endings());
                    for (HalfSentCalls.Ending e : a.endings()) {
                        assertEquals(
                                Status.Code.RESOURCE_EXHAUSTED.value(), e.code(), "ended " + e);
                        // Two of acme's calls that arrive together are both counted before
                        // either is refused, so one may see 12 (or 13) in flight, not 11.
                        assertTrue(
                                e.message()
                                        .matches(
                                                "calls in flight at the server: expected at most"
                                                        + " 10, got 1[123] \\(retry when some have"
                                                        + " ended\\)"),
                                e.message());
                    }
                    StatusRuntimeException full =
                            org.junit.jupiter.api.Assertions.assertThrows(
                                    StatusRuntimeException.class,
                                    () -> h.assertServed(h.globex, "globex"));
                    assertEquals(Status.Code.RESOURCE_EXHAUSTED, full.getStatus().getCode());
                    assertTrue(m.awaitAll(60) && a.awaitAll(60), "every half-sent call ended");
                    System.out.println(
                            "[hostile] seed "
                                    + seed
                                    + ": past the server's cap, ended by "
                                    + concat(m.endings(), a.endings()).stream()
                                            .map(e -> e.message().replaceAll(":.*", ""))
                                            .collect(
                                                    java.util.stream.Collectors.groupingBy(
                                                            x -> x,
                                                            java.util.stream.Collectors
                                                                    .counting())));
                }
            }
            awaitQuiet(h);
            assertEquals(0, h.server.limiter.inFlight(), "every count given back");
            h.assertServed(h.globex, "globex");
            h.assertUp();
        }
    }

    /**
     * Waits up to {@code seconds} for {@code n} of the calls to be refused for {@code reason} (the
     * start of the refusal's message); whether they were. Counting every ending would be a race: an
     * admitted call ended early (by the tenant's byte budget, say) would let the next step start
     * while some refusals are still on their way, and those could then meet another cap.
     */
    private static boolean awaitEndings(HalfSentCalls calls, String reason, int n, long seconds)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (refusals(calls, reason) < n && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        return refusals(calls, reason) >= n;
    }

    private static long refusals(HalfSentCalls calls, String reason) {
        return calls.endings().stream().filter(e -> e.message().startsWith(reason)).count();
    }

    /** Until the server has seen every client's calls end (it hears of a reset a moment later). */
    private static void awaitQuiet(HostileServer h) throws InterruptedException {
        for (int i = 0;
                i < 100 && (h.server.limiter.inFlight() > 0 || h.server.budget.receiving() > 0);
                i++) {
            Thread.sleep(100);
        }
    }

    private static <T> List<T> concat(List<T> a, List<T> b) {
        List<T> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    /** Ends a client-streaming call of raw bodies and returns how it ended. */
    private static Status upsertStream(
            ManagedChannel channel, String token, List<byte[]> bodies, boolean cancel)
            throws InterruptedException {
        MethodDescriptor<byte[], byte[]> raw =
                MethodDescriptor.<byte[], byte[]>newBuilder()
                        .setType(MethodDescriptor.MethodType.CLIENT_STREAMING)
                        .setFullMethodName(RecordsGrpc.getUpsertStreamMethod().getFullMethodName())
                        .setRequestMarshaller(HostileServer.BYTES)
                        .setResponseMarshaller(HostileServer.BYTES)
                        .build();
        var ch =
                io.grpc.ClientInterceptors.intercept(
                        channel,
                        MetadataUtils.newAttachHeadersInterceptor(HostileServer.auth(token)));
        ClientCall<byte[], byte[]> call =
                ch.newCall(
                        raw,
                        CallOptions.DEFAULT.withDeadlineAfter(
                                HostileServer.SERVED_WITHIN_SECONDS, TimeUnit.SECONDS));
        java.util.concurrent.CompletableFuture<Status> ended =
                new java.util.concurrent.CompletableFuture<>();
        call.start(
                new ClientCall.Listener<>() {
                    @Override
                    public void onClose(Status status, Metadata trailers) {
                        ended.complete(status);
                    }
                },
                new Metadata());
        call.request(1);
        for (byte[] body : bodies) {
            call.sendMessage(body);
        }
        if (cancel) {
            call.cancel("the test gives up on this stream", null);
        } else {
            call.halfClose();
        }
        try {
            return ended.get(HostileServer.SERVED_WITHIN_SECONDS + 5, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException
                | java.util.concurrent.TimeoutException e) {
            throw new AssertionError("the stream did not end", e);
        }
    }

    /**
     * A bulk upload's stream slot is released however the stream ends: twelve streams of one token
     * (more than its 8 slots) end with a body that does not parse, a client cancel, or a batch the
     * store refuses; each is answered for what it is, never "streams open", and then a good stream
     * stores its batch. Eight held open at once still fill the slots (the ninth is refused), so the
     * release did not simply stop the counting.
     */
    @Test
    void upsertStreamsReleaseTheirSlotOnEveryPath() throws Exception {
        long seed = Seeds.draw("HostileInputTest.streams");
        try (HostileServer h = new HostileServer(tmp, seed, HostileServer.attackLimits())) {
            byte[] nan =
                    UpsertRequest.newBuilder()
                            .setCollection("notes")
                            .addRecords(
                                    Record.newBuilder()
                                            .setId("bad")
                                            .addVector(1)
                                            .addVector(Float.NaN)
                                            .addVector(0)
                                            .addVector(0))
                            .build()
                            .toByteArray();
            for (int i = 0; i < 12; i++) {
                switch (i % 3) {
                    case 0 -> {
                        Status s =
                                upsertStream(
                                        h.channel,
                                        h.acme,
                                        List.of(new byte[] {0x0A, (byte) 0xFF}),
                                        false);
                        assertEquals(
                                Status.Code.INVALID_ARGUMENT,
                                s.getCode(),
                                "stream " + i + ": " + s);
                        assertTrue(s.getDescription().contains("do not parse"), s.getDescription());
                    }
                    case 1 ->
                            assertEquals(
                                    Status.Code.CANCELLED,
                                    upsertStream(h.channel, h.acme, List.of(), true).getCode(),
                                    "stream " + i);
                    default -> {
                        Status s = upsertStream(h.channel, h.acme, List.of(nan), false);
                        assertEquals(
                                Status.Code.INVALID_ARGUMENT,
                                s.getCode(),
                                "stream " + i + ": " + s);
                    }
                }
            }
            // The same records again, unchanged: stored (the digest stays the same).
            UpsertRequest.Builder same = UpsertRequest.newBuilder().setCollection("notes");
            for (int i = 0; i < 5; i++) {
                same.addRecords(
                        Protos.record(
                                h.store.collection("notes").get("acme", "r" + i).orElseThrow()));
            }
            awaitQuiet(h);
            assertEquals(
                    Status.Code.OK,
                    upsertStream(h.channel, h.acme, List.of(same.build().toByteArray()), false)
                            .getCode(),
                    "a good stream after twelve that ended badly");

            // Nine opened at once: eight fill the token's slots, one (whichever the server sees
            // last) is refused.
            List<io.grpc.stub.StreamObserver<UpsertRequest>> streams = new ArrayList<>();
            java.util.concurrent.LinkedBlockingQueue<Status> endings =
                    new java.util.concurrent.LinkedBlockingQueue<>();
            for (int i = 0; i < 9; i++) {
                RecordsGrpc.RecordsStub stub =
                        RecordsGrpc.newStub(h.channel)
                                .withInterceptors(
                                        MetadataUtils.newAttachHeadersInterceptor(
                                                HostileServer.auth(h.acme)));
                streams.add(
                        stub.upsertStream(
                                new io.grpc.stub.StreamObserver<>() {
                                    @Override
                                    public void onNext(dev.nepenthe.grpc.v1.UpsertResponse value) {}

                                    @Override
                                    public void onError(Throwable t) {
                                        endings.add(Status.fromThrowable(t));
                                    }

                                    @Override
                                    public void onCompleted() {
                                        endings.add(Status.OK);
                                    }
                                }));
            }
            Status ninth = endings.poll(HostileServer.SERVED_WITHIN_SECONDS, TimeUnit.SECONDS);
            assertEquals(
                    Status.Code.RESOURCE_EXHAUSTED,
                    ninth == null ? null : ninth.getCode(),
                    String.valueOf(ninth));
            assertTrue(
                    ninth.getDescription()
                            .startsWith("streams open for this token: expected at most 8"),
                    ninth.getDescription());
            for (var stream : streams) {
                stream.onCompleted();
            }
            for (int i = 0; i < 8; i++) {
                Status s = endings.poll(HostileServer.SERVED_WITHIN_SECONDS, TimeUnit.SECONDS);
                assertEquals(Status.Code.OK, s == null ? null : s.getCode(), String.valueOf(s));
            }
            h.assertServed(h.globex, "globex");
            h.assertUp();
        }
    }
}
