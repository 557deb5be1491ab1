package dev.nepenthe.core.internal.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.engine.RecordCatalogue.Entry;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.roaringbitmap.RoaringBitmap;

/**
 * The catalogue keeps vectors off the heap, in a column by ordinal, and text in the records' stored
 * copies; these check the joins. The stored copies here are a map the test fills before it links
 * each record, as the storage stores a record before the engine links it.
 */
class RecordCatalogueVectorsTest {

    private final Map<Integer, VectorRecord> stored = new ConcurrentHashMap<>();

    private RecordCatalogue catalogue(int dim) {
        RecordCatalogue c = new RecordCatalogue(dim, TestHashes.fresh());
        c.readTextFrom(
                ord -> {
                    VectorRecord r = stored.get(ord);
                    return r == null ? null : RecordAccess.copy(r);
                });
        return c;
    }

    /** Stores a copy of {@code r} at {@code ord}, then links another (the store's own). */
    private void link(RecordCatalogue c, int ord, VectorRecord r) {
        stored.put(ord, RecordAccess.copy(r));
        c.link(ord, RecordAccess.copy(r));
    }

    private static VectorRecord record(String id, float[] v) {
        return VectorRecord.builder(id)
                .subject("s")
                .vector(v)
                .text("text of " + id)
                .metadata("k", id)
                .build();
    }

    private static float[] filled(int dim, float value) {
        float[] v = new float[dim];
        Arrays.fill(v, value);
        return v;
    }

    @Test
    void theEntryHoldsNoVectorAndAReadJoinsTheColumnsCopy() {
        RecordCatalogue c = catalogue(3);
        VectorRecord given = record("a", new float[] {1, 2, 3});
        VectorRecord storesCopy = RecordAccess.copy(given);
        stored.put(7, RecordAccess.copy(given));
        c.link(7, storesCopy);
        Entry e = c.entry(7);
        assertNull(
                RecordAccess.vectorUnsafe(e.record()),
                "the record in the catalogue holds no vector");
        assertNull(e.record().text(), "nor any text");
        assertTrue(e.hasText());
        assertArrayEquals(
                new float[3],
                RecordAccess.vectorUnsafe(storesCopy),
                "the store's copy it was given is zeroed");
        assertArrayEquals(
                new float[] {1, 2, 3}, given.vector(), "the caller's record is never changed");

        VectorRecord out = c.materialise(e);
        assertArrayEquals(new float[] {1, 2, 3}, out.vector());
        assertEquals("text of a", out.text());
        assertEquals("a", out.metadata().get("k"));
        RecordAccess.wipe(out);
        assertEquals(
                "text of a", c.materialise(e).text(), "a handed-out copy has arrays of its own");
        assertEquals("text of a", c.text(e));
    }

