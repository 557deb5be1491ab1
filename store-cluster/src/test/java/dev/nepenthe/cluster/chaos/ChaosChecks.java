package dev.nepenthe.cluster.chaos;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.nepenthe.cluster.cli.LedgerKeys;
import dev.nepenthe.cluster.internal.ClusterReceipt;
import dev.nepenthe.grpc.v1.Record;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * The four checks after healing, each against the model in {@link History}: acknowledged writes of
 * subjects never forgotten are on every replica, no record of a forgotten subject is readable
 * anywhere (linearizable or stale), every receipt verifies offline and names all three members as
 * attested SEALED, and no replica's files hold a forgotten vector in clear. Each failure is added
 * to a list, naming the id or subject; none stops the others.
 */
final class ChaosChecks {

    private final ChaosNodes nodes;
    private final ChaosClients clients;
    private final History history;
    private final List<String> failures;

    ChaosChecks(ChaosNodes nodes, ChaosClients clients, History history, List<String> failures) {
        this.nodes = nodes;
        this.clients = clients;
        this.history = history;
        this.failures = failures;
    }

    /** Check 1; returns how many ids it read. */
    int acknowledgedWritesEverywhere() {
        int n = 0;
        for (String id : history.liveIds()) {
            List<float[]> allowed = history.allowed(id);
            for (int i = 0; i < ChaosNodes.N; i++) {
                Optional<Record> got;
                try {
                    got = clients.get(i, Workload.COLLECTION, id);
                } catch (StatusRuntimeException e) {
                    failures.add(
                            nodes.id(i) + " did not answer a get of " + id + ": " + e.getStatus());
                    continue;
                }
                float[] value = got.map(ChaosChecks::vector).orElse(null);
                if (allowed.stream().noneMatch(a -> Arrays.equals(a, value))) {
                    failures.add(
                            nodes.id(i)
                                    + " holds "
                                    + (value == null ? "nothing" : Arrays.toString(value))
                                    + " for "
                                    + id
                                    + ", expected one of "
                                    + allowed.stream()
                                            .map(a -> a == null ? "nothing" : Arrays.toString(a))
                                            .toList()
                                    + "; its writes: "
                                    + history.writes(id));
                }
            }
            n++;
        }
        return n;
    }

    private static float[] vector(Record r) {
        float[] v = new float[r.getVectorCount()];
        for (int i = 0; i < v.length; i++) {
            v[i] = r.getVector(i);
        }
        return v;
    }

    /** Check 2; returns how many stale reads a replica refused rather than answered. */
    int forgottenUnreadable() {
        int refusedStale = 0;
        for (String id : history.forgottenIds()) {
            for (int i = 0; i < ChaosNodes.N; i++) {
                try {
                    if (clients.get(i, Workload.COLLECTION, id).isPresent()) {
                        failures.add(
                                nodes.id(i)
                                        + " serves "
                                        + id
                                        + " of a forgotten subject (linearizable get); its"
                                        + " writes: "
                                        + history.writes(id));
                    }
                } catch (StatusRuntimeException e) {
                    failures.add(
                            nodes.id(i) + " did not answer a get of " + id + ": " + e.getStatus());
                }
                try {
                    if (clients.staleGet(i, Workload.COLLECTION, id).isPresent()) {
                        failures.add(
                                nodes.id(i)
                                        + " serves "
                                        + id
                                        + " of a forgotten subject (stale get); its writes: "
                                        + history.writes(id));
                    }
                } catch (StatusRuntimeException e) {
                    // Refusing a stale read is allowed; serving the record is not.
                    refusedStale++;
                }
            }
        }
        return refusedStale;
    }

