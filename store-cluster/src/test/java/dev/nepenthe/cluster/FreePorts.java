package dev.nepenthe.cluster;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for replicas that a test starts a little later. Taken below the kernel's ephemeral
 * range (32768 and up on Linux): a port the kernel handed out for "any free port" is free only
 * until the next outgoing connection takes it as its local port, and the replicas of earlier tests
 * keep opening connections; below the range, only a bind takes a port. Each port is handed out once
 * per JVM.
 */
public final class FreePorts {

    private static final int FROM = 10_000;
    private static final int TO = 32_000;
    private static final Set<Integer> GIVEN = ConcurrentHashMap.newKeySet();

    private FreePorts() {}

    /**
     * A port nothing listens on now, not given before in this JVM.
     *
     * @return the port
     * @throws IOException if none is found in a thousand tries
     */
    public static int pick() throws IOException {
        for (int attempt = 0; attempt < 1_000; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(FROM, TO);
            if (!GIVEN.add(port)) {
                continue;
            }
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                return s.getLocalPort();
            } catch (IOException taken) {
                // another program's: try another
            }
        }
        throw new IOException("no free loopback port between " + FROM + " and " + TO);
    }
}
