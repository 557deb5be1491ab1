package dev.nepenthe.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Filter;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.SourceRef;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.server.Main;
import dev.nepenthe.server.grpc.NepentheServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The client commands of the command line against a real server on a loopback port, over a real
 * store: what each prints checked against the store itself (the oracle), and the exit status and
 * one-line error of each way a command can fail.
 */
class ClientCommandsTest {

    private static final int DIM = 8;
    private static final String TENANT = VectorRecord.DEFAULT_TENANT;

    @TempDir Path tmp;

    private Nepenthe store;
    private NepentheServer server;
    private Path tokenFile;

    @BeforeEach
    void start() throws IOException {
        store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
        Path tokens = tmp.resolve("keys").resolve("server").resolve("tokens.conf");
        tokenFile = tokens.resolveSibling("operator.token");
        // What 'serve' does on first start: an operator token for the default tenant.
        NepentheServer.bootstrapTokens(tokens, tokenFile);
        server =
                NepentheServer.start(
                        store,
                        new NepentheServer.Options()
                                .listen("127.0.0.1", 0)
                                .tokens(tokens)
                                .snapshotDirs(List.of(tmp.resolve("snaps"))));
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
    }

    /** What one run of the command line left: exit status, standard output, standard error. */
    record Run(int exit, String out, String err) {
        List<String> errLines() {
            return err.lines().filter(l -> !l.isBlank()).toList();
        }
    }

    static Run nepenthe(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = Main.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    /** A client command aimed at the test's server with the operator token. */
    private Run client(String command, String... args) {
        List<String> all =
                new ArrayList<>(
                        List.of(
                                command,
                                "--server",
                                "127.0.0.1:" + server.port(),
                                "--token-file",
                                tokenFile.toString()));
        all.addAll(List.of(args));
        return nepenthe(all.toArray(String[]::new));
    }

    private static float[] vector(Random r) {
        float[] v = new float[DIM];
        for (int i = 0; i < DIM; i++) {
            v[i] = (float) r.nextGaussian();
        }
        return v;
    }

    private static String json(float[] v) {
        StringBuilder s = new StringBuilder("[");
        for (int i = 0; i < v.length; i++) {
            s.append(i == 0 ? "" : ",").append(v[i]);
        }
        return s.append(']').toString();
    }

    private static String csv(float[] v) {
        return json(v).substring(1, json(v).length() - 1);
    }

    private Path jsonl(int n, long seed) throws IOException {
        Random r = new Random(seed);
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < n; i++) {
            s.append("{\"id\":\"r")
                    .append(i)
                    .append("\",\"vector\":")
                    .append(json(vector(r)))
                    .append(",\"subject\":\"")
                    .append(i % 3 == 0 ? "alice" : "bob")
                    .append('"')
                    .append(",\"text\":\"note number ")
                    .append(i)
                    .append('"')
                    .append(",\"metadata\":{\"lang\":\"")
                    .append(i % 2 == 0 ? "en" : "fr")
                    .append("\",\"n\":")
                    .append(i)
                    .append(",\"weight\":")
                    .append(i / 4.0)
                    .append(",\"even\":")
                    .append(i % 2 == 0)
                    .append('}');
            if (i % 10 == 0) {
                s.append(",\"source\":{\"kind\":\"doc\",\"id\":\"d")
                        .append(i / 10)
                        .append("\",\"version\":2}");
            }
            if (i > 0 && i % 50 == 0) {
                s.append(",\"derivedFrom\":[\"r").append(i - 1).append("\"]");
            }
            s.append("}\n");
            if (i == 7) {
                s.append('\n'); // a blank line is skipped
            }
        }
        Path f = tmp.resolve("records.jsonl");
        Files.writeString(f, s);
        return f;
    }

