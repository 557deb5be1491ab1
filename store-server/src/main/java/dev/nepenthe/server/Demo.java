package dev.nepenthe.server;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.audit.Receipt;
import dev.nepenthe.core.embed.Embedder;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.evidence.SigningKey;
import dev.nepenthe.core.internal.io.ForensicScan;
import dev.nepenthe.embed.internal.ExampleFolder;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The main job on the embedded default: builds a store in a local folder, embeds a small shipped
 * corpus (an agent's memories of five fictional people) with all-MiniLM-L6-v2, searches it,
 * snapshots it, deletes one person, shows by scanning every byte of the folder that none of their
 * notes is readable there, and restores the old snapshot to show that it does not bring them back.
 */
public final class Demo {

    static final String COLLECTION = "memories";
    static final String TENANT = "demo";
    static final String FORGOTTEN = "alice";

    /** One line of the corpus. */
    record Memory(String subject, String text) {}

    private final Path folder;
    private final Embedder embedder;
    private final String indexKind;
    private final PrintStream out;

    public Demo(Path folder, Embedder embedder, String indexKind, PrintStream out) {
        this.folder = folder;
        this.embedder = embedder;
        this.indexKind = indexKind;
        this.out = out;
    }

    /**
     * What the demo showed, for its test to check every printed claim.
     *
     * @param deleted records the forget removed
     * @param state where the forget operation ended
     * @param receiptVerified the signed receipt verified with only the store's public key
     * @param snapshotPurged records the forget removed from the snapshot taken before it
     */
    public record Outcome(
            int loaded,
            List<SearchHit> before,
            int deleted,
            int plaintextBefore,
            int plaintextAfter,
            List<SearchHit> after,
            boolean integrityClean,
            int restored,
            int restoredOfForgotten,
            int droppedOnRestore,
            OperationState state,
            boolean receiptVerified,
            long snapshotPurged) {}

    /** The example owns its folder and wipes it on each run, so it refuses one it did not make. */
    private void prepareFolder() throws IOException {
        ExampleFolder.prepare(folder, ".nepenthe-demo", "the demo", "nepenthe demo");
    }

    public Outcome run() throws IOException {
        prepareFolder();
        Path data = folder.resolve("store");
        Path snapshot = folder.resolve("snapshot");
        Path restoredData = folder.resolve("restored");
        StoreOptions options = StoreOptions.defaults().withKeystore(folder.resolve("keys"));
        List<Memory> corpus = loadCorpus();
        long total = corpus.stream().filter(m -> m.subject().equals(FORGOTTEN)).count();
        out.printf(
                Locale.ROOT,
                "Nepenthe demo: %d memories of %d people, embedded with all-MiniLM-L6-v2.%n"
                        + "Data in %s, keys apart in %s.%n",
                corpus.size(),
                corpus.stream().map(Memory::subject).distinct().count(),
                data,
                folder.resolve("keys"));
        List<SearchHit> before;
        List<SearchHit> after;
        int deleted;
        int plaintextBefore;
        int plaintextAfter;
        boolean clean = true;
        ForgetOperation done;
        boolean receiptVerified;
        try (Nepenthe store = Nepenthe.open(data, options)) {
            VectorCollection memories =
                    store.createCollection(
                            new CollectionSpec(
                                    COLLECTION,
                                    embedder.dimension(),
                                    Metric.COSINE,
                                    IndexSpec.of(indexKind)));

            long t0 = System.nanoTime();
            List<float[]> vectors = embedder.embedAll(corpus.stream().map(Memory::text).toList());
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < corpus.size(); i++) {
                Memory m = corpus.get(i);
                batch.add(
                        VectorRecord.builder("memory-" + i)
                                .tenant(TENANT)
                                .subject(m.subject())
                                .vector(vectors.get(i))
                                .text(m.text())
                                .metadata("person", m.subject())
                                .build());
            }
            memories.upsertAll(batch);
            out.printf(
                    Locale.ROOT,
                    "Embedded and stored %d records (%s index, cosine, %d dimensions) in %.1f s,"
                            + " each encrypted under its person's own key.%n%n",
                    memories.size(),
                    indexKind,
                    embedder.dimension(),
                    (System.nanoTime() - t0) / 1e9);

            String question = "Who likes hiking in the mountains?";
            before = ask(memories, question);
            out.printf("Searching only Bob's memories (subject filter):%n");
            ask(memories, "Does this person have any food restrictions?", "bob");

            store.snapshot(snapshot);
            out.printf(
                    "Took a snapshot (a backup) in %s, before anyone asked to be forgotten.%n%n",
                    snapshot);

            plaintextBefore = countOnDisk(corpus, FORGOTTEN);
            out.printf(
                    Locale.ROOT, "Forgetting subject '%s' (the forget protocol)...%n", FORGOTTEN);
            long m0 = System.nanoTime();
            ForgetOperation op =
                    store.forget(
                            ForgetRequest.of(
                                            ForgetScope.subject(FORGOTTEN),
                                            "demo-" + FORGOTTEN,
                                            "user-request")
                                    .inTenant(TENANT));
            out.printf(
                    Locale.ROOT,
                    "  %s after %.1f ms: from here on no search, get or write reaches her"
                            + " records%n",
                    op.state(),
                    (System.nanoTime() - m0) / 1e6);
            try {
                done = store.awaitOperation(op.id(), Duration.ofMinutes(2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while the forget ran", e);
            }
            deleted = done.totalForgotten();
            out.printf(
                    Locale.ROOT,
                    "  %s after %.0f ms: %d records removed, each surface purged and checked:%n",
                    done.state(),
                    (System.nanoTime() - m0) / 1e6,
                    deleted);
            for (SurfaceOutcome sf : done.surfaces()) {
                out.printf(
                        Locale.ROOT,
                        "    %-32s %-9s purged %d, checked %d%n",
                        sf.surface(),
                        sf.clean() ? "clean" : "NOT CLEAN",
                        sf.purged(),
                        sf.checked());
            }
            for (var sus : done.suspects()) {
                out.printf(
                        Locale.ROOT,
                        "    suspect %s: %s (score %.3f)%n",
                        sus.reason(),
                        sus.recordId(),
                        sus.score());
            }
            plaintextAfter = countOnDisk(corpus, FORGOTTEN);
            out.printf(
                    Locale.ROOT,
                    "  byte scan of every file under %s: %d of %d of %s's notes in plaintext before"
                            + " the forget, %d after%n",
                    folder,
                    plaintextBefore,
                    total,
                    FORGOTTEN,
                    plaintextAfter);
            receiptVerified =
                    done.receipt() != null
                            && Receipt.verify(
                                            done.receipt(),
                                            SigningKey.parsePem(store.publicKeyPem()))
                                    != null;
            if (done.receipt() != null) {
                Files.writeString(folder.resolve("receipt-" + FORGOTTEN + ".txt"), done.receipt());
                Files.writeString(folder.resolve("store-public-key.pem"), store.publicKeyPem());
            }
            out.printf(
                    Locale.ROOT,
                    "  signed receipt (%s) %s with only the store's public key (%s); evidence"
                            + " ledger %s%n",
                    folder.resolve("receipt-" + FORGOTTEN + ".txt").getFileName(),
                    receiptVerified ? "verifies" : "DOES NOT verify",
                    folder.resolve("store-public-key.pem").getFileName(),
                    store.verifyLedger().ok() ? "verifies" : "FAILS verification");
            for (var e : memories.verifyIntegrity().entrySet()) {
                IntegrityReport r = e.getValue();
                clean &= r.isClean();
                out.printf(
                        Locale.ROOT,
                        "  integrity %-14s %s, checked %s%n",
                        e.getKey(),
                        r.isClean() ? "clean" : "VIOLATIONS " + r.violations(),
                        r.checked());
            }
            out.println();
            after = ask(memories, question);
        }

        long snapshotPurged =
                done.surfaces().stream()
                        .filter(sf -> sf.surface().equals("snapshots"))
                        .mapToLong(SurfaceOutcome::purged)
                        .sum();
        out.printf(
                Locale.ROOT,
                "The snapshot taken before the forget was registered with the store, so the forget"
                        + " removed %d records from its files too.%n",
                snapshotPurged);
        out.printf(
                "Restoring that snapshot into %s and opening it with the same keystore:%n",
                restoredData);
        Nepenthe.restore(snapshot, restoredData);
        int restored;
        int restoredOfForgotten;
        int droppedOnRestore;
        try (Nepenthe store = Nepenthe.open(restoredData, options)) {
            VectorCollection memories = store.collection(COLLECTION);
            restored = memories.size();
            droppedOnRestore = memories.openReport().droppedAsDeleted();
            restoredOfForgotten =
                    memories.search(
                                    SearchRequest.of(
                                                    embedder.embed("anything"), SearchRequest.MAX_K)
                                            .tenant(TENANT)
                                            .subject(FORGOTTEN))
                            .size();
            out.printf(
                    Locale.ROOT,
                    "  %d records served, %d of them %s's. A copy the store did not know of would"
                        + " fare the same: her key is destroyed, and the tombstone journal (kept"
                        + " with the keys, not the data) drops her records on open.%n",
                    restored,
                    restoredOfForgotten,
                    FORGOTTEN);
        }
        return new Outcome(
                corpus.size(),
                before,
                deleted,
                plaintextBefore,
                plaintextAfter,
                after,
                clean,
                restored,
                restoredOfForgotten,
                droppedOnRestore,
                done.state(),
                receiptVerified,
                snapshotPurged);
    }

    private List<SearchHit> ask(VectorCollection memories, String question) {
        return ask(memories, question, null);
    }

    private List<SearchHit> ask(VectorCollection memories, String question, String subject) {
        SearchRequest req =
                SearchRequest.of(embedder.embed(question), 3).tenant(TENANT).subject(subject);
        List<SearchHit> hits = memories.search(req);
        out.printf("Query: \"%s\"%n", question);
        for (SearchHit h : hits) {
            out.printf(
                    Locale.ROOT,
                    "  %.3f  %-6s %s%n",
                    h.score(),
                    h.record().subject(),
                    h.record().text());
        }
        out.println();
        return hits;
    }

    /**
     * How many of a subject's notes appear in plaintext, byte for byte, in any file under the
     * folder.
     */
    private int countOnDisk(List<Memory> corpus, String subject) throws IOException {
        int found = 0;
        for (Memory m : corpus) {
            if (m.subject().equals(subject)
                    && !ForensicScan.filesContaining(
                                    List.of(folder),
                                    List.of(m.text().getBytes(StandardCharsets.UTF_8)))
                            .isEmpty()) {
                found++;
            }
        }
        return found;
    }

    static List<Memory> loadCorpus() {
        try (InputStream in = Demo.class.getResourceAsStream("/demo/memories.tsv")) {
            if (in == null) {
                throw new IllegalStateException(
                        "demo corpus /demo/memories.tsv is missing from the class path");
            }
            List<Memory> out = new ArrayList<>();
            BufferedReader r =
                    new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line; (line = r.readLine()) != null; ) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                int tab = line.indexOf('\t');
                if (tab <= 0) {
                    throw new IllegalStateException(
                            "demo corpus: expected 'subject<TAB>text', got a line without a tab");
                }
                out.add(new Memory(line.substring(0, tab), line.substring(tab + 1)));
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
