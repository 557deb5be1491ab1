package dev.nepenthe.core.internal.forget;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.MasterKey;
import dev.nepenthe.testing.Seeds;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * Reconciliation hashes each subject's fence once per pass and reuses it; the reuse must give every
 * record the answer hashing it afresh gives, across tenants that share a subject name.
 */
class WriteFencesTest {

    private final ScopeHashes hashes = new ScopeHashes(new KeyedHash(MasterKey.of(new byte[32])));
    private final WriteFences fences = new WriteFences(hashes);

    @Test
    void aSubjectsFenceTakenFromThePassesMemoAnswersAsHashingAfresh() {
        long seed = Seeds.draw("aSubjectsFenceTakenFromThePassesMemoAnswersAsHashingAfresh");
        Random rnd = new Random(seed);
        // Tenant a forgot alice and tenant b forgot bob: the same names in the other tenant are
        // live.
        Map<KeyedHash.Hash, String> sealed =
                Map.of(
                        hashes.fenceSubject("a", "alice"), "op-alice",
                        hashes.fenceSubject("b", "bob"), "op-bob",
                        hashes.fenceRecord("c", "a", "r-forgotten"), "op-record");
        ConcurrentHashMap<List<String>, KeyedHash.Hash> memo = new ConcurrentHashMap<>();
        int fenced = 0;
        for (int i = 0; i < 2_000; i++) {
            String tenant = rnd.nextBoolean() ? "a" : "b";
            String subject =
                    switch (rnd.nextInt(4)) {
                        case 0 -> "alice";
                        case 1 -> "bob";
                        case 2 -> null;
                        default -> "carol";
                    };
            String id = rnd.nextInt(50) == 0 ? "r-forgotten" : "r" + i;
            VectorRecord r =
                    VectorRecord.builder(id)
                            .tenant(tenant)
                            .subject(subject)
                            .vector(new float[] {1})
                            .build();
            String expected = fences.fencedBy(sealed, "c", r);
            assertEquals(
                    expected,
                    fences.fencedBy(sealed, "c", r, memo),
                    "record " + i + Seeds.replay(seed));
            fenced += expected == null ? 0 : 1;
        }
        assertTrue(
                fenced > 200 && fenced < 1_800,
                "control: some records fenced, some not (" + fenced + ")");
        assertEquals(6, memo.size(), "two tenants times three named subjects");
    }
}
