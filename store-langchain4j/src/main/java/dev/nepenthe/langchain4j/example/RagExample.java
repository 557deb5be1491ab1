package dev.nepenthe.langchain4j.example;

import dev.langchain4j.data.document.Document;
import dev.langchain4j.data.document.Metadata;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.rag.content.Content;
import dev.langchain4j.rag.content.ContentMetadata;
import dev.langchain4j.rag.content.retriever.ContentRetriever;
import dev.langchain4j.rag.content.retriever.EmbeddingStoreContentRetriever;
import dev.langchain4j.rag.query.Query;
import dev.langchain4j.store.embedding.EmbeddingMatch;
import dev.langchain4j.store.embedding.EmbeddingSearchRequest;
import dev.langchain4j.store.embedding.EmbeddingStoreIngestor;
import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.embed.MiniLmEmbedder;
import dev.nepenthe.embed.internal.ExampleFolder;
import dev.nepenthe.langchain4j.EmbedderModel;
import dev.nepenthe.langchain4j.NepentheEmbeddingStore;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The retrieval half of a RAG pipeline on LangChain4j's own classes (EmbeddingStoreIngestor,
 * EmbeddingStoreContentRetriever) over Nepenthe: a coffee shop's support notes about three
 * customers and a few shared help articles are embedded in-process with the bundled
 * all-MiniLM-L6-v2 and stored; a question retrieves the notes a model would be given; one customer
 * is forgotten with the forget protocol and a signed receipt; the same questions, and each of her
 * own notes used as a query, then retrieve nothing of hers. No language model is called: what would
 * go into the prompt is printed instead.
 *
 * <p>It checks its own claims and exits 1 when one does not hold, so a run that prints "All checks
 * passed" has shown what it says.
 */
public final class RagExample {

    static final String FORGOTTEN = "alice";

    /** One support note or help article; {@code customer} is null for an article about nobody. */
    record Note(String customer, String text) {}

    static final List<Note> NOTES =
            List.of(
                    new Note(
                            "alice",
                            "Ticket 1042 from Alice Moreau: my espresso machine arrived with a"
                                    + " cracked water tank; I would like my money back or a"
                                    + " replacement."),
                    new Note(
                            "alice",
                            "Alice Moreau moved: deliveries now go to Rua das Flores 12 in Lisbon,"
                                    + " after six in the evening."),
                    new Note(
                            "bob",
                            "Ticket 1043 from Bob Tanaka: the coffee grinder is very loud on the"
                                    + " finest setting. Is that normal?"),
                    new Note(
                            "bob",
                            "Bob Tanaka switched his bean subscription from every month to every"
                                    + " two months."),
                    new Note(
                            "carol",
                            "Ticket 1044 from Carol Smith: the milk frother stopped heating after"
                                    + " one week."),
                    new Note(
                            null,
                            "Refund policy: items damaged in transit are refunded in full within 30"
                                    + " days once a photo of the damage is sent."),
                    new Note(
                            null,
                            "Descaling: run the descaling program every three months so the machine"
                                    + " keeps heating evenly."),
                    new Note(
                            null,
                            "Delivery times: orders leave the warehouse within two working days;"
                                    + " evening delivery can be requested at checkout."));

    static final List<String> QUESTIONS =
            List.of(
                    "Which customer received a broken espresso machine and wants a refund?",
                    "Where do Alice's deliveries go now?");

    /**
     * What the run showed, for its test to check.
     *
     * @param beforeForgotten segments of the forgotten customer retrieved per question before the
     *     forget
     * @param afterForgotten the same after it (every question, and every one of her notes as a
     *     query)
     * @param state where the forget operation ended
     * @param receiptVerified the receipt verified against the store's ledger and public key
     * @param recordsLeft records left in the collection afterwards
     * @param failures the checks that did not hold, empty when all did
     */
    public record Outcome(
            List<Integer> beforeForgotten,
            int afterForgotten,
            OperationState state,
            int forgotten,
            boolean receiptVerified,
            int recordsLeft,
            List<String> failures) {}

    private final Path folder;
    private final MiniLmEmbedder embedder;
    private final PrintStream out;

    /**
     * An example run in a folder of its own.
     *
     * @param folder where the store, its keys and the receipt go; wiped on each run, so it must be
     *     new, empty, or one an earlier run made
     * @param embedder the bundled embedder
     * @param out where the run tells what it does
     */
    public RagExample(Path folder, MiniLmEmbedder embedder, PrintStream out) {
        this.folder = folder;
        this.embedder = embedder;
        this.out = out;
    }

