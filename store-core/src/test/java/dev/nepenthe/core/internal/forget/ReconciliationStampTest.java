package dev.nepenthe.core.internal.forget;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.MasterKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The clean-close stamp: what it gives back, and when it gives nothing. */
class ReconciliationStampTest {

    @TempDir Path keys;

    private static KeyedHash hashes(int seed) {
        byte[] k = new byte[MasterKey.LENGTH];
        Arrays.fill(k, (byte) seed);
        return new KeyedHash(MasterKey.of(k));
    }

    private static final KeyedHash HASHES = hashes(7);
    private static final byte[] FENCES = fences(HASHES, 100L);

    private static byte[] fences(KeyedHash h, long floor) {
        return ReconciliationStamp.fenceDigest(
                Map.of(h.of("record", "t", "r3"), "op-1"),
                Map.of(
                        h.of("subject", "t", "bob"),
                        new WriteFences.Lifted("op-2", Map.of("c1", floor))));
    }

    private static Map<String, byte[]> manifests() {
        Map<String, byte[]> m = new LinkedHashMap<>();
        m.put("c1", new byte[] {1, 2, 3});
        m.put("c2", new byte[] {4, 5});
        return m;
    }

    @Test
    void aStampGivesBackTheManifestsOnceAndOnlyUnderTheSameFences() throws Exception {
        ReconciliationStamp.write(keys, HASHES, FENCES, manifests());
        Map<String, byte[]> got = ReconciliationStamp.take(keys, HASHES, FENCES);
        assertEquals(2, got.size());
        assertArrayEquals(new byte[] {1, 2, 3}, got.get("c1"));
        assertArrayEquals(new byte[] {4, 5}, got.get("c2"));
        assertFalse(
                Files.exists(keys.resolve(ReconciliationStamp.FILE)),
                "taken: it vouches for one open");
        assertTrue(
                ReconciliationStamp.take(keys, HASHES, FENCES).isEmpty(),
                "no stamp, nothing to skip");

        ReconciliationStamp.write(keys, HASHES, FENCES, manifests());
        assertTrue(
                ReconciliationStamp.take(keys, HASHES, fences(HASHES, 101L)).isEmpty(),
                "a floor moved");
        assertFalse(Files.exists(keys.resolve(ReconciliationStamp.FILE)));
    }

    @Test
    void aStampWrittenUnderAnotherMasterKeyIsIgnored() throws Exception {
        KeyedHash other = hashes(8);
        // Control: the same stamp under the reader's own key is accepted.
        ReconciliationStamp.write(keys, HASHES, FENCES, manifests());
        assertEquals(2, ReconciliationStamp.take(keys, HASHES, FENCES).size());
        ReconciliationStamp.write(keys, other, FENCES, manifests());
        assertTrue(ReconciliationStamp.take(keys, HASHES, FENCES).isEmpty());
        assertFalse(Files.exists(keys.resolve(ReconciliationStamp.FILE)));
    }

    @Test
    void theFenceDigestIgnoresOrderButNotContent() {
        KeyedHash.Hash a = HASHES.of("record", "t", "a");
        KeyedHash.Hash b = HASHES.of("record", "t", "b");
        Map<KeyedHash.Hash, String> ab = new LinkedHashMap<>();
        ab.put(a, "op-1");
        ab.put(b, "op-2");
        Map<KeyedHash.Hash, String> ba = new LinkedHashMap<>();
        ba.put(b, "op-2");
        ba.put(a, "op-1");
        assertArrayEquals(
                ReconciliationStamp.fenceDigest(ab, Map.of()),
                ReconciliationStamp.fenceDigest(ba, Map.of()));
        assertFalse(
                Arrays.equals(
                        ReconciliationStamp.fenceDigest(ab, Map.of()),
                        ReconciliationStamp.fenceDigest(Map.of(a, "op-1", b, "op-3"), Map.of())),
                "another operation");
        assertFalse(
                Arrays.equals(
                        ReconciliationStamp.fenceDigest(Map.of(a, "op-1"), Map.of()),
                        ReconciliationStamp.fenceDigest(
                                Map.of(), Map.of(a, new WriteFences.Lifted("op-1", Map.of())))),
                "a fence lifted is not the fence");
    }
}