    /** Check 3, against the keys in the first replica's ledger (all three are the same file). */
    void receiptsVerify(Map<String, String> receipts) throws IOException {
        LedgerKeys keys = LedgerKeys.read(LedgerKeys.ledgerOf(nodes.dataDir(0)));
        List<String> members = nodes.members().stream().map(m -> m.id()).toList();
        if (!keys.nodeKeys().keySet().equals(new TreeSet<>(members))) {
            failures.add("the ledger records node keys of " + keys.nodeKeys().keySet());
        }
        receipts.forEach(
                (subject, receipt) -> {
                    List<String> problems =
                            ClusterReceipt.verify(receipt, keys.nodeKeys(), keys.storeKeys());
                    if (!problems.isEmpty()) {
                        failures.add(
                                "the receipt of the forget of "
                                        + subject
                                        + " does not verify: "
                                        + problems);
                    }
                    JsonObject o = JsonParser.parseString(receipt).getAsJsonObject();
                    List<String> named = new ArrayList<>();
                    o.getAsJsonArray("members").forEach(e -> named.add(e.getAsString()));
                    List<String> sealed = new ArrayList<>();
                    for (JsonElement e : o.getAsJsonArray("attestations")) {
                        JsonObject a = e.getAsJsonObject();
                        if (a.get("state").getAsString().equals("SEALED")) {
                            sealed.add(a.get("node").getAsString());
                        }
                    }
                    if (!named.equals(members)
                            || !new TreeSet<>(sealed).equals(new TreeSet<>(members))
                            || sealed.size() != members.size()
                            || !o.getAsJsonArray("excused").isEmpty()) {
                        failures.add(
                                "the receipt of the forget of "
                                        + subject
                                        + " names members "
                                        + named
                                        + ", attested SEALED by "
                                        + sealed
                                        + ", excused "
                                        + o.getAsJsonArray("excused")
                                        + "; expected all of "
                                        + members
                                        + " attested SEALED");
                    }
                });
    }

    /**
     * Check 4: each replica's folder (raft/, journal/, store/ and the rest) holds none of the
     * forgotten vectors' bytes. The scanner is first shown to find such bytes in a file written
     * here, so an empty result means something.
     */
    void noForgottenBytes(Path scratch) throws IOException {
        List<byte[]> needles = history.forgottenNeedles();
        if (!needles.isEmpty()) {
            byte[] filler = new byte[4096];
            new Random(needles.size()).nextBytes(filler);
            byte[] planted = needles.get(needles.size() / 2);
            Path control = scratch.resolve("control.bin");
            Files.createDirectories(scratch);
            Files.write(control, concat(filler, planted, filler));
            if (!holding(scratch, needles).equals(List.of(control))) {
                failures.add("the byte scan did not find a planted vector in " + control);
            }
        }
        for (int i = 0; i < ChaosNodes.N; i++) {
            for (String sub : List.of("raft", "journal", "store")) {
                if (!Files.isDirectory(nodes.dataDir(i).resolve(sub))) {
                    failures.add(nodes.id(i) + " has no " + sub + "/ folder to scan");
                }
            }
            for (Path f : holding(nodes.dataDir(i), needles)) {
                failures.add(nodes.id(i) + "'s file " + f + " holds a forgotten vector in clear");
            }
        }
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    /**
     * The files under root that hold any needle (a file removed while scanning is skipped). The
     * needles are looked up by their first four bytes, so a file is read once whatever their
     * number.
     */
    static List<Path> holding(Path root, List<byte[]> needles) throws IOException {
        List<Path> out = new ArrayList<>();
        if (needles.isEmpty() || !Files.isDirectory(root)) {
            return out;
        }
        Map<Integer, List<byte[]>> byHead = new HashMap<>();
        for (byte[] n : needles) {
            byHead.computeIfAbsent(head(n, 0), k -> new ArrayList<>()).add(n);
        }
        List<Path> files;
        try (Stream<Path> s = Files.walk(root)) {
            files = s.filter(Files::isRegularFile).toList();
        }
        for (Path f : files) {
            byte[] bytes;
            try (InputStream in = Files.newInputStream(f)) {
                bytes = in.readAllBytes();
            } catch (NoSuchFileException e) {
                continue;
            }
            if (holds(bytes, byHead)) {
                out.add(f);
            }
        }
        return out;
    }

    private static int head(byte[] b, int at) {
        return (b[at] & 0xff)
                | (b[at + 1] & 0xff) << 8
                | (b[at + 2] & 0xff) << 16
                | (b[at + 3] & 0xff) << 24;
    }

    private static boolean holds(byte[] hay, Map<Integer, List<byte[]>> byHead) {
        for (int i = 0; i + 4 <= hay.length; i++) {
            List<byte[]> candidates = byHead.get(head(hay, i));
            if (candidates == null) {
                continue;
            }
            for (byte[] n : candidates) {
                if (i + n.length <= hay.length
                        && Arrays.equals(hay, i, i + n.length, n, 0, n.length)) {
                    return true;
                }
            }
        }
        return false;
    }
}
