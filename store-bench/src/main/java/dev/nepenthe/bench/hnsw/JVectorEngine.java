package dev.nepenthe.bench.hnsw;

import dev.nepenthe.core.Metric;
import io.github.jbellis.jvector.graph.GraphIndexBuilder;
import io.github.jbellis.jvector.graph.GraphSearcher;
import io.github.jbellis.jvector.graph.ImmutableGraphIndex;
import io.github.jbellis.jvector.graph.ListRandomAccessVectorValues;
import io.github.jbellis.jvector.graph.RandomAccessVectorValues;
import io.github.jbellis.jvector.graph.SearchResult;
import io.github.jbellis.jvector.graph.similarity.BuildScoreProvider;
import io.github.jbellis.jvector.graph.similarity.DefaultSearchScoreProvider;
import io.github.jbellis.jvector.graph.similarity.SearchScoreProvider;
import io.github.jbellis.jvector.util.Bits;
import io.github.jbellis.jvector.vector.VectorSimilarityFunction;
import io.github.jbellis.jvector.vector.VectorizationProvider;
import io.github.jbellis.jvector.vector.types.VectorFloat;
import io.github.jbellis.jvector.vector.types.VectorTypeSupport;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ForkJoinPool;

/**
 * jvector's graph (hierarchical, as of 4.0), built with one worker thread. jvector's degree
 * parameter bounds every layer, so it gets 2M to match the layer-0 degree of the HNSW
 * implementations; alpha and overflow stay at jvector's defaults (1.2, 1.2). Searched with exact
 * scores over the float vectors on heap and rerankK = ef as the beam. A {@link GraphSearcher} holds
 * per-search state, so each searching thread gets its own, as jvector's own benchmarks do; {@link
 * JVectorPqEngine} searches the same graph with PQ scores.
 */
final class JVectorEngine implements AnnEngine {
    static final VectorTypeSupport VTS = VectorizationProvider.getInstance().getVectorTypeSupport();
    private final int m;
    private final int efConstruction;
    final VectorSimilarityFunction similarity;
    RandomAccessVectorValues ravv;
    private ThreadLocal<GraphSearcher> searchers;

    /** Cosine runs as DOT_PRODUCT over unit vectors (the harness normalises them). */
    JVectorEngine(int m, int efConstruction, Metric metric) {
        this.m = m;
        this.efConstruction = efConstruction;
        this.similarity =
                metric == Metric.L2
                        ? VectorSimilarityFunction.EUCLIDEAN
                        : VectorSimilarityFunction.DOT_PRODUCT;
    }

    @Override
    public String name() {
        return "jvector";
    }

    @Override
    public String buildNote() {
        return "GraphIndexBuilder, degree " + 2 * m + ", one-thread pool, float vectors on heap";
    }

    @Override
    public void build(float[][] data) {
        List<VectorFloat<?>> vectors = new ArrayList<>(data.length);
        for (float[] v : data) {
            vectors.add(VTS.createFloatVector(v));
        }
        ravv = new ListRandomAccessVectorValues(vectors, data[0].length);
        BuildScoreProvider bsp = BuildScoreProvider.randomAccessScoreProvider(ravv, similarity);
        ForkJoinPool one = new ForkJoinPool(1);
        try {
            GraphIndexBuilder builder =
                    new GraphIndexBuilder(
                            bsp,
                            data[0].length,
                            2 * m,
                            efConstruction,
                            1.2f,
                            1.2f,
                            true,
                            true,
                            one,
                            one);
            ImmutableGraphIndex graph = builder.build(ravv);
            searchers = ThreadLocal.withInitial(() -> new GraphSearcher(graph));
        } finally {
            one.shutdown();
        }
    }

    @Override
    public int[] search(float[] query, int k, int ef) {
        return search(
                DefaultSearchScoreProvider.exact(VTS.createFloatVector(query), similarity, ravv),
                k,
                ef);
    }

    /**
     * Top k of a search with beam (rerankK) ef, scored by {@code scores}, on this thread's
     * searcher.
     */
    int[] search(SearchScoreProvider scores, int k, int ef) {
        SearchResult r = searchers.get().search(scores, k, Math.max(k, ef), 0f, 0f, Bits.ALL);
        SearchResult.NodeScore[] nodes = r.getNodes();
        int[] out = new int[nodes.length];
        for (int i = 0; i < nodes.length; i++) {
            out[i] = nodes[i].node;
        }
        return out;
    }
}
