package dev.nepenthe.langchain4j.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.audit.LedgerAudit;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.embed.MiniLmEmbedder;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the README's RAG example with the real model, checks what it reports, and then checks the
 * folder it leaves behind without it: the receipt file verifies offline against the ledger with
 * only the public key, and the reopened store holds no record of the forgotten customer.
 */
class RagExampleTest {

    @Test
    void retrievesHerNotesThenForgetsHerWithAReceiptThatVerifiesOffline(@TempDir Path tmp)
            throws Exception {
        Path dir = tmp.resolve("rag");
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        MiniLmEmbedder embedder = new MiniLmEmbedder();
        RagExample.Outcome o =
                new RagExample(dir, embedder, new PrintStream(buf, true, StandardCharsets.UTF_8))
                        .run();
        String printed = buf.toString(StandardCharsets.UTF_8);
        long hers =
                RagExample.NOTES.stream()
                        .filter(n -> RagExample.FORGOTTEN.equals(n.customer()))
                        .count();

        assertEquals(java.util.List.of(), o.failures(), printed);
        assertTrue(
                o.beforeForgotten().get(0) >= 1,
                "the real model retrieves her ticket for the refund question\n" + printed);
        assertEquals(0, o.afterForgotten(), printed);
        assertEquals(OperationState.SEALED, o.state());
        assertEquals(hers, o.forgotten());
        assertTrue(o.receiptVerified());
        assertEquals(RagExample.NOTES.size() - hers, o.recordsLeft());
        assertTrue(printed.contains("All checks passed."), printed);

        // Offline, with only the public key the example wrote beside the receipt.
        String pem = Files.readString(dir.resolve("store-public-key.pem"));
        byte[] der = Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
        PublicKey key =
                KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(der));
        LedgerAudit audit = LedgerAudit.read(dir.resolve("keys/evidence/ledger.bin"), key);
        String receipt = Files.readString(dir.resolve("receipt-alice.txt"));
        assertTrue(audit.checkReceipt(receipt).ok(), audit.checkReceipt(receipt).toString());
        assertTrue(
                !audit.checkReceipt(receipt.replace("\"records\":" + hers, "\"records\":0")).ok(),
                "a changed receipt must not verify");

        // The store it leaves behind, reopened: nobody's records but hers are missing.
        try (Nepenthe store =
                Nepenthe.open(
                        dir.resolve("store"),
                        StoreOptions.defaults()
                                .withKeystore(dir.resolve("keys"))
                                .withEmbedder(embedder))) {
            VectorCollection c = store.collection("support");
            assertEquals(RagExample.NOTES.size() - hers, c.size());
            for (String id : c.ids(dev.nepenthe.core.VectorRecord.DEFAULT_TENANT)) {
                assertTrue(!RagExample.FORGOTTEN.equals(c.get(id).orElseThrow().subject()));
            }
        }

        // A second run wipes its own folder; a folder it did not make is refused.
        Path foreign = tmp.resolve("foreign");
        Files.createDirectories(foreign);
        Files.writeString(foreign.resolve("precious.txt"), "not the example's");
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                new RagExample(
                                                foreign,
                                                embedder,
                                                new PrintStream(new ByteArrayOutputStream()))
                                        .run());
        assertTrue(e.getMessage().contains("was not made by the RAG example"), e.getMessage());
        assertTrue(Files.exists(foreign.resolve("precious.txt")));
    }
}
