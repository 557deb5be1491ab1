package dev.nepenthe.bench.hnsw;

import java.io.IOException;
import java.util.Arrays;
import org.apache.lucene.codecs.hnsw.DefaultFlatVectorScorer;
import org.apache.lucene.index.FloatVectorValues;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopKnnCollector;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.hnsw.HnswGraphBuilder;
import org.apache.lucene.util.hnsw.HnswGraphSearcher;
import org.apache.lucene.util.hnsw.OnHeapHnswGraph;
import org.apache.lucene.util.hnsw.RandomVectorScorer;
import org.apache.lucene.util.hnsw.RandomVectorScorerSupplier;

/**
 * Lucene's HNSW (lucene-core's util.hnsw, the graph its codec writes), built single-threaded
 * with the same M and beam width, searched with a top-ef collector cut to k. Deleted documents
 * are modelled the way Lucene handles them before a merge: the graph keeps them and the search
 * filters them with the live-docs bits.
 */
final class LuceneEngine implements AnnEngine {
    private final int m;
    private final int efConstruction;
    private FloatVectorValues values;
    private OnHeapHnswGraph graph;
    /** Live documents; null means all live. */
    Bits liveDocs;

    private final VectorSimilarityFunction similarity;

    /** Cosine runs as Lucene's DOT_PRODUCT over unit vectors (the harness normalises them), as Lucene advises. */
    LuceneEngine(int m, int efConstruction, dev.nepenthe.core.Metric metric) {
        this.m = m;
        this.efConstruction = efConstruction;
        this.similarity = metric == dev.nepenthe.core.Metric.L2 ? VectorSimilarityFunction.EUCLIDEAN
                : VectorSimilarityFunction.DOT_PRODUCT;
    }

    @Override
    public String name() {
        return "lucene";
    }

    @Override
    public void build(float[][] data) throws IOException {
        values = FloatVectorValues.fromFloats(Arrays.asList(data), data[0].length);
        RandomVectorScorerSupplier supplier = DefaultFlatVectorScorer.INSTANCE
                .getRandomVectorScorerSupplier(similarity, values);
        HnswGraphBuilder builder = HnswGraphBuilder.create(supplier, m, efConstruction, 42L);
        graph = builder.build(values.size());
    }

    @Override
    public int[] search(float[] query, int k, int ef) throws IOException {
        RandomVectorScorer scorer = DefaultFlatVectorScorer.INSTANCE
                .getRandomVectorScorer(similarity, values, query);
        TopKnnCollector collector = new TopKnnCollector(Math.max(k, ef), Integer.MAX_VALUE);
        HnswGraphSearcher.search(scorer, collector, graph, liveDocs);
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
