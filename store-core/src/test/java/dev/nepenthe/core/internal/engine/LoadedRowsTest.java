package dev.nepenthe.core.internal.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * At open the storage offers each stored copy's vector as it decodes it, on several threads and in
 * no particular order; admission later keeps the copy of the highest version per ordinal. These
 * check that the row ends up holding exactly that copy's vector.
 */
class LoadedRowsTest {

    private static final int DIM = 8;

    private record Copy(int ordinal, long seq, float[] vector) {}

    private static VectorRecord record(int ordinal, long seq, float[] v) {
        return RecordAccess.copy(
                VectorRecord.builder("r" + ordinal + "v" + seq).subject("s").vector(v).build());
    }

    @Test
    void eachRowHoldsTheHighestVersionOfferedWhateverTheOrderAndTheThread() throws Exception {
        long seed = new Random().nextLong();
        System.out.println("LoadedRowsTest seed " + seed);
        Random rnd = new Random(seed);
        int ordinals = 3000;
        int reserved = 2800; // the last ones are beyond what the manifest promised
        RecordCatalogue catalogue = new RecordCatalogue(DIM, TestHashes.fresh());
        LoadedRows rows =
                new LoadedRows(
                        catalogue,
                        new RecordValidator(CollectionSpec.of("c", DIM, Metric.L2)),
                        DIM);
        rows.expect(reserved);
        List<Copy> copies = new ArrayList<>();
        long[] highest = new long[ordinals];
        float[][] highestVector = new float[ordinals][];
        for (int ord = 0; ord < ordinals; ord++) {
            int n = 1 + rnd.nextInt(4);
            java.util.Set<Long> seqs = new java.util.HashSet<>();
            for (int k = 0; k < n; k++) {
                long seq = rnd.nextInt(1_000_000);
                if (!seqs.add(seq)) {
                    continue; // versions are unique; a repeat would make the winner a tie
                }
                float[] v = new float[DIM];
                v[0] = ord;
                v[1] = seq;
                for (int d = 2; d < DIM; d++) {
                    v[d] = (float) rnd.nextGaussian();
                }
                copies.add(new Copy(ord, seq, v));
                if (highestVector[ord] == null || seq > highest[ord]) {
                    highest[ord] = seq;
                    highestVector[ord] = v.clone();
                }
            }
        }
        Collections.shuffle(copies, rnd);
        ConcurrentHashMap<Integer, VectorRecord> keptBeyond = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int from = t * copies.size() / 4;
                int to = (t + 1) * copies.size() / 4;
                done.add(
                        pool.submit(
                                () -> {
                                    for (Copy c : copies.subList(from, to)) {
                                        VectorRecord offered =
                                                record(c.ordinal(), c.seq(), c.vector());
                                        VectorRecord kept =
                                                rows.take(c.ordinal(), c.seq(), offered);
                                        if (c.ordinal() < reserved) {
                                            assertNull(
                                                    RecordAccess.vectorUnsafe(kept),
                                                    "a taken record keeps no vector");
                                            assertArrayEquals(
                                                    new float[DIM],
                                                    RecordAccess.vectorUnsafe(offered),
                                                    "the offered array is zeroed");
                                        } else {
                                            assertArrayEquals(
                                                    c.vector(),
                                                    RecordAccess.vectorUnsafe(kept),
                                                    "beyond the rows: kept whole");
                                            if (c.seq() == highest[c.ordinal()]) {
                                                keptBeyond.put(c.ordinal(), kept);
                                            }
                                        }
                                    }
                                    return null;
                                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        float[] row = new float[DIM];
        for (int ord = 0; ord < reserved; ord++) {
            assertTrue(rows.holds(ord, highest[ord]), "seed " + seed + ": ordinal " + ord);
            assertFalse(rows.holds(ord, highest[ord] - 1), "seed " + seed + ": ordinal " + ord);
            catalogue.readLoadedRow(ord, row);
            assertArrayEquals(highestVector[ord], row, "seed " + seed + ": ordinal " + ord);
        }
        assertEquals(ordinals - reserved, keptBeyond.size());
        assertFalse(
                rows.holds(reserved, highest[reserved]),
                "an ordinal beyond the rows is never held");

        // A checkpoint at open borrows a vector back; the wrong version is refused.
        VectorRecord stripped =
                RecordAccess.withVector(record(5, highest[5], highestVector[5]), null);
        assertArrayEquals(
                highestVector[5], RecordAccess.vectorUnsafe(rows.rejoin(5, highest[5], stripped)));
        assertThrows(IllegalStateException.class, () -> rows.rejoin(5, highest[5] + 1, stripped));

        // Link the even ordinals only: an odd one's copy did not stay live, and its row is zeroed.
        for (int ord = 0; ord < reserved; ord += 2) {
            catalogue.linkStored(
                    ord,
                    RecordAccess.withVector(record(ord, highest[ord], highestVector[ord]), null));
        }
        assertEquals(reserved / 2, rows.clearUnlinked());
        for (int ord = 0; ord < reserved; ord++) {
            catalogue.readLoadedRow(ord, row);
            assertArrayEquals(
                    ord % 2 == 0 ? highestVector[ord] : new float[DIM],
                    row,
                    "seed " + seed + ": ordinal " + ord);
        }
    }

    @Test
    void aCopyThatFailsTheChecksIsRefusedAndLeavesItsRowAlone() {
        RecordCatalogue catalogue = new RecordCatalogue(DIM, TestHashes.fresh());
        LoadedRows rows =
                new LoadedRows(
                        catalogue,
                        new RecordValidator(CollectionSpec.of("c", DIM, Metric.L2)),
                        DIM);
        rows.expect(4);
        float[] bad = new float[DIM];
        bad[3] = Float.NaN;
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class, () -> rows.take(1, 9, record(1, 9, bad)));
        assertTrue(
                e.getMessage().contains("stored record") && e.getMessage().contains("finite"),
                e.getMessage());
        assertFalse(rows.holds(1, 9));
        float[] row = new float[DIM];
        catalogue.readLoadedRow(1, row);
        assertArrayEquals(new float[DIM], row);
    }
}
