package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.MasterKey;
import dev.nepenthe.core.internal.io.ForensicScan;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A collection that declares which metadata keys identify a record's subject: a forget of the
 * subject reads those values from the subject's own records and looks for them in every survivor,
 * without the request naming them; the receipt names them by keyed hash only. A collection without
 * the declaration is the control.
 */
class SubjectIdentifiersTest {

    @TempDir Path tmp;

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int DIM = 16;

    /** The subject's id says nothing about the person: only its records' metadata names her. */
    private static final String SUBJECT = "cust-7731";

    private static Nepenthe open(Path root) throws IOException {
        return Nepenthe.open(
                root.resolve("data"), StoreOptions.defaults().withKeystore(root.resolve("keys")));
    }

    private static VectorRecord.Builder record(String id, String subject, long seed) {
        return VectorRecord.builder(id).subject(subject).vector(EvidenceTrustTest.vector(seed));
    }

    /** The subject's record, and survivors that name her (or do not) in several ways. */
    private static void populate(VectorCollection c) {
        c.upsertAll(
                List.of(
                        record("p1", SUBJECT, 1)
                                .metadata("name", "Alice Liddell")
                                .metadata("email", "alice@example.org")
                                .metadata("phone", "+44 20 7946 0018")
                                .build(),
                        // An emergency contact: her full name inside a longer value.
                        record("p2", "bob", 2)
                                .metadata("name", "Bob Hatter")
                                .metadata("emergency_contact", "alice liddell (sister)")
                                .build(),
                        // Her phone number, spelled another way, in text.
                        record("p3", "carol", 3)
                                .text("Call (20) 7946-0018 if the order is late.")
                                .build(),
                        // Her email in another key, in another case.
                        record("p4", "dave", 4).metadata("cc", "ALICE@example.org").build(),
                        // Her first name alone is not her name.
                        record("p5", "erin", 5).metadata("name", "Alice Cooper").build()));
    }

    private static List<String> describe(ForgetOperation op) {
        return op.suspects().stream()
                .map(s -> s.recordId() + ":" + s.reason() + ":" + s.relatedTo())
                .sorted()
                .toList();
    }

    private static String hashHex(Path root, String tenant, String canonical) throws IOException {
        MasterKey mk = MasterKey.resolve(root.resolve("keys/master.key"), false);
        return HexFormat.of()
                .formatHex(new KeyedHash(mk).of("forget-identifier", tenant, canonical).bytes());
    }

