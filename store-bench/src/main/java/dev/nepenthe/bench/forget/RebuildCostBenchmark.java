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
import java.util.ServiceLoader;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

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
 * <p>The default parameters are the quick set (minutes on two cores); a larger one is given on the
 * command line, e.g. {@code ./nepenthe jmh RebuildCostBenchmark -p n=100000 -p dim=384}. The data
 * are seeded clustered vectors (L2), seed {@link #SEED}, printed at set-up.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@State(Scope.Benchmark)
@Warmup(iterations = 2)
@Measurement(iterations = 5)
@Fork(1)
public class RebuildCostBenchmark {

    /** The data's seed; the removed ordinals are drawn with {@code SEED + 1}. */
    static final long SEED = 7;

    /** How far below the reference's recall@10 a result may be and still pass. */
    static final double RECALL_SLACK = 0.05;

    /**
     * The HNSW beam of the recall check: narrow, so that a graph a repair left worse connected than
     * a fresh build shows as lost recall (at 64 every graph here finds all ten).
     */
    static final int CHECK_EF = 16;

    private static final int QUERIES = 200;
    private static final int K = 10;

    @Param({"hnsw", "ivfpq"})
    String index;

    @Param({"20000"})
    int n;

    @Param({"128"})
    int dim;

    /** How many to remove: a count of records, or a percentage of {@code n}. */
    @Param({"1", "0.1%", "1%", "10%"})
    String removed;

    @Param({"repair", "rebuild"})
    String how;

    private float[][] data;
    private float[][] queries;
    private VectorIndexFactory factory;
    private IndexConfig config;
    private byte[] built;
    private int[] gone;
    private int[] survivors;
    private int[][] truth;
    private double referenceRecall;

    /**
     * The copy an invocation repairs (for {@code repair}); what the invocation leaves, to check.
     */
    private VectorIndex input;

    private VectorIndex result;

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
                                    java.util.Map.of(
                                            HnswParams.M, "16", HnswParams.EF_CONSTRUCTION, "100"),
                                    42L);
                    // Trained on the whole collection (FAISS's habit too), so a rebuild trains on
                    // the survivors.
                    default -> {
                        IvfPqParams p = IvfPqParams.forSize(n, dim).trainSize(n).build();
                        yield new IndexConfig(dim, Metric.L2, p.toIndexSpec().params(), 42L);
                    }
                };
        int count = count(removed, n);
        int[][] split = split(n, count, SEED + 1);
        gone = split[0];
        survivors = split[1];
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

    @TearDown(Level.Invocation)
    public void check() {
        try {
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
        } finally {
            result.close();
            result = null;
            input = null;
        }
    }

    /**
     * For the check's control (tests): the invocation's result is its copy with nothing removed.
     */
    void skipTheWorkForTheControl() {
        result = input;
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

    /**
     * How many records a {@code removed} parameter means.
     *
     * @param spec {@code "1"} is one record, {@code "1%"} a hundredth of {@code n} (at least one)
     * @param n the collection's size
     * @return the count, 1 to {@code n - 1}
     * @throws IllegalArgumentException saying what was expected, when {@code spec} is neither or
     *     out of range
     */
    public static int count(String spec, int n) {
        try {
            int c =
                    spec.endsWith("%")
                            ? (int)
                                    Math.max(
                                            1,
                                            Math.round(
                                                    n
                                                            * Double.parseDouble(
                                                                    spec.substring(
                                                                            0, spec.length() - 1))
                                                            / 100))
                            : Integer.parseInt(spec);
            if (c < 1 || c >= n) {
                throw new IllegalArgumentException(
                        "removed: expected between 1 and "
                                + (n - 1)
                                + " records, got "
                                + spec
                                + " ("
                                + c
                                + ")");
            }
            return c;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "removed: expected a count such as 1 or a percentage such as 0.1%, got '"
                            + spec
                            + "'");
        }
    }

    /**
     * {@code count} of the ordinals below {@code n} drawn at random with {@code seed}, and the
     * rest: {removed, survivors}, each ascending.
     */
    static int[][] split(int n, int count, long seed) {
        int[] order = shuffled(n, new SplittableRandom(seed));
        int[] removed = Arrays.copyOf(order, count);
        int[] survivors = Arrays.copyOfRange(order, count, n);
        Arrays.sort(removed);
        Arrays.sort(survivors);
        return new int[][] {removed, survivors};
    }

    private static int[] shuffled(int n, SplittableRandom rnd) {
        int[] order = rangeOf(n);
        for (int i = n - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    /** 0 to {@code n - 1}, ascending. */
    static int[] rangeOf(int n) {
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = i;
        }
        return out;
    }
}
