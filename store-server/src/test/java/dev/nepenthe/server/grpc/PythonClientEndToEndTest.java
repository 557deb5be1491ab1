package dev.nepenthe.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.audit.Receipt;
import dev.nepenthe.core.internal.evidence.SigningKey;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * End to end with a client that shares no code with the server: Python's grpcio (Debian's
 * python3-grpcio, run with /usr/bin/python3) building its messages from the API's descriptor set,
 * against {@code nepenthe serve} started as a separate process. The client creates a collection,
 * upserts, searches, checks the tenant wall, forgets a subject and watches the operation to SEALED;
 * then this test verifies the receipt it brought back with only the public key, stops the server
 * with SIGTERM (a graceful stop) and opens the store folder itself: the subject's records are gone,
 * the others are there.
 *
 * <p>When /usr/bin/python3 lacks grpcio, the test installs Debian's python3-grpcio with apt-get (a
 * few seconds; the machines this project runs on reach Debian's mirrors) and says so; if that
 * fails, the test fails naming the command to run.
 */
class PythonClientEndToEndTest {

    private static final String PYTHON = "/usr/bin/python3";

    @TempDir Path tmp;

    @Test
    void anIndependentClientForgetsAndTheReceiptVerifies() throws Exception {
        ensureGrpcio();
        String operator = Tokens.newToken();
        String globex = Tokens.newToken();
        Path tokens = tmp.resolve("tokens.conf");
        Tokens.writeOwnerOnly(
                tokens,
                Tokens.line(operator, "default", true)
                        + "\n"
                        + Tokens.line(globex, "globex", false)
                        + "\n");
        Files.writeString(tmp.resolve("operator.token"), operator);
        Files.writeString(tmp.resolve("globex.token"), globex);
        Path data = tmp.resolve("data");
        Path keys = tmp.resolve("keys");
        Path portFile = tmp.resolve("port");

        List<String> cmd =
                new ArrayList<>(
                        List.of(
                                ProcessHandle.current().info().command().orElseThrow(),
                                "-Xmx512m"));
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-")
                    || a.startsWith("--enable-native-access")
                    || a.startsWith("--sun-misc")
                    || a.startsWith("-Dchronicle")
                    || a.startsWith("-Dnepenthe")
                    || a.startsWith("-Dai.djl")
                    || a.startsWith("-DOPT_OUT")
                    || a.startsWith("-Doffline")) {
                cmd.add(a);
            }
        }
        cmd.addAll(
                List.of(
                        "-cp",
                        System.getProperty("java.class.path"),
                        "dev.nepenthe.server.Main",
                        "serve",
                        "--data",
                        data.toString(),
                        "--keys",
                        keys.toString(),
                        "--port",
                        "0",
                        "--port-file",
                        portFile.toString(),
                        "--tokens",
                        tokens.toString()));
        Process server =
                new ProcessBuilder(cmd)
                        .redirectErrorStream(true)
                        .redirectOutput(tmp.resolve("server.log").toFile())
                        .start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.exists(portFile) || Files.size(portFile) == 0) {
                assertTrue(
                        server.isAlive(),
                        "the server process died: " + Files.readString(tmp.resolve("server.log")));
                assertTrue(System.nanoTime() < deadline, "the server did not start in 60 s");
                Thread.sleep(50);
            }
            int port = Integer.parseInt(Files.readString(portFile).strip());
            Path descriptors =
                    Path.of("target/generated-resources/protobuf/descriptor-sets/nepenthe-v1.pb")
                            .toAbsolutePath();
            assertTrue(
                    Files.exists(descriptors),
                    "the build writes the API's descriptor set to " + descriptors);
            Process client =
                    new ProcessBuilder(
                                    PYTHON,
                                    Path.of("src/test/python/e2e_client.py")
                                            .toAbsolutePath()
                                            .toString(),
                                    descriptors.toString(),
                                    "127.0.0.1:" + port,
                                    tmp.resolve("operator.token").toString(),
                                    tmp.resolve("globex.token").toString(),
                                    tmp.toString())
                            .redirectErrorStream(true)
                            .start();
            String out = new String(client.getInputStream().readAllBytes());
            assertTrue(
                    client.waitFor(180, TimeUnit.SECONDS),
                    "the client did not finish in 180 s: " + out);
            System.out.println("[python client]\n" + out);
            assertEquals(0, client.exitValue(), out);
            assertTrue(out.contains("ok watch") && out.strip().endsWith("done"), out);

            // The receipt verifies with only the public key the client fetched.
            String receipt = Files.readString(tmp.resolve("receipt.txt"));
            String json =
                    Receipt.verify(
                            receipt,
                            SigningKey.parsePem(Files.readString(tmp.resolve("public-key.pem"))));
            assertNotNull(json, "the receipt verifies offline");
            assertTrue(json.contains("\"state\":\"SEALED\"") || json.contains("SEALED"), json);
        } finally {
            server.destroy(); // SIGTERM: the graceful stop
            assertTrue(
                    server.waitFor(60, TimeUnit.SECONDS),
                    "the server did not stop within 60 s of SIGTERM");
        }
        String log = Files.readString(tmp.resolve("server.log"));
        assertTrue(
                !log.contains(operator) && !log.contains(globex),
                "no token in the server's output");
        // The store the server left behind: alice's records are gone, bob's and carol's remain.
        try (Nepenthe store = Nepenthe.open(data, StoreOptions.defaults().withKeystore(keys))) {
            assertEquals(
                    List.of("r2", "r3"),
                    store.collection("notes").ids("default").stream().sorted().toList());
        }
    }

    private static void ensureGrpcio() throws IOException, InterruptedException {
        if (run(PYTHON, "-c", "import grpc") == 0) {
            return;
        }
        System.out.println(
                "[python client] /usr/bin/python3 lacks grpcio: installing Debian's"
                        + " python3-grpcio");
        int rc = run("apt-get", "install", "-y", "--no-install-recommends", "python3-grpcio");
        assertEquals(
                0, rc, "could not install python3-grpcio; run: apt-get install python3-grpcio");
        assertEquals(
                0,
                run(PYTHON, "-c", "import grpc"),
                "python3-grpcio installed but 'import grpc' still fails");
    }

    private static int run(String... cmd) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("DEBIAN_FRONTEND", "noninteractive");
        Process p = pb.start();
        p.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
        return p.waitFor(300, TimeUnit.SECONDS) ? p.exitValue() : -1;
    }
}