    /**
     * The entry keeps no metadata, only keyed hashes of it: reading the entry's record's metadata
     * fails loudly, a read decrypts the copy (counted here), and filters and join keys are answered
     * from the index, which follows links, unlinks and publishes and is what the integrity check
     * compares with the entries.
     */
    @Test
    void theEntryHoldsNoMetadataAndFiltersReadTheIndex() {
        java.util.concurrent.atomic.AtomicInteger reads =
                new java.util.concurrent.atomic.AtomicInteger();
        RecordCatalogue c = new RecordCatalogue(2, TestHashes.fresh());
        c.readTextFrom(
                ord -> {
                    reads.incrementAndGet();
                    VectorRecord r = stored.get(ord);
                    return r == null ? null : RecordAccess.copy(r);
                });
        link(
                c,
                0,
                VectorRecord.builder("a")
                        .vector(new float[] {1, 0})
                        .metadata("lang", "en")
                        .metadata("year", 2020)
                        .metadata("who", "Alice, Bob")
                        .build());
        link(
                c,
                1,
                VectorRecord.builder("b")
                        .vector(new float[] {0, 1})
                        .metadata("lang", "de")
                        .metadata("year", 2020.0)
                        .build());
        link(c, 2, VectorRecord.builder("c").vector(new float[] {1, 1}).build());
        c.publish(c.nextStamp());
        Entry a = c.entry(0);
        assertTrue(a.hasMetadata() && !a.hasText() && !c.entry(2).hasMetadata());
        assertThrows(
                IllegalStateException.class,
                () -> a.record().metadata().get("lang"),
                "the catalogue's record has no metadata to read");

        RoaringBitmap all = RoaringBitmap.bitmapOf(0, 1, 2);
        assertEquals(
                RoaringBitmap.bitmapOf(0),
                c.matching(dev.nepenthe.core.Filter.eq("lang", "en"), all, false));
        assertEquals(
                RoaringBitmap.bitmapOf(0, 1),
                c.matching(dev.nepenthe.core.Filter.eq("year", 2020), all, false),
                "2020 and 2020.0 are one value");
        assertEquals(
                RoaringBitmap.bitmapOf(2),
                c.matching(
                        dev.nepenthe.core.Filter.not(dev.nepenthe.core.Filter.exists("year")),
                        all,
                        false));
        assertEquals(
                0, reads.get(), "equality, exists and not are answered without decrypting a copy");
        assertEquals(
                RoaringBitmap.bitmapOf(0),
                c.matching(dev.nepenthe.core.Filter.gt("lang", "df"), all, false));
        assertEquals(
                2,
                reads.get(),
                "a comparison decrypts the copies of the records with the key, and no other");
        assertEquals(
                RoaringBitmap.bitmapOf(0), c.withMetadataKey("bob"), "a join key by token, folded");

        reads.set(0);
        assertEquals(
                Map.of("lang", "en", "year", 2020L, "who", "Alice, Bob"),
                c.materialise(a).metadata());
        assertEquals(1, reads.get(), "a read decrypts the copy once");

        // Unlinked and published, the index forgets the record; the check agrees with the entries.
        c.unlink(a);
        assertEquals(
                RoaringBitmap.bitmapOf(0),
                c.matching(dev.nepenthe.core.Filter.eq("lang", "en"), all, false),
                "reads see the last publish");
        assertNull(c.withMetadataKey("bob"), "the writer sees its own change at once");
        c.publish(c.nextStamp());
        assertTrue(c.matching(dev.nepenthe.core.Filter.eq("lang", "en"), all, false).isEmpty());
        IntegrityReport.Builder r = IntegrityReport.builder("t");
        c.checkBitmaps(r);
        assertTrue(r.build().isClean(), r.build().toString());
    }

    @Test
    void aRecordWithoutTextReadsNoCopy() {
        RecordCatalogue c = new RecordCatalogue(2, TestHashes.fresh()); // no stored copies at all
        c.link(0, RecordAccess.copy(VectorRecord.builder("a").vector(new float[] {1, 2}).build()));
        Entry e = c.entry(0);
        assertTrue(!e.hasText());
        assertArrayEquals(new float[] {1, 2}, c.materialise(e).vector());
        assertNull(c.text(e));
    }

    /**
     * A live entry whose stored copy is missing, or is another record's, is an inconsistency the
     * read reports; once a forget or a removal hides the entry (its key may be destroyed before the
     * entry is unlinked) the read is dropped instead.
     */
    @Test
    void aLiveEntryWithoutItsCopyFailsAndAHiddenOneIsDropped() {
        RecordCatalogue c = catalogue(2);
        link(c, 0, record("a", new float[] {1, 1}));
        link(c, 1, record("b", new float[] {2, 2}));
        stored.remove(0);
        stored.put(1, RecordAccess.copy(record("x", new float[] {9, 9})));
        IllegalStateException missing =
                assertThrows(IllegalStateException.class, () -> c.materialise(c.entry(0)));
        assertTrue(missing.getMessage().contains("ordinal 0"), missing.getMessage());
        IllegalStateException other =
                assertThrows(IllegalStateException.class, () -> c.text(c.entry(1)));
        assertTrue(other.getMessage().contains("another record's"), other.getMessage());

        c.hide("forget-1", RoaringBitmap.bitmapOf(0, 1));
        assertNull(c.materialise(c.entry(0)));
        assertNull(c.text(c.entry(1)));
    }

    @Test
    void aFreedOrdinalsRowIsZeroedAndAStaleEntryReadsNothing() {
        RecordCatalogue c = catalogue(2);
        link(c, 0, record("a", new float[] {1, 1}));
        link(c, 1, record("b", new float[] {2, 2}));
        Entry a = c.entry(0);
        c.unlink(a);
        c.free(RoaringBitmap.bitmapOf(0), c.nextStamp());
        assertNull(c.materialise(a), "an entry no longer at its ordinal is not read");
        float[] out = {9, 9};
        assertTrue(!c.readVector(a, out));
        assertArrayEquals(new float[2], out, "a failed read leaves no floats behind");
        float[] row = new float[2];
        c.vectors().read(0, row);
        assertArrayEquals(new float[2], row, "the freed row is zeros");
        link(c, 0, record("c", new float[] {3, 3}));
        assertNull(c.materialise(a), "nor once another record took the ordinal");
        assertArrayEquals(new float[] {3, 3}, c.materialise(c.entry(0)).vector());
        assertArrayEquals(new float[] {2, 2}, c.materialise(c.entry(1)).vector());
    }