    /**
     * {@code ./nepenthe rag [--data DIR]}: runs the example in DIR (default {@code rag-data}).
     *
     * @param args {@code --data DIR}, optionally
     * @throws Exception if the store cannot be opened or written
     */
    public static void main(String[] args) throws Exception {
        Path data = Path.of("rag-data");
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--data") && i + 1 < args.length) {
                data = Path.of(args[++i]);
            } else {
                System.err.println("usage: nepenthe rag [--data DIR]   (got '" + args[i] + "')");
                System.exit(2);
            }
        }
        Outcome o = new RagExample(data, new MiniLmEmbedder(), System.out).run();
        System.exit(o.failures().isEmpty() ? 0 : 1);
    }

    /**
     * Runs the example.
     *
     * @return what it showed
     * @throws IOException if the folder cannot be prepared or the store written
     * @throws InterruptedException if interrupted while the forget runs
     */
    public Outcome run() throws IOException, InterruptedException {
        prepareFolder();
        List<String> failures = new ArrayList<>();
        StoreOptions options =
                StoreOptions.defaults().withKeystore(folder.resolve("keys")).withEmbedder(embedder);
        try (Nepenthe nepenthe = Nepenthe.open(folder.resolve("store"), options)) {
            // The collection can embed text itself too (the same model), and keeps a keyword index
            // that the forget purges and proves like the vectors.
            NepentheEmbeddingStore store =
                    NepentheEmbeddingStore.builder(
                                    nepenthe,
                                    nepenthe.createCollection(
                                            CollectionSpec.of(
                                                            "support",
                                                            MiniLmEmbedder.DIMENSION,
                                                            Metric.COSINE)
                                                    .withTextIndex("english")
                                                    .withEmbedder(MiniLmEmbedder.NAME)))
                            .subjectKey("customer")
                            .build();
            EmbedderModel model = new EmbedderModel(embedder);

            List<Document> documents = new ArrayList<>();
            for (Note n : NOTES) {
                Metadata m = new Metadata().put("kind", n.customer() == null ? "article" : "note");
                documents.add(
                        Document.from(
                                n.text(),
                                n.customer() == null ? m : m.put("customer", n.customer())));
            }
            long t0 = System.nanoTime();
            EmbeddingStoreIngestor.builder()
                    .embeddingModel(model)
                    .embeddingStore(store)
                    .build()
                    .ingest(documents);
            out.printf(
                    Locale.ROOT,
                    "Nepenthe RAG example on LangChain4j: %d support notes about %d customers and"
                        + " %d help articles, embedded in-process with %s and stored in %.1f"
                        + " s.%nThe metadata key 'customer' names each note's subject. Data in %s,"
                        + " keys apart in %s.%n%n",
                    NOTES.stream().filter(n -> n.customer() != null).count(),
                    NOTES.stream().map(Note::customer).filter(c -> c != null).distinct().count(),
                    NOTES.stream().filter(n -> n.customer() == null).count(),
                    model.modelName(),
                    (System.nanoTime() - t0) / 1e9,
                    folder.resolve("store"),
                    folder.resolve("keys"));

            ContentRetriever retriever =
                    EmbeddingStoreContentRetriever.builder()
                            .embeddingStore(store)
                            .embeddingModel(model)
                            .maxResults(3)
                            .build();
            List<Integer> beforeForgotten = new ArrayList<>();
            for (String q : QUESTIONS) {
                beforeForgotten.add(ask(retriever, q));
            }
            if (beforeForgotten.get(0) == 0) {
                failures.add(
                        "before the forget, the first question retrieved none of "
                                + FORGOTTEN
                                + "'s notes");
            }

            out.printf(
                    Locale.ROOT,
                    "Forgetting customer '%s' (the forget protocol: hidden at once, then removed,"
                            + " verified, her key destroyed, a signed receipt issued)...%n",
                    FORGOTTEN);
            long f0 = System.nanoTime();
            ForgetOperation op =
                    store.forgetSubject(
                            FORGOTTEN,
                            "rag-example-" + FORGOTTEN,
                            "user-request",
                            Duration.ofMinutes(2));
            out.printf(
                    Locale.ROOT,
                    "  %s after %.0f ms: %d records removed; each surface purged and checked:%n",
                    op.state(),
                    (System.nanoTime() - f0) / 1e6,
                    op.totalForgotten());
            for (SurfaceOutcome s : op.surfaces()) {
                out.printf(
                        Locale.ROOT,
                        "    %-32s %-9s purged %d, checked %d%n",
                        s.surface(),
                        s.clean() ? "clean" : "NOT CLEAN",
                        s.purged(),
                        s.checked());
            }
            long herNotes = NOTES.stream().filter(n -> FORGOTTEN.equals(n.customer())).count();
            if (op.state() != OperationState.SEALED) {
                failures.add("the forget ended " + op.state() + ", not SEALED: " + op.note());
            }
            if (op.totalForgotten() != herNotes) {
                failures.add(
                        "the forget removed "
                                + op.totalForgotten()
                                + " records, expected "
                                + herNotes);
            }
            boolean verified =
                    op.receipt() != null && nepenthe.evidence().checkReceipt(op.receipt()).ok();
            if (op.receipt() != null) {
                Files.writeString(folder.resolve("receipt-" + FORGOTTEN + ".txt"), op.receipt());
                Files.writeString(folder.resolve("store-public-key.pem"), nepenthe.publicKeyPem());
            }
            out.printf(
                    Locale.ROOT,
                    "  signed receipt %s: %s against the store's evidence ledger"
                            + " (check it offline: ./nepenthe verify-receipt %s %s)%n%n",
                    folder.resolve("receipt-" + FORGOTTEN + ".txt"),
                    verified ? "verifies" : "DOES NOT verify",
                    folder.resolve("receipt-" + FORGOTTEN + ".txt"),
                    folder.resolve("store-public-key.pem"));
            if (!verified) {
                failures.add("the receipt is missing or does not verify");
            }

            int afterForgotten = 0;
            for (String q : QUESTIONS) {
                afterForgotten += ask(retriever, q);
            }
            // Her own notes as queries, with room for every record: the nearest a search can get.
            int everything = NOTES.size();
            for (Note n : NOTES) {
                if (FORGOTTEN.equals(n.customer())) {
                    Embedding e = model.embed(n.text()).content();
                    for (EmbeddingMatch<TextSegment> m :
                            store.search(
                                            EmbeddingSearchRequest.builder()
                                                    .queryEmbedding(e)
                                                    .maxResults(everything)
                                                    .build())
                                    .matches()) {
                        afterForgotten += isForgotten(m.embedded()) ? 1 : 0;
                    }
                }
            }
            int left = store.collection().size();
            out.printf(
                    Locale.ROOT,
                    "After the forget: %d of %s's segments retrieved, for the questions above and"
                        + " for each of her %d notes used as a query with room for all %d records;"
                        + " %d records left.%n",
                    afterForgotten,
                    FORGOTTEN,
                    herNotes,
                    everything,
                    left);
            if (afterForgotten != 0) {
                failures.add(
                        afterForgotten
                                + " of "
                                + FORGOTTEN
                                + "'s segments came back after the forget");
            }
            if (left != NOTES.size() - herNotes) {
                failures.add(left + " records left, expected " + (NOTES.size() - herNotes));
            }
            if (failures.isEmpty()) {
                out.println("All checks passed.");
            } else {
                failures.forEach(f -> out.println("FAILED: " + f));
            }
            return new Outcome(
                    beforeForgotten,
                    afterForgotten,
                    op.state(),
                    op.totalForgotten(),
                    verified,
                    left,
                    List.copyOf(failures));
        }
    }

    /**
     * Retrieves for a question, prints what a model would be given, and counts the forgotten
     * customer's segments.
     */
    private int ask(ContentRetriever retriever, String question) {
        out.printf("Question: \"%s\"%nContext a model would be given:%n", question);
        int forgotten = 0;
        for (Content c : retriever.retrieve(Query.from(question))) {
            TextSegment s = c.textSegment();
            String customer = s.metadata().getString("customer");
            out.printf(
                    Locale.ROOT,
                    "  %.3f  %-7s %s%n",
                    (Double) c.metadata().get(ContentMetadata.SCORE),
                    customer == null ? "article" : customer,
                    s.text());
            forgotten += isForgotten(s) ? 1 : 0;
        }
        out.println();
        return forgotten;
    }

    /**
     * Hers by the metadata, or by the text itself (a copy would not carry her name in the
     * metadata).
     */
    private static boolean isForgotten(TextSegment s) {
        return s != null
                && (FORGOTTEN.equals(s.metadata().getString("customer"))
                        || NOTES.stream()
                                .anyMatch(
                                        n ->
                                                FORGOTTEN.equals(n.customer())
                                                        && n.text().equals(s.text())));
    }

    /** The example owns its folder and wipes it on each run, so it refuses one it did not make. */
    private void prepareFolder() throws IOException {
        ExampleFolder.prepare(folder, ".nepenthe-rag-example", "the RAG example", "nepenthe rag");
    }
}
