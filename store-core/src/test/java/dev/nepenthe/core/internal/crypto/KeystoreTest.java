package dev.nepenthe.core.internal.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CorruptFileException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import javax.crypto.AEADBadTagException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KeystoreTest {

    @TempDir Path dir;

    private static MasterKey master(int seed) {
        byte[] k = new byte[32];
        Arrays.fill(k, (byte) seed);
        return MasterKey.of(k);
    }

    static boolean contains(byte[] hay, byte[] needle) {
        return dev.nepenthe.core.internal.io.ForensicScan.indexOf(hay, needle) >= 0;
    }

    @Test
    void keysSurviveReopenAndDestroyedKeysLeaveNoBytesBehind() throws Exception {
        MasterKey mk = master(7);
        KeyedHash h = new KeyedHash(mk);
        KeyedHash.Hash alice = h.subject("t", "alice");
        KeyedHash.Hash bob = h.subject("t", "bob");
        byte[] aliceKey;
        byte[] bobKey;
        try (Keystore ks = Keystore.open(dir, mk)) {
            aliceKey = ks.getOrCreate(alice).exportForTest();
            bobKey = ks.getOrCreate(bob).exportForTest();
            assertFalse(Arrays.equals(aliceKey, bobKey));
            assertArrayEquals(
                    aliceKey, ks.getOrCreate(alice).exportForTest(), "same subject, same key");
        }
        Path file = dir.resolve("keys.db");
        byte[] before = Files.readAllBytes(file);
        // The raw key is never on disk, only its wrapped form (which names the subject's hash).
        assertFalse(contains(before, aliceKey));
        byte[] aliceSlot = slotHolding(before, alice.bytes());
        assertTrue(aliceSlot != null, "control: the scan finds alice's slot before destruction");

        try (Keystore ks = Keystore.open(dir, mk)) {
            assertArrayEquals(aliceKey, ks.find(alice).exportForTest());
            DataKey live = ks.find(alice);
            assertTrue(ks.destroy(alice));
            assertTrue(live.isWiped(), "the in-memory copy is wiped too");
            assertFalse(ks.destroy(alice));
            assertNull(ks.find(alice));
            assertEquals(1, ks.size());
        }
        byte[] after = Files.readAllBytes(file);
        assertEquals(before.length, after.length, "destroyed in place, not by rewriting the file");
        assertFalse(
                contains(after, Arrays.copyOfRange(aliceSlot, 33, 33 + 60)),
                "wrapped key bytes are gone");
        assertFalse(contains(after, alice.bytes()), "the subject's hash is gone from the keystore");
        try (Keystore ks = Keystore.open(dir, mk)) {
            assertNull(ks.find(alice));
            assertArrayEquals(bobKey, ks.find(bob).exportForTest());
            // The freed slot is reused rather than growing the file.
            ks.getOrCreate(h.subject("t", "carol"));
        }
        assertEquals(before.length, Files.size(file));
    }

    private static byte[] slotHolding(byte[] file, byte[] hash) {
        for (int off = Keystore.HEADER; off + Keystore.SLOT <= file.length; off += Keystore.SLOT) {
            if (Arrays.equals(Arrays.copyOfRange(file, off + 1, off + 33), hash)) {
                return Arrays.copyOfRange(file, off, off + Keystore.SLOT);
            }
        }
        return null;
    }

    @Test
    void wrongMasterKeyAndCorruptSlotsFailLoudly() throws Exception {
        MasterKey mk = master(1);
        KeyedHash.Hash s = new KeyedHash(mk).subject("t", "s");
        try (Keystore ks = Keystore.open(dir, mk)) {
            ks.getOrCreate(s);
        }
        try (Keystore ks = Keystore.open(dir, master(2))) {
            CorruptFileException e = assertThrows(CorruptFileException.class, () -> ks.find(s));
            assertTrue(e.getMessage().contains("wrong master key"), e.getMessage());
        }
        Path file = dir.resolve("keys.db");
        byte[] b = Files.readAllBytes(file);
        b[Keystore.HEADER + 50] ^= 1;
        Files.write(file, b);
        CorruptFileException e =
                assertThrows(CorruptFileException.class, () -> Keystore.open(dir, mk));
        assertTrue(
                e.getMessage().contains("slot 0 checksum failed")
                        && e.getMessage().contains("keys.db"),
                e.getMessage());
        Files.write(file, Arrays.copyOf(b, b.length - 3));
        assertThrows(
                CorruptFileException.class,
                () -> Keystore.open(dir, mk),
                "a live slot cut short is corruption");
    }

    @Test
    void aSlotCutShortWhileItWasWrittenHoldsNoKeyAndIsDropped() throws Exception {
        MasterKey mk = master(4);
        KeyedHash h = new KeyedHash(mk);
        KeyedHash.Hash kept = h.subject("t", "kept");
        byte[] keptKey;
        try (Keystore ks = Keystore.open(dir, mk)) {
            keptKey = ks.getOrCreate(kept).exportForTest();
        }
        Path file = dir.resolve("keys.db");
        // A new slot whose write was cut short: its state byte still 0, part of its body written.
        byte[] torn = new byte[57];
        Arrays.fill(torn, 1, torn.length, (byte) 0x5A);
        Files.write(file, torn, java.nio.file.StandardOpenOption.APPEND);
        try (Keystore ks = Keystore.open(dir, mk)) {
            assertArrayEquals(keptKey, ks.find(kept).exportForTest());
            assertEquals(1, ks.size());
        }
        assertEquals(
                Keystore.HEADER + Keystore.SLOT,
                Files.size(file),
                "the torn slot was cut off the file");
    }

    @Test
    void cipherBindsKeyAndAssociatedData() throws Exception {
        MasterKey mk = master(3);
        KeyedHash h = new KeyedHash(mk);
        try (Keystore ks = Keystore.open(dir, mk)) {
            DataKey k1 = ks.getOrCreate(h.subject("t", "a"));
            DataKey k2 = ks.getOrCreate(h.subject("t", "b"));
            byte[] aad = RecordCipher.aad(h.subject("t", "a"), h.record("t", "r1"), 1);
            byte[] msg = "PLAINTEXT-CANARY".getBytes(StandardCharsets.UTF_8);
            byte[] sealed = RecordCipher.seal(k1, aad, msg);
            assertFalse(contains(sealed, msg));
            assertArrayEquals(msg, RecordCipher.open(k1, aad, sealed));
            assertFalse(
                    Arrays.equals(sealed, RecordCipher.seal(k1, aad, msg)),
                    "fresh nonce per message");
            assertThrows(AEADBadTagException.class, () -> RecordCipher.open(k2, aad, sealed));
            byte[] otherVersion = RecordCipher.aad(h.subject("t", "a"), h.record("t", "r1"), 2);
            assertThrows(
                    AEADBadTagException.class, () -> RecordCipher.open(k1, otherVersion, sealed));
            byte[] tampered = sealed.clone();
            tampered[tampered.length - 1] ^= 1;
            assertThrows(AEADBadTagException.class, () -> RecordCipher.open(k1, aad, tampered));
        }
    }

    @Test
    void keyedHashesDependOnTheMasterKeyAndOnPartBoundaries() {
        KeyedHash a = new KeyedHash(master(1));
        KeyedHash b = new KeyedHash(master(2));
        assertEquals(a.subject("t", "x"), a.subject("t", "x"));
        assertNotEquals(a.subject("t", "x"), b.subject("t", "x"));
        assertNotEquals(a.subject("ab", "c"), a.subject("a", "bc"));
        assertNotEquals(a.subject("t", "x"), a.record("t", "x"));
    }

    @Test
    void generatedMasterKeyIsReadBackAndBadKeysAreRefused() throws Exception {
        Path f = dir.resolve("ks/master.key");
        KeyedHash h1 = new KeyedHash(MasterKey.resolve(f, true));
        KeyedHash h2 = new KeyedHash(MasterKey.resolve(f, true));
        assertEquals(
                h1.subject("t", "s"),
                h2.subject("t", "s"),
                "the generated key is reused, not regenerated");
        Files.writeString(f, "not base64!");
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> MasterKey.resolve(f, true));
        assertTrue(e.getMessage().contains("expected base64"), e.getMessage());
        Files.writeString(f, java.util.Base64.getEncoder().encodeToString(new byte[16]));
        e = assertThrows(IllegalArgumentException.class, () -> MasterKey.resolve(f, true));
        assertTrue(
                e.getMessage().contains("expected 32 bytes after base64 decoding, got 16"),
                e.getMessage());
        assertThrows(
                java.io.IOException.class, () -> MasterKey.resolve(dir.resolve("none.key"), false));
    }
}