    @Test
    void theCheckerFindsAVectorLeftInAFreedRow() {
        RecordCatalogue c = catalogue(2);
        link(c, 0, record("a", new float[] {1, 1}));
        link(c, 1, record("b", new float[] {2, 2}));
        c.unlink(c.entry(0));
        c.free(RoaringBitmap.bitmapOf(0), c.nextStamp());
        c.publish(c.nextStamp());
        IntegrityReport.Builder clean = IntegrityReport.builder("catalogue");
        c.checkBitmaps(clean);
        IntegrityReport report = clean.build();
        assertEquals(0, report.violations("freed-vector-residue"), report.toString());
        assertEquals(1L, report.checked().get("freed vector rows"));

        c.vectors().set(0, new float[] {1, 1}); // the fault: a freed row written again
        IntegrityReport.Builder dirty = IntegrityReport.builder("catalogue");
        c.checkBitmaps(dirty);
        assertEquals(1, dirty.build().violations("freed-vector-residue"));
    }

    /**
     * Readers materialise while a writer frees an ordinal and links other records there, each
     * record's vector filled with its own number and its text naming it: a read either fails or
     * returns a record whose every float is its own number and whose text is its own, never a mix
     * or another record's.
     */
    @Test
    void aReadRacingTheReuseOfItsOrdinalIsDroppedNeverMixed() throws Exception {
        long seed = new Random().nextLong();
        System.out.println("RecordCatalogueVectorsTest seed " + seed);
        Random rnd = new Random(seed);
        int dim = 4096; // long rows widen the window in which a read can overlap a write
        int ordinals = 4;
        RecordCatalogue c = catalogue(dim);
        for (int ord = 0; ord < ordinals; ord++) {
            link(c, ord, record(Integer.toString(ord + 1), filled(dim, ord + 1)));
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<String> wrong = new AtomicReference<>();
        AtomicLong good = new AtomicLong();
        AtomicLong dropped = new AtomicLong();
        Thread reader =
                new Thread(
                        () -> {
                            float[] v = new float[dim];
                            while (!stop.get() && wrong.get() == null) {
                                for (int ord = 0; ord < ordinals; ord++) {
                                    Entry e = c.entry(ord);
                                    if (e == null) {
                                        continue;
                                    }
                                    VectorRecord r = c.materialise(e);
                                    if (r == null) {
                                        dropped.incrementAndGet();
                                        continue;
                                    }
                                    float expected = Float.parseFloat(r.id());
                                    if (!r.text().equals("text of " + r.id())) {
                                        wrong.compareAndSet(
                                                null,
                                                "record "
                                                        + r.id()
                                                        + " read the text '"
                                                        + r.text()
                                                        + "'");
                                        return;
                                    }
                                    float[] got = r.vector();
                                    for (int i = 0; i < dim; i++) {
                                        if (got[i] != expected) {
                                            wrong.compareAndSet(
                                                    null,
                                                    "record " + r.id() + " read " + got[i] + " at "
                                                            + i);
                                            return;
                                        }
                                    }
                                    good.incrementAndGet();
                                }
                            }
                        });
        reader.start();
        int next = ordinals + 1;
        long until = System.nanoTime() + 1_500_000_000L;
        while (System.nanoTime() < until && wrong.get() == null) {
            int ord = rnd.nextInt(ordinals);
            c.unlink(c.entry(ord));
            c.free(RoaringBitmap.bitmapOf(ord), c.nextStamp());
            int id = next++ % 1_000_000 + ordinals + 1;
            link(c, ord, record(Integer.toString(id), filled(dim, id)));
        }
        stop.set(true);
        reader.join();
        System.out.println(
                "reads good "
                        + good.get()
                        + ", dropped "
                        + dropped.get()
                        + ", writes "
                        + (next - ordinals - 1));
        assertNull(wrong.get(), wrong.get());
        assertTrue(good.get() > 0, "the reader read records");
        assertNotNull(c.entry(0));
    }
}
