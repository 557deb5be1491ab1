package dev.nepenthe.server.grpc;

import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Bytes of request messages still arriving, against {@link Limits.Calls#receivingBytes()} over all
 * calls and {@link Limits.Calls#receivingBytesPerTenant()} per tenant. HTTP/2 flow control does not
 * bound them: gRPC collects a message's bytes as they come and hands the window back, so a client
 * that declares a 32 MiB message and sends all but its last byte has the server hold 32 MiB until
 * the call ends. A message is counted from its first body byte until it is complete or its call
 * ends.
 *
 * <p>The count runs where gRPC reads the bytes, in a stream tracer on the transport thread. Past a
 * budget the tracer throws a RESOURCE_EXHAUSTED status there: the path gRPC's own message size
 * limit takes, which ends that call with the status and drops its bytes. The tracer learns its
 * call's tenant from {@link CallLimiter} when the call is admitted, before the call asks for its
 * first message, so every body byte is counted against a tenant.
 */
final class InboundBudget extends ServerStreamTracer.Factory {

    /** The tracer of the current call, so that the call limiter can tell it the tenant. */
    static final Context.Key<Tracer> TRACER = Context.key("nepenthe-inbound-tracer");

    private final long maxTotal;
    private final long maxPerTenant;
    private final AtomicLong total = new AtomicLong();
    private final ConcurrentHashMap<String, AtomicLong> perTenant = new ConcurrentHashMap<>();

    InboundBudget(long maxTotal, long maxPerTenant) {
        this.maxTotal = maxTotal;
        this.maxPerTenant = maxPerTenant;
    }

    @Override
    public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
        return new Tracer();
    }

    /** Bytes arriving now, over all calls (for tests and statistics). */
    long receiving() {
        return total.get();
    }

    /** One call's count. */
    final class Tracer extends ServerStreamTracer {
        private final AtomicLong held = new AtomicLong();
        private volatile AtomicLong tenant;

        @Override
        public Context filterContext(Context context) {
            return context.withValue(TRACER, this);
        }

        /** Counts this call's bytes against the tenant's budget too; called once it is admitted. */
        void bind(String tenantName) {
            tenant = perTenant.computeIfAbsent(tenantName, k -> new AtomicLong());
        }

        @Override
        public void inboundWireSize(long bytes) {
            held.addAndGet(bytes);
            long all = total.addAndGet(bytes);
            AtomicLong t = tenant;
            long mine = t == null ? 0 : t.addAndGet(bytes);
            if (all > maxTotal) {
                throw Status.RESOURCE_EXHAUSTED
                        .withDescription(
                                "request bytes arriving at the server: expected at most "
                                        + maxTotal
                                        + ", got "
                                        + all
                                        + " (calls still sending their requests hold the rest;"
                                        + " retry later)")
                        .asRuntimeException();
            }
            if (t != null && mine > maxPerTenant) {
                throw Status.RESOURCE_EXHAUSTED
                        .withDescription(
                                "request bytes arriving for this tenant: expected at"
                                        + " most "
                                        + maxPerTenant
                                        + ", got "
                                        + mine)
                        .asRuntimeException();
            }
        }

        @Override
        public void inboundMessageRead(
                int seqNo, long optionalWireSize, long optionalUncompressedSize) {
            release();
        }

        @Override
        public void streamClosed(Status status) {
            release();
        }

        private void release() {
            long n = held.getAndSet(0);
            if (n > 0) {
                total.addAndGet(-n);
                AtomicLong t = tenant;
                if (t != null) {
                    t.addAndGet(-n);
                }
            }
        }
    }
}