    @Test
    void ingestStreamsEveryLineAndTheCountMatchesTheStore() throws IOException {
        Path f = jsonl(300, 1);
        Run run =
                client(
                        "ingest",
                        f.toString(),
                        "--collection",
                        "notes",
                        "--create",
                        "8",
                        "--metric",
                        "cosine",
                        "--batch",
                        "64");
        assertEquals(0, run.exit(), run.err());
        assertEquals(300, store.collection("notes").size(TENANT), "oracle: the store's own count");
        assertTrue(run.out().contains("created collection 'notes'"), run.out());
        assertTrue(run.out().contains("stored 300 records"), run.out());
        assertEquals("", run.err(), "no progress bar when standard error is not a terminal");

        VectorRecord r30 = store.collection("notes").get(TENANT, "r30").orElseThrow();
        assertEquals("alice", r30.subject());
        assertEquals("note number 30", r30.text());
        assertEquals("en", r30.metadata().get("lang"));
        assertEquals(30L, r30.metadata().get("n"));
        assertEquals(7.5, r30.metadata().get("weight"));
        assertEquals(true, r30.metadata().get("even"));
        assertEquals(new SourceRef("doc", "d3", 2), r30.source());
        assertEquals(
                List.of("r49"),
                store.collection("notes").get(TENANT, "r50").orElseThrow().derivedFrom());

        // Again, into the existing collection with the same settings: replaced by id, none added.
        Run again =
                client("ingest", f.toString(), "--collection", "notes", "--create", "8", "--quiet");
        assertEquals(0, again.exit(), again.err());
        assertEquals(300, store.collection("notes").size(TENANT));
        // --create with other settings is refused, naming both.
        Run other = client("ingest", f.toString(), "--collection", "notes", "--create", "16");
        assertEquals(Main.FAILED, other.exit());
        assertTrue(other.err().contains("exists with dimension 8"), other.err());
        // --metric means something only with --create: misuse.
        assertEquals(
                2,
                client("ingest", f.toString(), "--collection", "notes", "--metric", "l2").exit());
    }

