package dev.nepenthe.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.embed.MiniLmEmbedder;
import java.io.IOException;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.SocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Opening a store (Chronicle Map inside) and loading and running the embedded model must not open
 * any network connection. Every java.net URL connection asks the default ProxySelector where to go
 * first, so a recording selector sees each attempt, even one that would fail on a closed network.
 *
 * <p>The probe runs in a child JVM started without the launcher's -D flags (only the module flags
 * Chronicle Map needs to work at all): the libraries load there for the first time while the
 * selector watches, as in an application that embeds Nepenthe as a plain library.
 */
class NoPhoneHomeTest {

    /** Child-JVM entry point: prints "attempts=N" after loading the model and embedding. */
    public static final class Probe {
        public static void main(String[] args) throws Exception {
            List<URI> attempts = new CopyOnWriteArrayList<>();
            ProxySelector.setDefault(recording(attempts));
            java.nio.file.Path dir = java.nio.file.Path.of(args[0]);
            float[] v = new MiniLmEmbedder().embed("a sentence that stays on this machine");
            try (var store =
                    dev.nepenthe.core.Nepenthe.open(
                            dir.resolve("data"),
                            dev.nepenthe.core.StoreOptions.defaults()
                                    .withKeystore(dir.resolve("keys")))) {
                var c =
                        store.createCollection(
                                dev.nepenthe.core.CollectionSpec.of(
                                        "c", v.length, dev.nepenthe.core.Metric.COSINE));
                c.upsert(
                        dev.nepenthe.core.VectorRecord.builder("r").subject("s").vector(v).build());
                c.deleteSubject(dev.nepenthe.core.VectorRecord.DEFAULT_TENANT, "s");
            }
            System.out.println("dimension=" + v.length);
            System.out.println("attempts=" + attempts.size() + " " + attempts);
            System.out.println("djl.tracking.opt.out=" + System.getProperty("OPT_OUT_TRACKING"));
            System.out.println(
                    "chronicle.analytics.disable="
                            + System.getProperty("chronicle.analytics.disable"));
        }
    }

    static ProxySelector recording(List<URI> attempts) {
        return new ProxySelector() {
            @Override
            public List<Proxy> select(URI uri) {
                attempts.add(uri);
                return List.of(Proxy.NO_PROXY);
            }

            @Override
            public void connectFailed(URI uri, SocketAddress sa, IOException ioe) {}
        };
    }

    @Test
    void storeAndEmbeddingModelMakeNoNetworkRequestWithoutTheFlags(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) throws Exception {
        String javaBin = ProcessHandle.current().info().command().orElseThrow();
        List<String> cmd = new ArrayList<>(List.of(javaBin));
        for (String arg :
                java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (arg.startsWith("--add-")
                    || arg.startsWith("--enable-native-access")
                    || arg.startsWith("--sun-misc")) {
                cmd.add(arg);
            }
        }
        cmd.addAll(
                List.of(
                        "-cp",
                        System.getProperty("java.class.path"),
                        Probe.class.getName(),
                        tmp.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "probe did not finish");
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("dimension=384"), out);
        assertTrue(out.contains("attempts=0 "), "network requests were attempted:\n" + out);
        assertTrue(out.contains("djl.tracking.opt.out=true"), out);
        assertTrue(out.contains("chronicle.analytics.disable=true"), out);
    }

    @Test
    void theRecordingSelectorSeesAConnectionAttempt() throws Exception {
        // Control: the selector must catch a real attempt, or the test above proves nothing.
        // The target is a closed port on loopback, so nothing leaves the machine.
        List<URI> attempts = new CopyOnWriteArrayList<>();
        ProxySelector previous = ProxySelector.getDefault();
        ProxySelector.setDefault(recording(attempts));
        try {
            var conn = URI.create("http://127.0.0.1:9/").toURL().openConnection();
            conn.setConnectTimeout(500);
            try {
                conn.connect();
            } catch (IOException expected) {
                // Nothing listens on the discard port; the attempt is what matters.
            }
        } finally {
            ProxySelector.setDefault(previous);
        }
        assertEquals(1, attempts.size(), attempts.toString());
    }
}
