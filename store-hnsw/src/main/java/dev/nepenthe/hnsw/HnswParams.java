package dev.nepenthe.hnsw;

import dev.nepenthe.core.index.IndexConfig;
import java.util.Locale;
import java.util.Set;
import java.util.StringJoiner;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Build and search settings of an HNSW index.
 *
 * @param m neighbours per node on the upper layers (2M on layer 0). Larger M raises recall and
 *     memory (4 bytes per edge, plus as much again for the reverse lists) and slows inserts
 * @param efConstruction beam width while inserting: larger builds a better graph, linearly slower
 * @param efSearch default beam width of a query (per query: {@code SearchParams "efSearch"});
 *     larger raises recall and costs proportionally more vector comparisons
 * @param levelMultiplier mL: a node's level is floor(-ln(U) * mL); 1/ln(M) is the paper's choice
 * @param repairEf beam width of the search around a removed node whose result is the candidate pool
 *     for every list that linked to it; larger repairs closer to a rebuild, at more cost per delete
 *     (one search plus one comparison per pool member and affected list)
 * @param seed seeds the level draw (levels are a hash of seed and ordinal, so builds repeat)
 * @param quantization what a search's walk scores: {@link Quantization#NONE} the float vectors,
 *     {@link Quantization#INT8} per-vector int8 codes, re-ranked exactly from the floats before
 *     anything is returned. Building and repairing always score the floats, so the graph is the
 *     same either way. INT8 costs {@code ceil(dim / 4) * 4 + 16} bytes per vector on top of the
 *     {@code 4 * dim} of the floats (400 + 1536 at d = 384), and holds no trained state
 * @param rerank how many of the walk's best candidates (by code score) a quantized search re-scores
 *     exactly (per query: {@code SearchParams "rerank"}); 0, the default, re-scores twice k, which
 *     on real embeddings kept the recall of re-scoring the whole beam at every efSearch; a value of
 *     at least efSearch re-scores the whole beam. Never fewer than k, never more than the beam;
 *     ignored without quantization
 * @param storage where the float vectors (and int8 codes) live: {@link VectorStorage#HEAP} (the
 *     default, the fastest search) or {@link VectorStorage#OFF_HEAP} (outside the Java heap, no
 *     2^31-float bound; see docs/STORAGE.md, "Memory"). Not part of the index file: chosen at each
 *     open
 */
public record HnswParams(
        int m,
        int efConstruction,
        int efSearch,
        double levelMultiplier,
        int repairEf,
        long seed,
        Quantization quantization,
        int rerank,
        VectorStorage storage) {

    public static final String M = "M";
    public static final String EF_CONSTRUCTION = "efConstruction";
    public static final String EF_SEARCH = "efSearch";
    public static final String LEVEL_MULTIPLIER = "levelMultiplier";
    public static final String REPAIR_EF = "repairEf";
    public static final String QUANTIZATION = "quantization";
    public static final String RERANK = "rerank";
    public static final String VECTORS = "vectors";
    static final Set<String> NAMES =
            Set.of(
                    M,
                    EF_CONSTRUCTION,
                    EF_SEARCH,
                    LEVEL_MULTIPLIER,
                    REPAIR_EF,
                    QUANTIZATION,
                    RERANK,
                    VECTORS);

    /**
     * Where the float vectors live. Off the heap, a graph's vectors are one native segment counted
     * against {@code -XX:MaxDirectMemorySize} instead of the heap, and a search scores them without
     * copying; a float search is somewhat slower there once the vectors outgrow the caches, while a
     * quantized search, which walks the codes and re-scores a few floats, is not (figures:
     * docs/BENCHMARKS.md, "HNSW vectors off the heap").
     */
    public enum VectorStorage {
        /** One float array on the Java heap. */
        HEAP,
        /** One native memory segment outside the Java heap (and one for the int8 codes, if any). */
        OFF_HEAP;

        /** The value of the {@code vectors} parameter that selects this storage. */
        public String paramValue() {
            return paramValueOf(this);
        }

        /**
         * The storage a parameter value names.
         *
         * @throws IllegalArgumentException naming the accepted values and the one given
         */
        public static VectorStorage fromParam(String value) {
            return named(values(), VectorStorage::paramValue, VECTORS, value);
        }
    }

    /** A constant's parameter value: its name in lower case, without underscores. */
    private static String paramValueOf(Enum<?> constant) {
        return constant.name().toLowerCase(Locale.ROOT).replace("_", "");
    }

    /**
     * The constant whose parameter value is {@code value}.
     *
     * @throws IllegalArgumentException naming the parameter, the accepted values and the one given
     */
    private static <E extends Enum<E>> E named(
            E[] constants, Function<E, String> paramValue, String param, String value) {
        StringJoiner accepted = new StringJoiner(" or ");
        for (E e : constants) {
            if (paramValue.apply(e).equals(value)) {
                return e;
            }
            accepted.add(paramValue.apply(e));
        }
        throw new IllegalArgumentException(
                HnswIndex.KIND
                        + " index: parameter '"
                        + param
                        + "' expected "
                        + accepted
                        + ", got '"
                        + value
                        + "'");
    }

    /** What the walk of a search scores (see {@link HnswParams#quantization()}). */
    public enum Quantization {
        /** The float vectors: every score is exact. */
        NONE,
        /**
         * Per-vector int8 codes (one signed byte per dimension on the vector's own scale, plus four
         * floats of corrections), scored with integer kernels; the best candidates are re-scored
         * from the floats.
         */
        INT8;

        /** The value of the {@code quantization} parameter that selects this mode. */
        public String paramValue() {
            return paramValueOf(this);
        }

        /**
         * The mode a parameter value names.
         *
         * @throws IllegalArgumentException naming the accepted values and the one given
         */
        public static Quantization fromParam(String value) {
            return named(values(), Quantization::paramValue, QUANTIZATION, value);
        }
    }

    public HnswParams {
        if (m < 2 || m > 256) {
            throw new IllegalArgumentException("hnsw index: M expected in [2, 256], got " + m);
        }
        if (efConstruction < 1 || efSearch < 1 || repairEf < 1) {
            throw new IllegalArgumentException(
                    "hnsw index: efConstruction, efSearch and repairEf expected >= 1, got "
                            + efConstruction
                            + ", "
                            + efSearch
                            + ", "
                            + repairEf);
        }
        if (!(levelMultiplier > 0 && levelMultiplier <= 10)) {
            throw new IllegalArgumentException(
                    "hnsw index: levelMultiplier expected in (0, 10], got " + levelMultiplier);
        }
        if (quantization == null) {
            throw new IllegalArgumentException(
                    "hnsw index: quantization expected none or int8, got null");
        }
        if (storage == null) {
            throw new IllegalArgumentException(
                    "hnsw index: vectors expected heap or offheap, got null");
        }
        if (rerank < 0) {
            throw new IllegalArgumentException(
                    "hnsw index: rerank expected >= 0 (0: twice k), got " + rerank);
        }
    }

    /** Float search (no quantization), as every index was before quantization existed. */
    public HnswParams(
            int m,
            int efConstruction,
            int efSearch,
            double levelMultiplier,
            int repairEf,
            long seed) {
        this(
                m,
                efConstruction,
                efSearch,
                levelMultiplier,
                repairEf,
                seed,
                Quantization.NONE,
                0,
                VectorStorage.HEAP);
    }

    /**
     * M = 16, efConstruction = 100, efSearch = 64, mL = 1/ln(M), repairEf = 48, no quantization.
     */
    public static HnswParams defaults() {
        return of(16, 100);
    }

    public static HnswParams of(int m, int efConstruction) {
        return new HnswParams(m, efConstruction, 64, 1 / Math.log(m), 48, 42L);
    }

    public HnswParams withEfSearch(int ef) {
        return with(c -> c.efSearch = ef);
    }

    public HnswParams withRepairEf(int ef) {
        return with(c -> c.repairEf = ef);
    }

    public HnswParams withSeed(long s) {
        return with(c -> c.seed = s);
    }

    public HnswParams withQuantization(Quantization q) {
        return with(c -> c.quantization = q);
    }

    public HnswParams withStorage(VectorStorage v) {
        return with(c -> c.storage = v);
    }

    public HnswParams withRerank(int r) {
        return with(c -> c.rerank = r);
    }

    /** A copy of these parameters with {@code change} made: the one place the withers list them. */
    private HnswParams with(Consumer<Copy> change) {
        Copy c = new Copy(this);
        change.accept(c);
        return new HnswParams(
                c.m,
                c.efConstruction,
                c.efSearch,
                c.levelMultiplier,
                c.repairEf,
                c.seed,
                c.quantization,
                c.rerank,
                c.storage);
    }

    /** The components of a copy being made, changed by a wither before the copy is checked. */
    private static final class Copy {
        int m;
        int efConstruction;
        int efSearch;
        double levelMultiplier;
        int repairEf;
        long seed;
        Quantization quantization;
        int rerank;
        VectorStorage storage;

        Copy(HnswParams from) {
            m = from.m;
            efConstruction = from.efConstruction;
            efSearch = from.efSearch;
            levelMultiplier = from.levelMultiplier;
            repairEf = from.repairEf;
            seed = from.seed;
            quantization = from.quantization;
            rerank = from.rerank;
            storage = from.storage;
        }
    }

    /** Parses a collection's parameters; unknown names and out-of-range values are refused. */
    public static HnswParams parse(IndexConfig config) {
        String kind = HnswIndex.KIND;
        config.requireKnown(kind, NAMES);
        int m = config.intParam(kind, M, 16, 2, 256);
        int efc = config.intParam(kind, EF_CONSTRUCTION, 100, 1, 100_000);
        int efs = config.intParam(kind, EF_SEARCH, 64, 1, 100_000);
        double ml = config.doubleParam(kind, LEVEL_MULTIPLIER, 1 / Math.log(m), 1e-3, 10);
        int rep = config.intParam(kind, REPAIR_EF, 48, 1, 100_000);
        Quantization q =
                Quantization.fromParam(config.params().getOrDefault(QUANTIZATION, "none").trim());
        int rerank = config.intParam(kind, RERANK, 0, 0, 100_000);
        return new HnswParams(m, efc, efs, ml, rep, config.seed(), q, rerank, storage(config));
    }

    /** The {@code vectors} parameter of a collection's configuration (heap when absent). */
    static VectorStorage storage(IndexConfig config) {
        config.requireKnown(HnswIndex.KIND, NAMES);
        return VectorStorage.fromParam(config.params().getOrDefault(VECTORS, "heap").trim());
    }
}
