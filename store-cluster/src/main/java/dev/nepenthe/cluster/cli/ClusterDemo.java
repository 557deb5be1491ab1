package dev.nepenthe.cluster.cli;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.nepenthe.cluster.internal.ByteScan;
import dev.nepenthe.cluster.internal.ClusterReceipt;
import dev.nepenthe.embed.internal.ExampleFolder;
import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.ForgetRequest;
import dev.nepenthe.grpc.v1.ForgetScope;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.grpc.v1.Metric;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.UpsertRequest;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What {@code nepenthe cluster demo} shows, step by step: three replicas as child processes, a
 * forget sent through one of them while another is killed, the operation waiting for that replica
 * by name, the replica restarted on its folder, the operation sealed with an attestation of every
 * member, its receipt verified offline against a ledger's keys, and the forgotten records gone from
 * every replica's answers and files. Each check that fails is counted; none is skipped.
 */
final class ClusterDemo {

    static final String MARKER = ".nepenthe-cluster-demo";
    private static final String COLLECTION = "notes";
    private static final int DIM = 8;
    private static final String FORGOTTEN = "alice";
    private static final String KEPT = "bob";

    /** n1 takes the writes, n2 the forget, and n3 is killed in the middle of it. */
    private static final int WRITER = 0;

    private static final int FORGETTER = 1;
    private static final int VICTIM = 2;

    /**
     * What the run found.
     *
     * @param failures the checks that did not hold, in words; empty when all held
     * @param receipt the sealed receipt's JSON, or null if the forget did not seal
     */
    record Outcome(List<String> failures, String receipt) {
        boolean passed() {
            return failures.isEmpty() && receipt != null;
        }
    }

    private final Path folder;
    private final int basePort;
    private final Duration sealWait;
    private final PrintStream out;
    private final List<String> failures = new ArrayList<>();

    ClusterDemo(Path folder, int basePort, Duration sealWait, PrintStream out) {
        this.folder = folder.toAbsolutePath().normalize();
        this.basePort = basePort;
        this.sealWait = sealWait;
        this.out = out;
    }

    /**
     * A record whose vector points mostly along an axis of its own (so no record of the other
     * subject is similar enough to be a suspect of the forget's probe), with small components that
     * no file holds by chance.
     */
    static Record record(String subject, int n, int axis) {
        Record.Builder b =
                Record.newBuilder()
                        .setId(subject.charAt(0) + String.valueOf(n))
                        .setSubject(subject);
        for (int i = 0; i < DIM; i++) {
            b.addVector(i == axis ? 1f : 0.0137f * n + 0.0071f * (i + 1) + 0.00013f * axis);
        }
        return b.build();
    }

    /** {@code count} records of a subject, on axes from {@code firstAxis} on. */
    static List<Record> records(String subject, int count, int firstAxis) {
        List<Record> rs = new ArrayList<>();
        for (int n = 1; n <= count; n++) {
            rs.add(record(subject, n, firstAxis + n - 1));
        }
        return rs;
    }

    /** A vector's bytes in both orders a file could hold them in. */
    static List<byte[]> needles(List<Record> records) {
        List<byte[]> out = new ArrayList<>();
        for (Record r : records) {
            for (ByteOrder order : List.of(ByteOrder.LITTLE_ENDIAN, ByteOrder.BIG_ENDIAN)) {
                ByteBuffer b = ByteBuffer.allocate(DIM * Float.BYTES).order(order);
                r.getVectorList().forEach(b::putFloat);
                out.add(b.array());
            }
        }
        return out;
    }