    @Test
    void aMalformedLineStopsTheIngestNamingItsLine() throws IOException {
        store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE));
        Random r = new Random(2);
        Path f = tmp.resolve("bad.jsonl");
        Files.writeString(
                f,
                "{\"id\":\"a\",\"vector\":"
                        + json(vector(r))
                        + "}\n"
                        + "{\"id\":\"b\",\"vector\":"
                        + json(vector(r))
                        + "}\n"
                        + "{\"id\":\"c\",\"vector\":[1,2,\"three\",4,5,6,7,8]}\n"
                        + "{\"id\":\"d\",\"vector\":"
                        + json(vector(r))
                        + "}\n");
        Run run = client("ingest", f.toString(), "--collection", "notes");
        assertEquals(
                Main.FAILED, run.exit(), "a malformed input file is a file that cannot be read: 3");
        assertEquals(1, run.errLines().size(), run.err());
        assertTrue(
                run.err().contains(f + ":3: vector[2]: expected a number, got a string"),
                run.err());
        assertTrue(run.err().contains("the 2 records before it are stored"), run.err());
        assertEquals(
                2,
                store.collection("notes").size(TENANT),
                "every line before the bad one, none after it");

        // Broken JSON, a missing field, an unknown field, a wrong dimension: each names its line.
        for (String[] bad :
                new String[][] {
                    {
                        "{\"id\":\"x\",\"vector\":[1,2",
                        ":1: expected one JSON object, got malformed JSON"
                    },
                    {
                        "{\"vector\":" + json(vector(r)) + "}",
                        ":1: expected fields id and vector, got no id"
                    },
                    {"{\"id\":\"x\",\"vectors\":[1]}", ":1: unknown field 'vectors'"},
                    {
                        "{\"id\":\"x\",\"vector\":[1,2,3]}",
                        ":1: vector: expected 8 numbers (the collection's dimension), got 3"
                    },
                    {
                        "{\"id\":\"x\",\"vector\":"
                                + json(vector(r))
                                + ",\"metadata\":{\"k\":[1]}}",
                        ":1: metadata.k: expected a string, number or boolean, got an array"
                    },
                    {
                        "{\"id\":\"x\",\"vector\":"
                                + json(vector(r))
                                + ",\"source\":{\"kind\":\"doc\",\"id\":\"d\"}}",
                        ":1: source: expected kind, id and version, got no version"
                    }
                }) {
            Files.writeString(f, bad[0] + "\n");
            Run b = client("ingest", f.toString(), "--collection", "notes");
            assertEquals(Main.FAILED, b.exit(), bad[0]);
            assertEquals(1, b.errLines().size(), b.err());
            assertTrue(b.err().contains(f + bad[1]), b.err());
        }
        assertEquals(2, store.collection("notes").size(TENANT));
    }

    @Test
    void searchPrintsWhatTheStoresOwnSearchFinds() {
        store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE));
        Random r = new Random(3);
        List<VectorRecord> batch = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            batch.add(
                    VectorRecord.builder("r" + i)
                            .tenant(TENANT)
                            .subject(i % 2 == 0 ? "alice" : "bob")
                            .vector(vector(r))
                            .text(
                                    "a rather long note, number "
                                            + i
                                            + ", that goes on well past the sixty"
                                            + " characters a line of hits has room for")
                            .metadata("lang", i % 3 == 0 ? "fr" : "en")
                            .build());
        }
        store.collection("notes").upsertAll(batch);
        float[] q = vector(r);

        Run run = client("search", "--collection", "notes", "--vector", csv(q), "-k", "7");
        assertEquals(0, run.exit(), run.err());
        List<String> expected =
                store.collection("notes").search(SearchRequest.of(q, 7).tenant(TENANT)).stream()
                        .map(h -> h.record().id())
                        .toList();
        assertEquals(expected, ids(run.out()));
        assertTrue(run.out().contains("…"), "long text is cut: " + run.out());
        String first = run.out().lines().skip(1).findFirst().orElseThrow();
        float score =
                store.collection("notes")
                        .search(SearchRequest.of(q, 1).tenant(TENANT))
                        .get(0)
                        .score();
        assertTrue(first.contains(String.format(Locale.ROOT, "%.6f", score)), first);

        Run filtered =
                client(
                        "search",
                        "--collection",
                        "notes",
                        "--vector",
                        csv(q),
                        "-k",
                        "5",
                        "--subject",
                        "alice",
                        "--filter",
                        "lang=fr",
                        "--param",
                        "efSearch=64");
        assertEquals(0, filtered.exit(), filtered.err());
        assertEquals(
                store
                        .collection("notes")
                        .search(
                                SearchRequest.of(q, 5)
                                        .tenant(TENANT)
                                        .subject("alice")
                                        .filter(Filter.eq("lang", "fr")))
                        .stream()
                        .map(h -> h.record().id())
                        .toList(),
                ids(filtered.out()));

        Run none =
                client("search", "--collection", "notes", "--vector", csv(q), "--min-score", "2");
        assertEquals(0, none.exit(), none.err());
        assertEquals("no hits", none.out().strip());
        assertEquals(
                2,
                client("search", "--collection", "notes", "--vector", "1,x,3").exit(),
                "a bad vector is misuse");
    }

    private static List<String> ids(String table) {
        // "  1  0.912345   r17  alice  text...": the third column.
        return table.lines().skip(1).map(l -> l.strip().split("\\s+")[2]).toList();
    }

    @Test
    void forgetFollowsTheOperationToSealedAndItsReceiptVerifies() throws IOException {
        store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE));
        Random r = new Random(4);
        for (int i = 0; i < 20; i++) {
            store.collection("notes")
                    .upsert(
                            VectorRecord.builder("r" + i)
                                    .tenant(TENANT)
                                    .subject(i < 5 ? "alice" : "bob")
                                    .vector(vector(r))
                                    .build());
        }
        Path receipt = tmp.resolve("receipt.txt");
        Run run =
                client(
                        "forget",
                        "--subject",
                        "alice",
                        "--reason",
                        "gdpr-art17",
                        "--receipt-out",
                        receipt.toString());
        assertEquals(0, run.exit(), run.out() + run.err());
        String out = run.out();
        assertTrue(out.contains("idempotency key "), out);
        int blocked = out.indexOf("BLOCKED");
        int sealed = out.indexOf("SEALED");
        assertTrue(blocked >= 0 && sealed > blocked, "BLOCKED ... SEALED in order:\n" + out);
        assertTrue(
                out.matches("(?s).*BLOCKED\\s+\\+[\\d,]+\\.\\d ms.*"), "with elapsed ms:\n" + out);
        assertTrue(out.contains("SEALED: ERASED"), out);
        assertTrue(out.contains("records forgotten: notes 5"), out);
        assertTrue(out.contains("surface"), "the surfaces table:\n" + out);
        assertEquals(15, store.collection("notes").size(TENANT));

        Path pem = tmp.resolve("public.pem");
        Run saved = client("status", "--public-key-out", pem.toString());
        assertEquals(0, saved.exit(), saved.err());
        assertEquals(store.publicKeyPem(), Files.readString(pem));
        Path ledger = tmp.resolve("keys").resolve("evidence").resolve("ledger.bin");
        Run verified = nepenthe("verify-receipt", receipt.toString(), pem.toString());
        assertEquals(0, verified.exit(), verified.out());
        Run inLedger =
                nepenthe(
                        "verify-receipt",
                        receipt.toString(),
                        pem.toString(),
                        "--ledger",
                        ledger.toString());
        assertEquals(0, inLedger.exit(), inLedger.out());
        assertTrue(inLedger.out().contains("holds the entry the receipt names"), inLedger.out());

        Path tampered = tmp.resolve("tampered.txt");
        Files.writeString(tampered, Files.readString(receipt).replace("ERASED", "ERASEd"));
        Run bad = nepenthe("verify-receipt", tampered.toString(), pem.toString());
        assertEquals(Main.DOES_NOT_HOLD, bad.exit(), bad.out());
        assertTrue(bad.out().contains("does NOT verify"), bad.out());

        // The operation, looked up afterwards.
        String id =
                out.lines()
                        .filter(l -> l.startsWith("operation "))
                        .findFirst()
                        .orElseThrow()
                        .split("[ :]")[1];
        Run status = client("status", "--operation", id);
        assertEquals(0, status.exit(), status.err());
        assertTrue(
                status.out().contains("SEALED: ERASED") && status.out().contains("receipt: issued"),
                status.out());

        // The same key again returns the same operation, and its receipt.
        String key =
                out.lines()
                        .filter(l -> l.startsWith("idempotency key "))
                        .findFirst()
                        .orElseThrow()
                        .split(" ")[2];
        Run retry = client("forget", "--subject", "alice", "--reason", "gdpr-art17", "--key", key);
        assertEquals(0, retry.exit(), retry.err());
        assertTrue(retry.out().contains("operation " + id), retry.out());
        assertTrue(retry.out().contains(Files.readString(receipt)), "the receipt printed again");
    }

    @Test
    void readmitLiftsTheFenceAndVerifyLedgerStillAcceptsTheLedgerAndTheForgetsReceipt()
            throws IOException {
        store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE));
        // Along the axes, each way: no two records at cosine above 0, so the probe finds no
        // suspect.
        for (int i = 0; i < 10; i++) {
            float[] v = new float[DIM];
            v[i % DIM] = i < DIM ? 1 : -1;
            store.collection("notes")
                    .upsert(
                            VectorRecord.builder("r" + i)
                                    .tenant(TENANT)
                                    .subject(i < 3 ? "alice" : "bob")
                                    .vector(v)
                                    .build());
        }
        Random r = new Random(5);
        Path receipt = tmp.resolve("receipt.txt");
        Run forget =
                client(
                        "forget",
                        "--subject",
                        "alice",
                        "--reason",
                        "gdpr-art17",
                        "--exact-probe",
                        "--receipt-out",
                        receipt.toString());
        assertEquals(0, forget.exit(), forget.out() + forget.err());
        assertTrue(
                Files.readString(receipt).contains("\"exactForced\":true"),
                Files.readString(receipt));
        String id =
                forget.out()
                        .lines()
                        .filter(l -> l.startsWith("operation "))
                        .findFirst()
                        .orElseThrow()
                        .split("[ :]")[1];
        VectorRecord back =
                VectorRecord.builder("r0")
                        .tenant(TENANT)
                        .subject("alice")
                        .vector(vector(r))
                        .build();
        assertThrows(
                dev.nepenthe.core.forget.ForgottenScopeException.class,
                () -> store.collection("notes").upsert(back));

        Run readmit = client("readmit", "--subject", "alice", "--reason", "consent-renewed");
        assertEquals(0, readmit.exit(), readmit.out() + readmit.err());
        assertTrue(
                readmit.out().contains("fences lifted of forget operations: " + id), readmit.out());
        assertTrue(
                readmit.out()
                        .startsWith(
                                "readmission " + store.readmissions().get(0).id() + ": subject"),
                readmit.out());
        store.collection("notes").upsert(back);
        assertTrue(store.collection("notes").get(TENANT, "r0").isPresent());

        Run twice = client("readmit", "--subject", "alice", "--reason", "consent-renewed");
        assertEquals(Main.FAILED, twice.exit());
        assertEquals(1, twice.errLines().size(), twice.err());
        assertTrue(
                twice.err().contains("INVALID_ARGUMENT") && twice.err().contains("lifted already"),
                twice.err());
        assertFalse(twice.err().contains("alice"), "the subject never appears in an error");

        Path pem = tmp.resolve("public.pem");
        Files.writeString(pem, store.publicKeyPem());
        Path ledger = tmp.resolve("keys").resolve("evidence").resolve("ledger.bin");
        Run verified =
                nepenthe("verify-ledger", ledger.toString(), pem.toString(), receipt.toString());
        assertEquals(0, verified.exit(), verified.out() + verified.err());
    }

    @Test
    void statusShowsHealthAndTheCallersCounts() {
        store.createCollection(CollectionSpec.of("notes", DIM, Metric.L2));
        store.collection("notes")
                .upsert(
                        VectorRecord.builder("a")
                                .tenant(TENANT)
                                .vector(vector(new Random(5)))
                                .build());
        store.collection("notes")
                .upsert(
                        VectorRecord.builder("b")
                                .tenant("acme")
                                .vector(vector(new Random(6)))
                                .build());
        Run run = client("status");
        assertEquals(0, run.exit(), run.err());
        assertTrue(run.out().contains(": SERVING"), run.out());
        assertTrue(
                run.out().lines().anyMatch(l -> l.matches("notes\\s+8\\s+l2\\s+exact\\s+1\\s+-")),
                "one record of the caller's tenant, not acme's:\n" + run.out());
    }

    @Test
    void snapshotAndRestoreThroughTheServerAndOffline() {
        store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE));
        Path snap = tmp.resolve("snaps").resolve("snap");
        Run run = client("snapshot", snap.toString());
        assertEquals(0, run.exit(), run.err());
        assertTrue(Files.isDirectory(snap.resolve("collections").resolve("notes")));
        Run restored =
                client(
                        "restore",
                        snap.toString(),
                        tmp.resolve("snaps").resolve("restored").toString());
        assertEquals(0, restored.exit(), restored.err());
        assertTrue(
                Files.isDirectory(
                        tmp.resolve("snaps")
                                .resolve("restored")
                                .resolve("collections")
                                .resolve("notes")));
        Run offline =
                nepenthe(
                        "restore", "--offline", snap.toString(), tmp.resolve("offline").toString());
        assertEquals(0, offline.exit(), offline.err());
        assertTrue(
                Files.isDirectory(tmp.resolve("offline").resolve("collections").resolve("notes")));
        assertEquals(2, client("snapshot", "relative/snap").exit(), "a relative path is misuse");
        Run served = client("restore", snap.toString(), tmp.resolve("data").toString());
        assertEquals(Main.FAILED, served.exit());
        assertTrue(served.err().contains("INVALID_ARGUMENT"), served.err());
    }

    @Test
    void aWrongTokenIsOneLineSayingUnauthenticated() throws IOException {
        store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE));
        Path wrong = tmp.resolve("wrong.token");
        Files.writeString(wrong, "bm90LWEtcmVhbC10b2tlbg\n");
        Run run =
                nepenthe(
                        "search",
                        "--server",
                        "127.0.0.1:" + server.port(),
                        "--token-file",
                        wrong.toString(),
                        "--collection",
                        "notes",
                        "--vector",
                        "1,0,0,0,0,0,0,0");
        assertEquals(Main.FAILED, run.exit());
        assertEquals(1, run.errLines().size(), run.err());
        assertTrue(run.err().contains("UNAUTHENTICATED"), run.err());
        assertTrue(run.err().contains("token from " + wrong), "names the file: " + run.err());
        assertFalse(run.err().contains("bm90LWEtcmVhbC10b2tlbg"), "never the token");
        assertFalse(
                run.err().contains("\tat ") || run.err().contains("Exception"),
                "no stack trace: " + run.err());
        // With --verbose, the trace.
        Run verbose =
                nepenthe(
                        "search",
                        "--verbose",
                        "--server",
                        "127.0.0.1:" + server.port(),
                        "--token-file",
                        wrong.toString(),
                        "--collection",
                        "notes",
                        "--vector",
                        "1,0,0,0,0,0,0,0");
        assertTrue(verbose.err().contains("\tat "), verbose.err());

        Run missing =
                nepenthe(
                        "status",
                        "--server",
                        "127.0.0.1:" + server.port(),
                        "--token-file",
                        tmp.resolve("nope.token").toString());
        assertEquals(Main.FAILED, missing.exit());
        assertTrue(missing.err().contains("nope.token: cannot be read"), missing.err());
    }

    @Test
    void anUnreachableServerIsOneLine() throws IOException {
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        Run run =
                nepenthe(
                        "status",
                        "--server",
                        "127.0.0.1:" + closed,
                        "--token-file",
                        tokenFile.toString(),
                        "--deadline",
                        "10");
        assertEquals(Main.FAILED, run.exit());
        assertEquals(1, run.errLines().size(), run.err());
        assertTrue(run.err().contains("UNAVAILABLE: cannot reach 127.0.0.1:" + closed), run.err());
        assertEquals(
                2,
                nepenthe("status", "--server", "no-port-here").exit(),
                "a bad --server is misuse");
    }

    @Test
    void tlsWithTheServersCertificateTrusted() throws Exception {
        // A self-signed certificate for localhost made with the JDK's keytool, exported as PEM.
        Path p12 = tmp.resolve("server.p12");
        Process keytool =
                new ProcessBuilder(
                                Path.of(System.getProperty("java.home"), "bin", "keytool")
                                        .toString(),
                                "-genkeypair",
                                "-keystore",
                                p12.toString(),
                                "-storetype",
                                "PKCS12",
                                "-storepass",
                                "changeit",
                                "-alias",
                                "server",
                                "-keyalg",
                                "EC",
                                "-groupname",
                                "secp256r1",
                                "-dname",
                                "CN=localhost",
                                "-ext",
                                "SAN=dns:localhost,ip:127.0.0.1",
                                "-validity",
                                "2")
                        .redirectErrorStream(true)
                        .start();
        String said = new String(keytool.getInputStream().readAllBytes());
        assertEquals(0, keytool.waitFor(), said);
        java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(p12)) {
            ks.load(in, "changeit".toCharArray());
        }
        Path cert = tmp.resolve("server.pem");
        Path key = tmp.resolve("server.key");
        Files.writeString(cert, pem("CERTIFICATE", ks.getCertificate("server").getEncoded()));
        Files.writeString(
                key,
                pem("PRIVATE KEY", ks.getKey("server", "changeit".toCharArray()).getEncoded()));

        store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE));
        try (NepentheServer tls =
                NepentheServer.start(
                        Nepenthe.open(
                                tmp.resolve("tls-data"),
                                StoreOptions.defaults().withKeystore(tmp.resolve("tls-keys"))),
                        new NepentheServer.Options()
                                .listen("127.0.0.1", 0)
                                .tokens(
                                        tmp.resolve("keys")
                                                .resolve("server")
                                                .resolve("tokens.conf"))
                                .tls(cert, key))) {
            Run run =
                    nepenthe(
                            "status",
                            "--server",
                            "localhost:" + tls.port(),
                            "--token-file",
                            tokenFile.toString(),
                            "--tls-ca",
                            cert.toString());
            assertEquals(0, run.exit(), run.err());
            assertTrue(run.out().contains("SERVING"), run.out());
            Run plain =
                    nepenthe(
                            "status",
                            "--server",
                            "localhost:" + tls.port(),
                            "--token-file",
                            tokenFile.toString(),
                            "--deadline",
                            "10");
            assertEquals(Main.FAILED, plain.exit(), "plaintext to a TLS port fails");
            assertEquals(1, plain.errLines().size(), plain.err());
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN "
                + type
                + "-----\n"
                + java.util.Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der)
                + "\n-----END "
                + type
                + "-----\n";
    }

    @Test
    void everyClientCommandHasHelp() {
        for (String c :
                List.of(
                        "ingest",
                        "search",
                        "forget",
                        "readmit",
                        "status",
                        "snapshot",
                        "restore",
                        "verify-receipt")) {
            Run run = nepenthe(c, "--help");
            assertEquals(0, run.exit(), c);
            assertTrue(run.out().contains("Usage: nepenthe " + c), run.out());
        }
        Run ingest = nepenthe("ingest", "--help");
        Stream.of("--server", "--token-file", "--tls-ca", "--deadline", "--create", "--batch")
                .forEach(o -> assertTrue(ingest.out().contains(o), o + " in\n" + ingest.out()));
    }

    @Test
    void theProgressBarShowsRateAndTimeLeft() {
        StringWriter w = new StringWriter();
        long[] now = {0};
        ProgressBar bar = new ProgressBar(new PrintWriter(w), 1000, () -> now[0]);
        assertEquals(
                "[######..................]  25%  500 records  500/s  0:03 left",
                bar.render(500, 250, 1_000_000_000L));
        now[0] = 1_000_000_000L;
        bar.update(500, 250);
        now[0] += 1000; // too soon to redraw
        bar.update(501, 251);
        bar.finish();
        assertEquals(
                3,
                w.toString().chars().filter(c -> c == '\r').count(),
                "one draw, then a wipe: " + w);
        assertEquals(
                "1,234 records  617/s",
                new ProgressBar(new PrintWriter(w), -1, () -> 0).render(1234, 99, 2_000_000_000L));
    }
}
