package dev.nepenthe.core.internal.text;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.search.Collector;
import org.apache.lucene.search.CollectorManager;
import org.apache.lucene.search.FilterLeafCollector;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.LeafCollector;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopScoreDocCollector;
import org.apache.lucene.search.TopScoreDocCollectorManager;
import org.roaringbitmap.RoaringBitmap;

/**
 * Top documents among those whose ordinal a bitmap accepts (null: all). The collection's tenant,
 * subject and metadata filters are bitmaps of ordinals, applied here as documents are collected, so
 * a keyword search narrows exactly as a vector search does.
 */
final class FilteredSearch implements CollectorManager<Collector, TopDocs> {
    private final TopScoreDocCollectorManager inner;
    private final RoaringBitmap accept;
    private final Map<Collector, TopScoreDocCollector> unwrap = new HashMap<>();

    private FilteredSearch(TopScoreDocCollectorManager inner, RoaringBitmap accept) {
        this.inner = inner;
        this.accept = accept;
    }

    /** The top {@code k} documents for {@code q} among {@code accept}: ordinals and scores. */
    static TextIndex.Ranked run(IndexSearcher s, Query q, RoaringBitmap accept, int k)
            throws IOException {
        // Exact hit counts stop at 1,000, as in IndexSearcher.search(query, n): past that, BM25
        // skips blocks that cannot reach the top k.
        TopDocs top =
                s.search(q, new FilteredSearch(new TopScoreDocCollectorManager(k, 1000), accept));
        ScoreDoc[] hits = top.scoreDocs;
        int[] ords = new int[hits.length];
        float[] scores = new float[hits.length];
        // Ordinals are read in document order, one doc-values iterator per segment (an
        // iterator only moves forward, and each new one costs a file clone and a refill).
        Integer[] byDoc = new Integer[hits.length];
        for (int i = 0; i < hits.length; i++) {
            byDoc[i] = i;
            scores[i] = hits[i].score;
        }
        Arrays.sort(byDoc, Comparator.comparingInt(i -> hits[i].doc));
        List<LeafReaderContext> leaves = s.getIndexReader().leaves();
        int leafIndex = -1;
        NumericDocValues dv = null;
        for (int i : byDoc) {
            int li = ReaderUtil.subIndex(hits[i].doc, leaves);
            LeafReaderContext leaf = leaves.get(li);
            if (li != leafIndex) {
                leafIndex = li;
                dv = leaf.reader().getNumericDocValues(TextIndex.ORD);
            }
            int doc = hits[i].doc - leaf.docBase;
            if (dv == null || !dv.advanceExact(doc)) {
                throw new IOException(
                        "text index document "
                                + doc
                                + " has no "
                                + TextIndex.ORD
                                + " value (damaged index?)");
            }
            ords[i] = (int) dv.longValue();
        }
        return new TextIndex.Ranked(ords, scores);
    }

    @Override
    public synchronized Collector newCollector() throws IOException {
        TopScoreDocCollector top = inner.newCollector();
        if (accept == null) {
            unwrap.put(top, top);
            return top;
        }
        Collector c =
                new Collector() {
                    @Override
                    public LeafCollector getLeafCollector(LeafReaderContext context)
                            throws IOException {
                        NumericDocValues ords = context.reader().getNumericDocValues(TextIndex.ORD);
                        LeafCollector leaf = top.getLeafCollector(context);
                        return new FilterLeafCollector(leaf) {
                            @Override
                            public void collect(int doc) throws IOException {
                                if (ords != null
                                        && ords.advanceExact(doc)
                                        && accept.contains((int) ords.longValue())) {
                                    in.collect(doc);
                                }
                            }
                        };
                    }

                    @Override
                    public ScoreMode scoreMode() {
                        return top.scoreMode();
                    }
                };
        unwrap.put(c, top);
        return c;
    }

    @Override
    public synchronized TopDocs reduce(Collection<Collector> collectors) throws IOException {
        List<TopScoreDocCollector> tops = new ArrayList<>();
        for (Collector c : collectors) {
            tops.add(unwrap.get(c));
        }
        return inner.reduce(tops);
    }
}