    Outcome run() throws IOException, InterruptedException {
        ExampleFolder.prepare(folder, MARKER, "the cluster demo", "nepenthe cluster demo");
        List<Record> forgotten = records(FORGOTTEN, 3, 0);
        List<Record> kept = records(KEPT, 2, 5);
        String receipt = null;
        try (LocalNodes nodes = new LocalNodes(folder, 3, basePort, "1000-2000")) {
            nodes.checkPortsFree();
            nodes.ensureTokens();
            nodes.ensureGroupKey();
            String token = nodes.token();
            out.printf("Nepenthe cluster demo: three replicas on loopback, in %s%n", folder);
            out.println("1. starting n1, n2 and n3, each a process of its own ...");
            for (int i = 0; i < 3; i++) {
                nodes.start(i);
            }
            nodes.awaitServing(token, Duration.ofMinutes(2), 0, 1, 2);
            nodes.describe(out);
            out.println("   a leader is elected and every replica answers");

            write(nodes, token, forgotten, kept);
            awaitJoined(nodes);
            int before = 0;
            for (int i = 0; i < 3; i++) {
                before += ByteScan.holding(nodes.dataDir(i), needles(forgotten)).size();
            }
            out.printf(
                    "   byte scan before the forget: %d files on the three replicas hold %s's"
                            + " vectors in clear (stores and journals keep records encrypted)%n",
                    before, FORGOTTEN);

            String op = forgetWhileKilling(nodes, token, forgotten);
            if (op == null) {
                return new Outcome(List.copyOf(failures), null);
            }

            out.printf(
                    "4. restarting %s on its folder %s ...%n",
                    id(nodes, VICTIM), nodes.dataDir(VICTIM));
            nodes.start(VICTIM);
            long restarted = System.nanoTime();
            nodes.awaitServing(token, Duration.ofMinutes(2), VICTIM);
            out.printf(
                    "   %s is back; waiting for the forget to seal (at most %d s) ...%n",
                    id(nodes, VICTIM), sealWait.toSeconds());
            Operation sealed = awaitSettled(nodes, token, op, restarted);
            if (sealed == null) {
                return new Outcome(List.copyOf(failures), null);
            }
            receipt = sealed.getReceipt();
            showReceipt(receipt, sealed, restarted);
            verify(nodes, receipt);
            checkGets(nodes, token, forgotten, kept);
            scan(nodes, forgotten);
            out.println("8. stopping the replicas ...");
        }
        if (failures.isEmpty()) {
            out.println("All checks passed.");
        } else {
            out.printf("%d check(s) FAILED:%n", failures.size());
            failures.forEach(f -> out.println("  - " + f));
        }
        return new Outcome(List.copyOf(failures), receipt);
    }

    private static String id(LocalNodes nodes, int i) {
        return nodes.members().get(i).id();
    }

    private void check(boolean holds, String what) {
        if (!holds) {
            failures.add(what);
            out.println("   FAILED: " + what);
        }
    }

