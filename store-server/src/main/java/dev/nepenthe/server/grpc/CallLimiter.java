package dev.nepenthe.server.grpc;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Admits a call only while its token, its tenant and the server are under their counts of calls in
 * flight ({@link Limits.Calls}); a call over one ends RESOURCE_EXHAUSTED naming it, before the call
 * asks for its request, so its bytes are never read. An admitted call counts until it ends, however
 * it ends (completed, failed, cancelled, refused by an inner interceptor). It runs inside the auth
 * interceptor, so every call it sees has a {@link Caller}.
 *
 * <p>An admitted call must keep its request coming: if its next message, or the end of its request,
 * has not arrived within {@link Limits.Calls#requestIdleSeconds()}, the call is ended
 * RESOURCE_EXHAUSTED and its slot freed. The clock stops while a handler works on a message (a bulk
 * upload's batch may take minutes to embed) and once the request has ended.
 */
final class CallLimiter implements ServerInterceptor {

    private final Limits.Calls limits;
    private final ScheduledExecutorService timer;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<String, AtomicInteger> tenants = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, AtomicInteger> tokens = new ConcurrentHashMap<>();

    CallLimiter(Limits.Calls limits, ScheduledExecutorService timer) {
        this.limits = limits;
        this.timer = timer;
    }

    /** Calls in flight now, over all callers (for tests and statistics). */
    int inFlight() {
        return total.get();
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        Caller caller = Caller.current();
        AtomicInteger tenant = tenants.computeIfAbsent(caller.tenant(), k -> new AtomicInteger());
        AtomicInteger token = tokens.computeIfAbsent(caller.tokenId(), k -> new AtomicInteger());
        String refused = take(total, limits.inFlight(), "calls in flight at the server");
        if (refused == null) {
            refused = take(tenant, limits.inFlightPerTenant(), "calls in flight for this tenant");
            if (refused != null) {
                total.decrementAndGet();
            }
        }
        if (refused == null) {
            refused = take(token, limits.inFlightPerToken(), "calls in flight for this token");
            if (refused != null) {
                total.decrementAndGet();
                tenant.decrementAndGet();
            }
        }
        if (refused != null) {
            call.close(
                    Status.RESOURCE_EXHAUSTED.withDescription(
                            refused + " (retry when some have ended)"),
                    new Metadata());
            return new ServerCall.Listener<>() {};
        }
        Admitted<Q, R> admitted = new Admitted<>(call, tenant, token);
        InboundBudget.Tracer tracer = InboundBudget.TRACER.get();
        if (tracer != null) {
            tracer.bind(caller.tenant());
        }
        ServerCall.Listener<Q> listener;
        try {
            admitted.arm();
            listener = next.startCall(admitted, headers);
        } catch (RuntimeException | Error e) {
            admitted.release();
            throw e;
        }
        return admitted.listen(listener);
    }

    /** One count up, or what was exceeded when it is at its limit already. */
    private static String take(AtomicInteger count, int max, String what) {
        int now = count.incrementAndGet();
        if (now > max) {
            count.decrementAndGet();
            return what + ": expected at most " + max + ", got " + now;
        }
        return null;
    }

    /**
     * An admitted call: frees its counts once, keeps the request-idle clock, and may be closed by
     * that clock from the timer's thread, so every write to the call is serialized here and a write
     * after the close is dropped (the handler may still answer a call the clock ended).
     */
    private final class Admitted<Q, R>
            extends ForwardingServerCall.SimpleForwardingServerCall<Q, R> {
        private final AtomicInteger tenant;
        private final AtomicInteger token;
        private final AtomicBoolean released = new AtomicBoolean();
        private ScheduledFuture<?> idle;
        private boolean closed;
        private boolean halfClosed;

        Admitted(ServerCall<Q, R> call, AtomicInteger tenant, AtomicInteger token) {
            super(call);
            this.tenant = tenant;
            this.token = token;
        }

        void release() {
            if (released.compareAndSet(false, true)) {
                disarm();
                total.decrementAndGet();
                tenant.decrementAndGet();
                token.decrementAndGet();
            }
        }

        synchronized void arm() {
            disarm();
            if (!closed && !halfClosed && !released.get()) {
                idle =
                        timer.schedule(
                                this::idleTooLong, limits.requestIdleSeconds(), TimeUnit.SECONDS);
            }
        }

        synchronized void disarm() {
            if (idle != null) {
                idle.cancel(false);
                idle = null;
            }
        }

        private synchronized void idleTooLong() {
            if (!closed) {
                close(
                        Status.RESOURCE_EXHAUSTED.withDescription(
                                "request idle time: expected the next request message,"
                                        + " or the end of the request, within "
                                        + limits.requestIdleSeconds()
                                        + " s, got none"),
                        new Metadata());
            }
        }

        @Override
        public synchronized void close(Status status, Metadata trailers) {
            if (!closed) {
                closed = true;
                disarm();
                super.close(status, trailers);
            }
        }

        @Override
        public synchronized void sendHeaders(Metadata headers) {
            if (!closed) {
                super.sendHeaders(headers);
            }
        }

        @Override
        public synchronized void sendMessage(R message) {
            if (!closed) {
                super.sendMessage(message);
            }
        }

        ServerCall.Listener<Q> listen(ServerCall.Listener<Q> inner) {
            return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(inner) {
                @Override
                public void onMessage(Q message) {
                    disarm();
                    try {
                        super.onMessage(message);
                    } finally {
                        arm();
                    }
                }

                @Override
                public void onHalfClose() {
                    synchronized (Admitted.this) {
                        halfClosed = true;
                        disarm();
                    }
                    super.onHalfClose();
                }

                @Override
                public void onCancel() {
                    try {
                        super.onCancel();
                    } finally {
                        release();
                    }
                }

                @Override
                public void onComplete() {
                    try {
                        super.onComplete();
                    } finally {
                        release();
                    }
                }
            };
        }
    }
}
