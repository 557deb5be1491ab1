package dev.nepenthe.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Context;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A unary call whose context is cancelled (its client went, or its deadline passed while it waited
 * for a thread) does no work and answers nothing: gRPC has ended it already. The oracle is whether
 * the body ran and what reached the observer, with a live context as the control.
 */
class StatusesTest {

    /** What a unary call sent: values, then "completed" or the error's description. */
    private static final class Recorded implements StreamObserver<String> {
        final List<String> events = new ArrayList<>();

        @Override
        public void onNext(String value) {
            events.add(value);
        }

        @Override
        public void onError(Throwable t) {
            events.add("error " + Statuses.of(t).getStatus().getCode());
        }

        @Override
        public void onCompleted() {
            events.add("completed");
        }
    }

    @Test
    void aCancelledCallDoesNoWorkAndALiveOneDoes() {
        AtomicBoolean ran = new AtomicBoolean();
        Recorded cancelled = new Recorded();
        Context.CancellableContext gone = Context.current().withCancellation();
        gone.cancel(null);
        gone.run(
                () ->
                        Statuses.unary(
                                cancelled,
                                () -> {
                                    ran.set(true);
                                    return "answer";
                                }));
        assertFalse(ran.get(), "the body of a cancelled call ran");
        assertTrue(cancelled.events.isEmpty(), "a cancelled call answered " + cancelled.events);

        Recorded live = new Recorded();
        Context.current()
                .withCancellation()
                .run(
                        () ->
                                Statuses.unary(
                                        live,
                                        () -> {
                                            ran.set(true);
                                            return "answer";
                                        }));
        assertTrue(ran.get(), "the control ran");
        assertEquals(List.of("answer", "completed"), live.events);
    }
}