    private void write(LocalNodes nodes, String token, List<Record> forgotten, List<Record> kept) {
        try (NodeClient c = new NodeClient(nodes.members().get(WRITER), token)) {
            c.collections()
                    .create(
                            CreateCollectionRequest.newBuilder()
                                    .setSpec(
                                            CollectionSpec.newBuilder()
                                                    .setName(COLLECTION)
                                                    .setDimension(DIM)
                                                    .setMetric(Metric.COSINE))
                                    .build());
            c.records()
                    .upsert(
                            UpsertRequest.newBuilder()
                                    .setCollection(COLLECTION)
                                    .addAllRecords(forgotten)
                                    .addAllRecords(kept)
                                    .build());
        }
        out.printf(
                "2. through %s: created collection '%s' (dimension %d), upserted %d records of %s"
                        + " and %d of %s%n",
                id(nodes, WRITER), COLLECTION, DIM, forgotten.size(), FORGOTTEN, kept.size(), KEPT);
        StringBuilder seen = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            try (NodeClient c = new NodeClient(nodes.members().get(i), token)) {
                int n = 0;
                for (Record r : concat(forgotten, kept)) {
                    n += c.get(COLLECTION, r.getId()).isPresent() ? 1 : 0;
                }
                seen.append(String.format(Locale.ROOT, " %s %d/%d", id(nodes, i), n, 5));
                check(n == 5, id(nodes, i) + " serves " + n + " of the 5 records written");
            }
        }
        out.println("   every replica serves them:" + seen);
    }

    private static List<Record> concat(List<Record> a, List<Record> b) {
        List<Record> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    /** Every member's keys in the ledger before one goes down, so the receipt can be checked. */
    private void awaitJoined(LocalNodes nodes) throws IOException, InterruptedException {
        Path ledger = LedgerKeys.ledgerOf(nodes.dataDir(WRITER));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int joined = 0;
        while (System.nanoTime() < deadline) {
            joined = Files.exists(ledger) ? LedgerKeys.read(ledger).nodeKeys().size() : 0;
            if (joined == 3) {
                break;
            }
            Thread.sleep(200);
        }
        out.printf("   %d of 3 members have their node keys in the ledger%n", joined);
        check(joined == 3, "only " + joined + " of 3 members joined the ledger within 60 s");
    }

    /**
     * Sends the forget through n2 and kills n3 while it is in flight; returns the operation's id
     * once the operation is seen waiting for n3, or null if it could not be (a failure counted).
     */
    private String forgetWhileKilling(LocalNodes nodes, String token, List<Record> forgotten)
            throws InterruptedException {
        String victim = id(nodes, VICTIM);
        try (NodeClient via = new NodeClient(nodes.members().get(FORGETTER), token)) {
            ListenableFuture<Operation> sent =
                    via.forgetAsync()
                            .forget(
                                    ForgetRequest.newBuilder()
                                            .setScope(
                                                    ForgetScope.newBuilder().setSubject(FORGOTTEN))
                                            .setIdempotencyKey("cluster-demo-1")
                                            .setReasonCode("gdpr-art17")
                                            .build());
            long pid = nodes.pid(VICTIM);
            nodes.kill(VICTIM);
            out.printf(
                    "3. through %s: forget subject %s; while it is in flight, SIGKILL %s (pid"
                            + " %d)%n",
                    id(nodes, FORGETTER), FORGOTTEN, victim, pid);
            Operation op;
            try {
                op = sent.get(60, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                check(false, "the forget through " + id(nodes, FORGETTER) + " failed: " + e);
                return null;
            }
            out.printf("   forget() returned %s, state %s%n", op.getId(), op.getState());
            for (int i : new int[] {WRITER, FORGETTER}) {
                try (NodeClient c = new NodeClient(nodes.members().get(i), token)) {
                    long served =
                            forgotten.stream()
                                    .filter(r -> c.get(COLLECTION, r.getId()).isPresent())
                                    .count();
                    check(
                            served == 0,
                            id(nodes, i)
                                    + " still serves "
                                    + served
                                    + " of "
                                    + FORGOTTEN
                                    + "'s records after forget() returned");
                }
            }
            out.printf(
                    "   %s and %s already answer NOT_FOUND for %s's records%n",
                    id(nodes, WRITER), id(nodes, FORGETTER), FORGOTTEN);
            // The live replicas may not attest before the killed one has caught up (they keep the
            // bodies it lacks), so the note may name them too; what matters is that it names the
            // killed one.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            Operation seen = op;
            while (System.nanoTime() < deadline) {
                seen =
                        via.forget()
                                .getOperation(
                                        GetOperationRequest.newBuilder().setId(op.getId()).build());
                if (seen.getSettled() || waitsFor(seen, victim)) {
                    break;
                }
                Thread.sleep(200);
            }
            boolean waiting = !seen.getSettled() && waitsFor(seen, victim);
            out.printf("   the operation waits: %s (%s)%n", seen.getNote(), seen.getState());
            check(
                    waiting,
                    "expected the operation to wait for "
                            + victim
                            + ", got state "
                            + seen.getState()
                            + " with note '"
                            + seen.getNote()
                            + "'");
            return op.getId();
        }
    }

    private static boolean waitsFor(Operation op, String member) {
        return op.getNote().contains("WAITING_FOR_REPLICAS") && op.getNote().contains(member);
    }

    private Operation awaitSettled(LocalNodes nodes, String token, String op, long since)
            throws InterruptedException {
        long deadline = since + sealWait.toNanos();
        Operation seen = null;
        try (NodeClient c = new NodeClient(nodes.members().get(WRITER), token)) {
            while (System.nanoTime() < deadline) {
                seen = c.forget().getOperation(GetOperationRequest.newBuilder().setId(op).build());
                if (seen.getSettled()) {
                    break;
                }
                Thread.sleep(250);
            }
        }
        if (seen == null || !seen.getSettled() || !seen.getState().equals("SEALED")) {
            check(
                    false,
                    "expected the forget to seal within "
                            + sealWait.toSeconds()
                            + " s of the restart, got "
                            + (seen == null
                                    ? "no answer"
                                    : seen.getState() + " ('" + seen.getNote() + "')"));
            return null;
        }
        return seen;
    }

    private void showReceipt(String receipt, Operation sealed, long since) throws IOException {
        out.printf(
                Locale.ROOT,
                "   SEALED %.1f s after the restart; outcome %s%n",
                (System.nanoTime() - since) / 1e9,
                sealed.getOutcome());
        JsonObject o = JsonParser.parseString(receipt).getAsJsonObject();
        out.println("   attestations (node, state, outcome):");
        for (JsonElement e : o.getAsJsonArray("attestations")) {
            JsonObject a = e.getAsJsonObject();
            out.printf(
                    "     %-4s %-8s %s%n",
                    a.get("node").getAsString(),
                    a.get("state").getAsString(),
                    a.get("outcome").getAsString());
        }
        List<String> excused = new ArrayList<>();
        for (JsonElement e : o.getAsJsonArray("excused")) {
            JsonObject x = e.getAsJsonObject();
            excused.add(x.get("node").getAsString() + " (" + x.get("reason").getAsString() + ")");
        }
        out.println("   excused: " + (excused.isEmpty() ? "none" : String.join(", ", excused)));
        Files.writeString(folder.resolve("receipt.json"), receipt, StandardCharsets.UTF_8);
    }

    private void verify(LocalNodes nodes, String receipt) throws IOException {
        Path ledger = LedgerKeys.ledgerOf(nodes.dataDir(WRITER));
        LedgerKeys keys = LedgerKeys.read(ledger);
        List<String> problems = ClusterReceipt.verify(receipt, keys.nodeKeys(), keys.storeKeys());
        out.printf(
                "5. receipt (%s) verified offline against the keys in %s's ledger (%s): %s%n",
                folder.resolve("receipt.json"),
                id(nodes, WRITER),
                ledger,
                problems.isEmpty() ? "valid" : "INVALID");
        problems.forEach(p -> out.println("     " + p));
        check(problems.isEmpty(), "the receipt does not verify: " + problems);
    }

    private void checkGets(
            LocalNodes nodes, String token, List<Record> forgotten, List<Record> kept) {
        out.printf(
                "6. a get of every record on every replica (%s gone, %s kept):%n", FORGOTTEN, KEPT);
        for (int i = 0; i < 3; i++) {
            try (NodeClient c = new NodeClient(nodes.members().get(i), token)) {
                long gone =
                        forgotten.stream()
                                .filter(r -> c.get(COLLECTION, r.getId()).isEmpty())
                                .count();
                long same = 0;
                for (Record r : kept) {
                    Optional<Record> got = c.get(COLLECTION, r.getId());
                    same +=
                            got.isPresent() && got.get().getVectorList().equals(r.getVectorList())
                                    ? 1
                                    : 0;
                }
                out.printf(
                        "     %s: %d of %d of %s's NOT_FOUND, %d of %d of %s's there%n",
                        id(nodes, i), gone, forgotten.size(), FORGOTTEN, same, kept.size(), KEPT);
                check(
                        gone == forgotten.size() && same == kept.size(),
                        id(nodes, i) + " answers wrongly after the seal");
            }
        }
    }

    private void scan(LocalNodes nodes, List<Record> forgotten) throws IOException {
        out.printf(
                "7. byte scan of every replica's folder (raft/, journal/, store/ and the rest) for"
                        + " %s's vectors:%n",
                FORGOTTEN);
        for (int i = 0; i < 3; i++) {
            List<Path> found = ByteScan.holding(nodes.dataDir(i), needles(forgotten));
            out.printf("     %s: %d files%n", id(nodes, i), found.size());
            found.forEach(f -> out.println("       " + f));
            check(found.isEmpty(), id(nodes, i) + "'s files still hold a forgotten vector");
        }
    }
}
