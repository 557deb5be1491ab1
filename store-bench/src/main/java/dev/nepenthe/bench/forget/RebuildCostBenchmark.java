package dev.nepenthe.bench.forget;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.index.VectorIndexFactory;
import dev.nepenthe.core.internal.index.ExactIndex;
import dev.nepenthe.hnsw.HnswParams;
import dev.nepenthe.ivfpq.IvfPqIndex;
import dev.nepenthe.ivfpq.IvfPqParams;
import dev.nepenthe.testing.Datasets;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceLoader;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * What forgetting costs an index against rebuilding it without the forgotten vectors: one record,
 * 0.1%, 1% or 10% of a collection removed in place ({@code repair}: one {@link
 * VectorIndex#removeAll} batch, as a forget of a subject issues it, then {@link
 * VectorIndex#purgeResidue} while the index reports residue) against a new index built from the
 * survivors ({@code rebuild}: every survivor added on one thread, IVF-PQ trained on them), for HNSW
 * and IVF-PQ.
 *
 * <p>Each invocation starts from a copy of one index built in the trial's set-up (read back from
 * its own stream, so the copy is the same graph or the same lists every time), and each result is
 * checked after it is timed: the removed ordinals are gone; the index's scoped removal proof
 * ({@link VectorIndex#verifyRemoval}) of a repair, or its whole integrity checker over a rebuild,
 * is clean; it holds every survivor; and its recall@10 on the survivors (against an exact scan of
 * them) is within {@link #RECALL_SLACK} of a reference index built fresh from the survivors in the
 * set-up. A result that fails throws, and the run fails with it; so the JIT cannot drop the work,
 * and a repair that loses recall cannot pass as a fast one.
 *
 * <p>Why: a forget repairs the index in place rather than rebuilding it, and this is the measure of
 * whether that choice pays, and keeps recall, at every share removed. The figures are in
 * docs/BENCHMARKS.md ("Forgetting against rebuilding").
 *
 * <p>The default parameters are the quick set, sized for a small shared machine; a larger one is
 * given on the command line, e.g. {@code ./nepenthe jmh RebuildCostBenchmark -p n=100000 -p
 * dim=384}. The data are seeded clustered vectors (L2), seed {@link #SEED}, printed at set-up.
 */
@State(Scope.Benchmark)
public class RebuildCostBenchmark extends RepairOrRebuildBenchmark<VectorIndex> {

    /** The data's seed; the removed ordinals are drawn with {@code SEED + 1}. */
    static final long SEED = 7;

    /** How far below the reference's recall@10 a result may be and still pass. */
    static final double RECALL_SLACK = 0.05;

    /**
     * The HNSW beam of the recall check: narrow, so that a graph a repair left worse connected than
     * a fresh build shows as lost recall (a wide beam finds every neighbour in any of them).
     */
    static final int CHECK_EF = 16;

    private static final int QUERIES = 200;
    private static final int K = 10;

    @Param({"hnsw", "ivfpq"})
    String index;

    @Param({"128"})
    int dim;

    private float[][] data;
    private float[][] queries;
    private VectorIndexFactory factory;
    private IndexConfig config;
    private byte[] built;
    private int[][] truth;
    private double referenceRecall;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        float[][] all = Datasets.clustered(SEED, n + QUERIES, dim, 100, 0.3);
        data = Arrays.copyOf(all, n);
        queries = Arrays.copyOfRange(all, n, n + QUERIES);
        factory =
                ServiceLoader.load(VectorIndexFactory.class).stream()
                        .map(ServiceLoader.Provider::get)
                        .filter(f -> f.kind().equals(index))
                        .findFirst()
                        .orElseThrow(
                                () ->
                                        new IllegalArgumentException(
                                                "index: expected hnsw or ivfpq, got '"
                                                        + index
                                                        + "'"));
        config =
                switch (index) {
                    case "hnsw" ->
                            new IndexConfig(
                                    dim,
                                    Metric.L2,
                                    Map.of(HnswParams.M, "16", HnswParams.EF_CONSTRUCTION, "100"),
                                    42L);
                    // Trained on the whole collection (FAISS's habit too), so a rebuild trains on
                    // the survivors.
                    default -> {
                        IvfPqParams p = IvfPqParams.forSize(n, dim).trainSize(n).build();
                        yield new IndexConfig(dim, Metric.L2, p.toIndexSpec().params(), 42L);
                    }
                };
        int count = drawRemoved(SEED + 1);
        System.out.printf(
                Locale.ROOT,
                "%nrebuild-cost data: seed %d, n=%d, d=%d, 100 clusters, spread 0.3, L2;"
                        + " %d removed (seed %d)%n",
                SEED,
                n,
                dim,
                count,
                SEED + 1);

        VectorIndex whole = build(rangeOf(n));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            whole.writeTo(out);
        }
        whole.close();
        built = bytes.toByteArray();

        ExactIndex exact = new ExactIndex(dim, Metric.L2);
        for (int ord : survivors) {
            exact.add(ord, data[ord]);
        }
        truth = new int[QUERIES][];
        for (int q = 0; q < QUERIES; q++) {
            truth[q] = exact.search(queries[q], K).ordinals();
        }
        try (VectorIndex reference = build(survivors)) {
            referenceRecall = recall(reference);
        }
        System.out.printf(
                Locale.ROOT,
                "rebuild-cost reference: %s built from the %d survivors, recall@%d %.4f%n",
                index,
                survivors.length,
                K,
                referenceRecall);
    }

    @Setup(Level.Invocation)
    public void copyBuilt() throws IOException {
        if (how.equals("repair")) {
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(built))) {
                input = factory.readFrom(config, in);
            }
        }
    }

    @Benchmark
    public VectorIndex forget() {
        if (how.equals("rebuild")) {
            result = build(survivors);
        } else {
            input.removeAll(gone);
            while (input.hasResidue()) {
                input.purgeResidue();
            }
            result = input;
        }
        return result;
    }

    @Override
    void release(VectorIndex result) {
        result.close();
    }

    @Override
    void verify() {
        for (int ord : gone) {
            if (result.contains(ord)) {
                throw new IllegalStateException(
                        how + " of " + index + ": removed ordinal " + ord + " is still live");
            }
        }
        if (result.size() != survivors.length) {
            throw new IllegalStateException(
                    how
                            + " of "
                            + index
                            + ": expected "
                            + survivors.length
                            + " live vectors, found "
                            + result.size());
        }
        // The repair's scoped proof, or the whole checker over a rebuild (outside the timed
        // part).
        IntegrityReport proof =
                how.equals("repair") ? result.verifyRemoval(gone) : result.verifyIntegrity();
        if (!proof.isClean()) {
            throw new IllegalStateException(
                    how + " of " + index + ": the integrity check failed: " + proof);
        }
        double r = recall(result);
        if (r < referenceRecall - RECALL_SLACK) {
            throw new IllegalStateException(
                    String.format(
                            Locale.ROOT,
                            "%s of %s: recall@%d %.4f, more than %.2f"
                                    + " below the fresh build's %.4f",
                            how,
                            index,
                            K,
                            r,
                            RECALL_SLACK,
                            referenceRecall));
        }
    }

    /**
     * For the check's control (tests): the result holds the right ordinals, but each with the
     * vector of the ordinal after it, as an index that mixed up its rows would.
     */
    void shiftTheVectorsForTheControl() {
        VectorIndex ix = factory.create(config);
        for (int ord : survivors) {
            ix.add(ord, data[(ord + 1) % n]);
        }
        ix.afterBulkLoad();
        if (ix instanceof IvfPqIndex ivf && !ivf.isTrained()) {
            ivf.train();
        }
        result = ix;
    }

    /** An index of the configured kind holding {@code ordinals}, trained when it is IVF-PQ. */
    private VectorIndex build(int[] ordinals) {
        VectorIndex ix = factory.create(config);
        for (int ord : ordinals) {
            ix.add(ord, data[ord]);
        }
        ix.afterBulkLoad();
        if (ix instanceof IvfPqIndex ivf && !ivf.isTrained()) {
            ivf.train();
        }
        return ix;
    }

    private double recall(VectorIndex ix) {
        SearchParams p =
                index.equals("hnsw")
                        ? SearchParams.of(HnswParams.EF_SEARCH, CHECK_EF)
                        : SearchParams.DEFAULTS;
        long hits = 0;
        for (int q = 0; q < QUERIES; q++) {
            int[] got = ix.search(queries[q], K, Accept.ALL, p).ordinals();
            for (int t : truth[q]) {
                for (int g : got) {
                    if (g == t) {
                        hits++;
                        break;
                    }
                }
            }
        }
        return hits / (double) (QUERIES * K);
    }
}
