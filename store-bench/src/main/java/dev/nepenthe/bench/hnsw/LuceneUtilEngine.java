package dev.nepenthe.bench.hnsw;

import dev.nepenthe.core.Metric;
import java.io.IOException;
import java.util.Arrays;
import org.apache.lucene.codecs.hnsw.DefaultFlatVectorScorer;
import org.apache.lucene.index.FloatVectorValues;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopKnnCollector;
import org.apache.lucene.util.hnsw.HnswGraphBuilder;
import org.apache.lucene.util.hnsw.HnswGraphSearcher;
import org.apache.lucene.util.hnsw.OnHeapHnswGraph;
import org.apache.lucene.util.hnsw.RandomVectorScorer;
import org.apache.lucene.util.hnsw.RandomVectorScorerSupplier;

/**
 * Lucene util.hnsw, float[] on heap: internal path, not how users run it. lucene-core's {@code
 * util.hnsw} graph builder and searcher (the graph its codec writes) over the harness's own float[]
 * rows, built single-threaded with the same M and beam width, searched with a top-ef collector cut
 * to k. No index, no files, no reader: kept beside {@link LuceneEngine} only to show what that path
 * left out. Not searched from several threads: {@link OnHeapHnswGraph} keeps the
 * neighbour-iteration cursor in the graph itself.
 */
final class LuceneUtilEngine implements AnnEngine {
    private final int m;
    private final int efConstruction;
    private FloatVectorValues values;
    private OnHeapHnswGraph graph;

    private final VectorSimilarityFunction similarity;

    /**
     * Cosine runs as Lucene's DOT_PRODUCT over unit vectors (the harness normalises them), as
     * Lucene advises.
     */
    LuceneUtilEngine(int m, int efConstruction, Metric metric) {
        this.m = m;
        this.efConstruction = efConstruction;
        this.similarity = LuceneEngine.similarity(metric);
    }

    @Override
    public String name() {
        return "lucene-util";
    }

    @Override
    public String buildNote() {
        return "HnswGraphBuilder over float[] on heap (internal path, not how users run it)";
    }

    @Override
    public boolean concurrentSearch() {
        return false;
    }

    @Override
    public void build(float[][] data) throws IOException {
        values = FloatVectorValues.fromFloats(Arrays.asList(data), data[0].length);
        RandomVectorScorerSupplier supplier =
                DefaultFlatVectorScorer.INSTANCE.getRandomVectorScorerSupplier(similarity, values);
        HnswGraphBuilder builder = HnswGraphBuilder.create(supplier, m, efConstruction, 42L);
        graph = builder.build(values.size());
    }

    @Override
    public int[] search(float[] query, int k, int ef) throws IOException {
        RandomVectorScorer scorer =
                DefaultFlatVectorScorer.INSTANCE.getRandomVectorScorer(similarity, values, query);
        TopKnnCollector collector = new TopKnnCollector(Math.max(k, ef), Integer.MAX_VALUE);
        HnswGraphSearcher.search(scorer, collector, graph, null);
        TopDocs td = collector.topDocs();
        ScoreDoc[] docs = td.scoreDocs;
        int n = Math.min(k, docs.length);
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = docs[i].doc;
        }
        return out;
    }
}
