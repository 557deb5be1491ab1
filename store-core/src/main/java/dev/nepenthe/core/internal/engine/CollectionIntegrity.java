package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.IndexView;
import dev.nepenthe.core.index.IndexDescription;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.internal.engine.RecordCatalogue.Entry;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import dev.nepenthe.core.internal.text.TextIndex;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.roaringbitmap.RoaringBitmap;

/**
 * What a collection's parts say about each other: the integrity check (the index holds exactly the
 * live ordinals, the id map finds each record, the bitmaps agree with the records, the text index
 * with the records) and the index's structure by record. Apart from the engine because these read
 * every part at once and change none; the caller holds the writer mutex.
 */
final class CollectionIntegrity {

    private final CollectionEngine engine;
    private final RecordCatalogue catalogue;
    private final CollectionStorage storage;

    /** The text index, or null when the collection has none. */
    private final TextIndex text;

    CollectionIntegrity(CollectionEngine engine, TextIndex text) {
        this.engine = engine;
        this.catalogue = engine.catalogue();
        this.storage = engine.storage();
        this.text = text;
    }

    /** The index's structure, its members named by record. */
    IndexView describe(VectorIndex index) {
        IndexDescription d = index.describe();
        List<IndexView.Partition> parts = new ArrayList<>();
        for (IndexDescription.Partition p : d.partitions()) {
            parts.add(new IndexView.Partition(p.id(), p.centroid(), refs(p.members())));
        }
        return new IndexView(
                d.kind(),
                d.size(),
                d.stats(),
                parts,
                d.lineage() == null ? null : refs(d.lineage()));
    }

    private List<IndexView.Ref> refs(int[] ordinals) {
        List<IndexView.Ref> out = new ArrayList<>(ordinals.length);
        for (int ord : ordinals) {
            Entry e = catalogue.entry(ord);
            if (e != null) {
                out.add(new IndexView.Ref(e.record().tenant(), e.record().id()));
            }
        }
        return out;
    }

    /** The index's own report, the collection's, and the text index's when there is one. */
    // Identity on purpose: the id map must lead to this very entry, not an equal one.
    @SuppressWarnings("ReferenceEquality")
    Map<String, IntegrityReport> verify(VectorIndex idx) {
        String name = engine.name();
        Map<String, IntegrityReport> out = new LinkedHashMap<>();
        out.put("index:" + idx.kind(), idx.verifyIntegrity());
        IntegrityReport.Builder r =
                IntegrityReport.builder("collection:" + name)
                        .expect("index-size-mismatch")
                        .expect("live-record-missing-from-index")
                        .expect("id-map-mismatch");
        // A rebuilt index leaves out records a forget or hold hides; every other live
        // record must be in it, and nothing else.
        RoaringBitmap hiddenNow = catalogue.hidden();
        int indexed = 0;
        int linked = 0;
        for (Entry e : catalogue.liveEntries()) {
            int ord = e.ordinal();
            linked++;
            if (idx.contains(ord)) {
                indexed++;
            } else if (!hiddenNow.contains(ord)) {
                r.violation("live-record-missing-from-index", "ordinal " + ord);
            }
            if (engine.lookup(e.record().tenant(), e.record().id()) != e) {
                r.violation("id-map-mismatch", "ordinal " + ord);
            }
        }
        int live = catalogue.live();
        if (idx.size() != indexed || storage.size() != live || linked != live) {
            r.violation(
                    "index-size-mismatch",
                    "index holds "
                            + idx.size()
                            + " ("
                            + indexed
                            + " of them live), storage "
                            + storage.size()
                            + ", collection "
                            + live
                            + " ("
                            + linked
                            + " linked)");
        }
        r.checked("records", live);
        catalogue.checkBitmaps(r);
        out.put("collection", r.build());
        if (text != null) {
            try {
                out.put(
                        "text",
                        text.verifyIntegrity(
                                CollectionOpening.textRecords(catalogue, storage), "text:" + name));
            } catch (IOException e) {
                throw new UncheckedIOException(
                        "collection '" + name + "': reading the text index failed", e);
            }
        }
        return out;
    }
}
