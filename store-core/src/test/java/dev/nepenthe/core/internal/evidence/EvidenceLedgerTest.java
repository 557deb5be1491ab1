package dev.nepenthe.core.internal.evidence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.audit.LedgerEntry;
import dev.nepenthe.core.audit.LedgerVerification;
import dev.nepenthe.core.audit.Receipt;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EvidenceLedgerTest {

    @TempDir Path dir;

    private static final byte[] WRAP = new byte[32];

    private static Map<String, Object> body(int i) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("operation", "op-" + i);
        m.put("state", "SEALED");
        m.put("counts", Map.of("hnsw", 3L, "exact", 1L));
        m.put("surfaces", List.of("exact", "hnsw"));
        return m;
    }

    private Path ledgerWith(int n) throws Exception {
        SigningKey key = SigningKey.loadOrCreate(dir.resolve("signing.key"), WRAP);
        Path file = dir.resolve("ledger.log");
        try (EvidenceLedger l = EvidenceLedger.open(file, key)) {
            for (int i = 0; i < n; i++) {
                l.append(body(i));
            }
        }
        return file;
    }

    @Test
    void entriesChainAcrossReopenAndVerifyOfflineWithThePemKey() throws Exception {
        Path file = ledgerWith(3);
        SigningKey key = SigningKey.loadOrCreate(dir.resolve("signing.key"), WRAP);
        try (EvidenceLedger l = EvidenceLedger.open(file, key)) {
            assertEquals(3, l.entries().size());
            LedgerEntry e = l.append(body(3));
            assertEquals(3, e.seq());
            assertTrue(Arrays.equals(l.entries().get(2).hash(), e.prevHash()));
            assertEquals(
                    "{\"counts\":{\"exact\":1,\"hnsw\":3},\"operation\":\"op-3\",\"state\":\"SEALED\","
                        + "\"surfaces\":[\"exact\",\"hnsw\"]}",
                    e.body());
        }
        var pub = SigningKey.parsePem(key.publicKeyPem());
        LedgerVerification v = EvidenceLedger.verify(file, pub);
        assertTrue(v.ok(), v.toString());
        assertEquals(4, v.entries());
    }

    /**
     * Rewrites entry {@code index}'s body and fixes its frame checksum, as a careful forger would.
     */
    private static byte[] forge(byte[] bytes, int index, String from, String to) {
        int pos = EvidenceLedger.header().remaining();
        for (int i = 0; i < index; i++) {
            pos += 8 + ByteBuffer.wrap(bytes).getInt(pos);
        }
        int len = ByteBuffer.wrap(bytes).getInt(pos);
        String frame = new String(bytes, pos + 8, len, StandardCharsets.ISO_8859_1);
        assertTrue(frame.contains(from));
        byte[] forged = frame.replace(from, to).getBytes(StandardCharsets.ISO_8859_1);
        assertEquals(len, forged.length, "same-length forgery");
        byte[] out = bytes.clone();
        System.arraycopy(forged, 0, out, pos + 8, len);
        CRC32C crc = new CRC32C();
        crc.update(forged);
        ByteBuffer.wrap(out).putInt(pos + 4, (int) crc.getValue());
        return out;
    }

    @Test
    void tamperingIsDetectedAtTheEntryItTouched() throws Exception {
        Path file = ledgerWith(4);
        var pub = SigningKey.loadOrCreate(dir.resolve("signing.key"), WRAP).publicKey();
        byte[] good = Files.readAllBytes(file);

        // A flipped byte: the frame checksum catches it.
        byte[] flipped = good.clone();
        int at = new String(good, StandardCharsets.ISO_8859_1).indexOf("op-2");
        flipped[at + 3] ^= 1;
        Files.write(file, flipped);
        LedgerVerification v = EvidenceLedger.verify(file, pub);
        assertEquals(2, v.firstBadEntry(), v.toString());
        assertEquals(2, v.entries());

        // A forged body with a fixed-up checksum: the signature catches it.
        Files.write(file, forge(good, 1, "SEALED", "SEALEX"));
        v = EvidenceLedger.verify(file, pub);
        assertEquals(1, v.firstBadEntry());
        assertTrue(v.problem().contains("signature"), v.problem());

        // An entry removed: the sequence and chain catch it.
        int start = EvidenceLedger.header().remaining();
        int len0 = ByteBuffer.wrap(good).getInt(start);
        byte[] removed = new byte[good.length - 8 - len0];
        System.arraycopy(good, 0, removed, 0, start);
        System.arraycopy(good, start + 8 + len0, removed, start, good.length - start - 8 - len0);
        Files.write(file, removed);
        v = EvidenceLedger.verify(file, pub);
        assertEquals(0, v.firstBadEntry());
        assertTrue(v.problem().contains("sequence"), v.problem());

        // Another key: nothing verifies.
        Files.write(file, good);
        var other = SigningKey.loadOrCreate(dir.resolve("other.key"), WRAP).publicKey();
        assertEquals(0, EvidenceLedger.verify(file, other).firstBadEntry());
        assertTrue(EvidenceLedger.verify(file, pub).ok(), "control: the untouched ledger verifies");

        // Opening a tampered ledger fails loudly, naming the entry.
        Files.write(file, forge(good, 3, "op-3", "op-9"));
        CorruptFileException e =
                assertThrows(
                        CorruptFileException.class,
                        () ->
                                EvidenceLedger.open(
                                        file,
                                        SigningKey.loadOrCreate(dir.resolve("signing.key"), WRAP)));
        assertTrue(
                e.getMessage().contains("entry 3") && e.getMessage().contains("ledger.log"),
                e.getMessage());
    }

    /**
     * A forged length inside a frame (with the frame checksum fixed up) is reported at its entry;
     * the verifier allocates nothing from it (2 GiB would fail with OutOfMemoryError instead).
     */
    @Test
    void aCraftedLengthIsBoundedBeforeAnythingIsAllocated() throws Exception {
        Path file = ledgerWith(3);
        var pub = SigningKey.loadOrCreate(dir.resolve("signing.key"), WRAP).publicKey();
        byte[] bytes = Files.readAllBytes(file);
        int pos = EvidenceLedger.header().remaining();
        pos += 8 + ByteBuffer.wrap(bytes).getInt(pos); // entry 1's frame
        int len = ByteBuffer.wrap(bytes).getInt(pos);
        ByteBuffer.wrap(bytes)
                .putInt(pos + 8 + 8 + 8 + 32, Integer.MAX_VALUE - 16); // its body length
        CRC32C crc = new CRC32C();
        crc.update(bytes, pos + 8, len);
        ByteBuffer.wrap(bytes).putInt(pos + 4, (int) crc.getValue());
        Files.write(file, bytes);
        LedgerVerification v = EvidenceLedger.verify(file, pub);
        assertEquals(1, v.firstBadEntry(), v.toString());
        assertTrue(v.problem().contains("body length"), v.problem());
    }

    @Test
    void aTornLastEntryIsDroppedOnOpen() throws Exception {
        Path file = ledgerWith(2);
        byte[] good = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(good, good.length - 5));
        SigningKey key = SigningKey.loadOrCreate(dir.resolve("signing.key"), WRAP);
        try (EvidenceLedger l = EvidenceLedger.open(file, key)) {
            assertEquals(1, l.entries().size());
            l.append(body(7));
        }
        assertTrue(EvidenceLedger.verify(file, key.publicKey()).ok());
    }

    @Test
    void receiptsVerifyOfflineAndRejectAnyChange() throws Exception {
        SigningKey key = SigningKey.loadOrCreate(dir.resolve("signing.key"), WRAP);
        String doc =
                key.issueReceipt(Map.of("operation", "op-1", "state", "SEALED", "records", 12L));
        assertNotNull(Receipt.verify(doc, key.publicKey()));
        assertEquals(
                "{\"operation\":\"op-1\",\"records\":12,\"state\":\"SEALED\"}",
                Receipt.verify(doc, key.publicKey()));
        assertNull(
                Receipt.verify(doc.replace("\"records\":12", "\"records\":13"), key.publicKey()));
        assertNull(
                Receipt.verify(
                        doc, SigningKey.loadOrCreate(dir.resolve("other.key"), WRAP).publicKey()));
        assertNull(Receipt.verify("no signature here", key.publicKey()));
    }

    @Test
    void signingKeyNeedsTheRightWrappingKey() throws Exception {
        SigningKey.loadOrCreate(dir.resolve("signing.key"), WRAP);
        byte[] wrong = new byte[32];
        wrong[0] = 1;
        CorruptFileException e =
                assertThrows(
                        CorruptFileException.class,
                        () -> SigningKey.loadOrCreate(dir.resolve("signing.key"), wrong));
        assertTrue(e.getMessage().contains("wrong master key"), e.getMessage());
        assertThrows(
                IllegalArgumentException.class,
                () ->
                        SigningKey.parsePem(
                                "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"));
    }
}
