package dev.nepenthe.server.bench.soak;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.channels.ClosedChannelException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Which failures the soak counts as a restart's and which as errors: UNAVAILABLE, and a connection
 * grpc-java reports closed as UNKNOWN, only inside a restart window; an UNKNOWN the server sent is
 * always an error.
 */
class SoakClientsTest {

    private static StatusRuntimeException closedUnderIt() {
        return Status.UNKNOWN
                .withDescription("channel closed")
                .withCause(new ClosedChannelException())
                .asRuntimeException();
    }

    @Test
    void onlyAConnectionLostInARestartWindowIsExpected() {
        SoakClients clients = new SoakClients(Map.of("t", "token"), "operator");
        clients.connect(1); // nothing listens there; no call is made
        try {
            SoakClients.Conn conn = clients.conn();
            StatusRuntimeException unavailable = Status.UNAVAILABLE.asRuntimeException();
            StatusRuntimeException sentUnknown =
                    Status.UNKNOWN.withDescription("channel closed").asRuntimeException();

            assertFalse(clients.expected(conn, unavailable), "outside a window: an error");
            assertFalse(clients.expected(conn, closedUnderIt()), "outside a window: an error");

            clients.openWindow();
            assertTrue(clients.expected(conn, unavailable));
            assertTrue(clients.expected(conn, closedUnderIt()));
            assertFalse(clients.expected(conn, sentUnknown), "no transport cause: an error");
            assertFalse(
                    clients.expected(conn, Status.INTERNAL.asRuntimeException()),
                    "any other code: an error");
        } finally {
            clients.conn().channel().shutdownNow();
        }
    }
}