    @Test
    void aSurvivorNamingTheSubjectByADeclaredKeyIsASuspectWithoutTheRequestNamingIt()
            throws Exception {
        Path root = tmp.resolve("declared");
        ForgetOperation sealed;
        try (Nepenthe store = open(root)) {
            VectorCollection c =
                    store.createCollection(
                            CollectionSpec.of("people", DIM, Metric.COSINE)
                                    .withSubjectIdentifiers("name", "email", "phone"));
            populate(c);
        }
        // The declaration is persisted with the spec: it holds after a reopen.
        try (Nepenthe store = open(root)) {
            assertEquals(
                    List.of("name", "email", "phone"),
                    store.collection("people").spec().subjectIdentifiers());
            ForgetOperation op =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject(SUBJECT),
                                                    "req-1",
                                                    "gdpr-art17"))
                                    .id(),
                            WAIT);
            assertEquals(OperationState.NEEDS_REVIEW, op.state(), op.note());
            assertEquals(
                    List.of(
                            "p2:declared-identifier:metadata key emergency_contact",
                            "p3:declared-identifier:text",
                            "p4:declared-identifier:metadata key cc"),
                    describe(op));

            // The operator forgets what names her and verifies again: the same identifiers are
            // sought.
            store.awaitOperation(
                    store.forget(
                                    ForgetRequest.of(
                                            ForgetScope.records("p2", "p3", "p4"),
                                            "req-2",
                                            "gdpr-art17"))
                            .id(),
                    WAIT);
            sealed = store.awaitOperation(store.reverify(op.id()).id(), WAIT);
            assertEquals(
                    OperationState.SEALED, sealed.state(), sealed.note() + " " + describe(sealed));

            String receipt = sealed.receipt();
            String entries =
                    String.join(
                            "\n",
                            store.evidence().entriesOf(op.id()).stream()
                                    .map(e -> e.body())
                                    .toList());
            // Oracle: the identifiers as they match, spelled by hand (folded tokens; a phone's
            // digits).
            for (String[] expected :
                    List.of(
                            new String[] {"people/name", "alice liddell"},
                            new String[] {"people/email", "alice@example.org"},
                            new String[] {"people/phone", "tel:442079460018"})) {
                String item =
                        "{\"hash\":\""
                                + hashHex(root, VectorRecord.DEFAULT_TENANT, expected[1])
                                + "\",\"source\":\""
                                + expected[0]
                                + "\"}";
                assertTrue(
                        receipt.contains(item),
                        "the receipt names " + expected[0] + " by keyed hash: " + receipt);
                assertTrue(entries.contains(item), "so does the ledger: " + entries);
            }
            // The phone as it was written and as it is normalised; its four-digit groups alone
            // would turn up by chance in the receipt's hex hashes and counts.
            for (String plain :
                    List.of(
                            "Liddell",
                            "liddell",
                            "example.org",
                            "7946 0018",
                            "7946-0018",
                            "2079460018")) {
                assertFalse(
                        receipt.contains(plain),
                        "no plaintext identifier in the receipt: " + plain);
                assertFalse(
                        entries.contains(plain), "no plaintext identifier in the ledger: " + plain);
            }
            assertEquals(
                    1,
                    store.collection("people").size(),
                    "p1 and the three survivors that named her are gone");
        }
        // No file of the store holds her name in clear (a planted control does).
        Path planted = tmp.resolve("planted.txt");
        Files.writeString(planted, "Alice Liddell");
        assertEquals(
                List.of(planted),
                ForensicScan.filesContaining(
                        List.of(tmp), List.of("Liddell".getBytes(StandardCharsets.UTF_8))));
    }

    @Test
    void withoutTheDeclarationTheSameSurvivorsAreNotSought() throws Exception {
        try (Nepenthe store = open(tmp.resolve("control"))) {
            VectorCollection c =
                    store.createCollection(CollectionSpec.of("people", DIM, Metric.COSINE));
            populate(c);
            ForgetOperation op =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject(SUBJECT),
                                                    "req-1",
                                                    "gdpr-art17"))
                                    .id(),
                            WAIT);
            assertEquals(OperationState.SEALED, op.state(), op.note() + " " + describe(op));
            assertTrue(op.receipt().contains("\"identifiersSought\":[]"), op.receipt());
        }
    }

    @Test
    void aRecordScopeDoesNotSeekTheSubjectsIdentifiers() throws Exception {
        // Forgetting one record keeps its subject: her other records name her, rightly.
        try (Nepenthe store = open(tmp.resolve("records"))) {
            VectorCollection c =
                    store.createCollection(
                            CollectionSpec.of("people", DIM, Metric.COSINE)
                                    .withSubjectIdentifiers("name", "email", "phone"));
            populate(c);
            ForgetOperation op =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.records("p1"),
                                                    "req-1",
                                                    "gdpr-art17"))
                                    .id(),
                            WAIT);
            assertEquals(OperationState.SEALED, op.state(), op.note() + " " + describe(op));
        }
    }

    @Test
    void theDeclarationIsValidated() {
        CollectionSpec spec = CollectionSpec.of("people", DIM, Metric.COSINE);
        IllegalArgumentException twice =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> spec.withSubjectIdentifiers("email", "email"));
        assertTrue(
                twice.getMessage().contains("distinct") && twice.getMessage().contains("'email'"),
                twice.getMessage());
        IllegalArgumentException blank =
                assertThrows(
                        IllegalArgumentException.class, () -> spec.withSubjectIdentifiers(" "));
        assertTrue(blank.getMessage().contains("not blank"), blank.getMessage());
        assertThrows(
                IllegalArgumentException.class, () -> spec.withSubjectIdentifiers("k".repeat(129)));
        String[] many = new String[CollectionSpec.MAX_SUBJECT_IDENTIFIERS + 1];
        for (int i = 0; i < many.length; i++) {
            many[i] = "k" + i;
        }
        IllegalArgumentException tooMany =
                assertThrows(
                        IllegalArgumentException.class, () -> spec.withSubjectIdentifiers(many));
        assertTrue(
                tooMany.getMessage().contains("at most " + CollectionSpec.MAX_SUBJECT_IDENTIFIERS),
                tooMany.getMessage());
        assertThrows(NullPointerException.class, () -> spec.withSubjectIdentifiers("name", null));
        assertEquals(
                List.of("name"),
                spec.withSubjectIdentifiers("name").withTextIndex("english").subjectIdentifiers(),
                "kept by the other with-methods");
    }
}
