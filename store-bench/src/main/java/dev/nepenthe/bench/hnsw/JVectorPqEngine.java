package dev.nepenthe.bench.hnsw;

import io.github.jbellis.jvector.graph.similarity.DefaultSearchScoreProvider;
import io.github.jbellis.jvector.graph.similarity.ScoreFunction;
import io.github.jbellis.jvector.quantization.KMeansPlusPlusClusterer;
import io.github.jbellis.jvector.quantization.PQVectors;
import io.github.jbellis.jvector.quantization.ProductQuantization;
import io.github.jbellis.jvector.vector.VectorSimilarityFunction;
import io.github.jbellis.jvector.vector.types.VectorFloat;
import java.util.List;
import java.util.concurrent.ForkJoinPool;

/**
 * jvector's graph searched the way jvector's own examples and benchmarks search a compressed index
 * (SiftSmall's DiskANN-style example, Bench): approximate scores from product-quantized codes
 * ({@link ProductQuantization#compute}, 256 clusters per subspace, the data centred for L2 only, as
 * Bench does; {@link PQVectors} encoded from every vector), then an exact rerank of the rerankK =
 * ef best from the full float vectors. It searches {@link JVectorEngine}'s graph, so its build time
 * is the PQ training and encoding alone, with one thread.
 */
final class JVectorPqEngine implements AnnEngine {
    private static final int CLUSTERS = 256;
    private final JVectorEngine graph;
    private final int subspaces;
    private PQVectors codes;

    /**
     * @param subspaces PQ subspaces (bytes per code); the harness's default is dimension / 4
     */
    JVectorPqEngine(JVectorEngine graph, int subspaces) {
        this.graph = graph;
        this.subspaces = subspaces;
    }

    @Override
    public String name() {
        return "jvector-pq";
    }

    @Override
    public String sharesIndexOf() {
        return graph.name();
    }

    @Override
    public String buildNote() {
        return "PQ only (ProductQuantization.compute, "
                + subspaces
                + " subspaces x "
                + CLUSTERS
                + " clusters, + encodeAll, one thread); the graph is jvector's";
    }

    /** Trains and encodes PQ over the vectors the graph holds (the graph must be built). */
    @Override
    public void build(float[][] data) {
        ForkJoinPool one = new ForkJoinPool(1);
        try {
            ProductQuantization pq =
                    ProductQuantization.compute(
                            graph.ravv,
                            subspaces,
                            CLUSTERS,
                            graph.similarity == VectorSimilarityFunction.EUCLIDEAN,
                            KMeansPlusPlusClusterer.UNWEIGHTED,
                            one,
                            one);
            codes = pq.encodeAll(graph.ravv, one);
        } finally {
            one.shutdown();
        }
    }

    @Override
    public int[] search(float[] query, int k, int ef) {
        VectorFloat<?> q = JVectorEngine.VTS.createFloatVector(query);
        ScoreFunction.ApproximateScoreFunction approximate =
                codes.precomputedScoreFunctionFor(q, graph.similarity);
        ScoreFunction.ExactScoreFunction exact = graph.ravv.rerankerFor(q, graph.similarity);
        return graph.search(new DefaultSearchScoreProvider(approximate, exact), k, ef);
    }

    @Override
    public List<Part> footprint() {
        long n = graph.ravv.size();
        return List.of(
                new Part(
                        "PQ codes + codebooks (on heap, PQVectors.ramBytesUsed)",
                        codes.ramBytesUsed()),
                new Part(
                        "float32 vectors for the rerank (on heap)",
                        n * graph.ravv.dimension() * 4L));
    }
}
