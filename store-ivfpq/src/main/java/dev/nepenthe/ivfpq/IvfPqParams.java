package dev.nepenthe.ivfpq;

import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.index.IndexConfig;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The parameters of an IVF-PQ index, parsed and checked once.
 *
 * @param nlist inverted lists (coarse centroids); more lists make each probe cheaper and need a
 *     larger training sample
 * @param m PQ subspaces; each code is m bytes, so m sets the memory per vector; must divide the
 *     dimension
 * @param nbits bits per sub-code (ksub = 2^nbits centroids per subspace, 8 at most: one byte)
 * @param trainSize vectors the index buffers (searched exactly) before it trains itself, and the
 *     largest sample a (re)training uses; k-means cost grows linearly with it
 * @param iterations Lloyd iterations of every k-means (coarse and each subspace)
 * @param nprobe default lists probed per query (per-query {@code nprobe} overrides)
 * @param rerank default depth of exact re-ranking: that many PQ candidates are re-scored from the
 *     full vectors; 0 returns PQ scores (per-query {@code rerank} overrides)
 * @param autoRetrain true: once a removal call takes the removed share of the training sample past
 *     {@code driftLimit}, the index starts a retrain in the background (a training's CPU, once;
 *     writers are not held for it); false: only {@link IvfPqIndex#retrain()} retrains. Removals
 *     never need a retrain to forget: the codebooks are exact means of the surviving training
 *     vectors either way.
 * @param driftLimit percent of the training sample that may be removed before {@code autoRetrain}
 *     retrains: past it, the codebooks are means over too few of the vectors they encode
 * @param codes how list entries are coded: {@link Codes#PQ} (m bytes against trained sub-codebooks)
 *     or {@link Codes#OSQ} (per-vector scalar codes of {@code bits} bits per dimension relative to
 *     the list's centre after a seeded rotation: no trained codebook, the only data-dependent part
 *     is the centre, the mean of live members)
 * @param bits bits per dimension of OSQ codes, 1 to 8 (ignored for PQ); an entry is {@code bits *
 *     ceil(dim / 64) * 8 + 16} bytes
 */
public record IvfPqParams(
        int nlist,
        int m,
        int nbits,
        int trainSize,
        int iterations,
        int nprobe,
        int rerank,
        boolean autoRetrain,
        int driftLimit,
        Codes codes,
        int bits) {

    /** The code types of an IVF index's list entries. */
    public enum Codes {
        /** Product quantization: trained sub-codebooks, m bytes per vector. */
        PQ,
        /** Optimized scalar quantization relative to the list's centre after a random rotation. */
        OSQ
    }

    public static final Set<String> NAMES =
            Set.of(
                    "nlist",
                    "m",
                    "nbits",
                    "trainSize",
                    "iterations",
                    "nprobe",
                    "rerank",
                    "autoRetrain",
                    "driftLimit",
                    "codes",
                    "bits");

    /** The default {@code driftLimit}: see docs/FORGET.md for the recall it keeps. */
    public static final int DEFAULT_DRIFT_LIMIT = 50;

    public IvfPqParams {
        check("nlist", nlist, 1, 1 << 16);
        check("m", m, 1, Integer.MAX_VALUE);
        check("nbits", nbits, 1, 8);
        check("trainSize", trainSize, Math.max(nlist, 1 << nbits), Integer.MAX_VALUE);
        check("iterations", iterations, 1, 1000);
        check("nprobe", nprobe, 1, Integer.MAX_VALUE);
        check("rerank", rerank, 0, Integer.MAX_VALUE);
        check("driftLimit", driftLimit, 1, 100);
        check("bits", bits, 1, 8);
        if (codes == null) {
            throw new IllegalArgumentException(
                    IvfPqIndex.KIND + " index: parameter 'codes' expected pq or osq, got null");
        }
        if (nprobe > nlist) {
            nprobe = nlist; // probing more lists than exist means probing all of them
        }
    }

    private static void check(String name, int value, int min, int max) {
        IndexConfig.checkRange(IvfPqIndex.KIND, name, value, min, max);
    }

    public int ksub() {
        return 1 << nbits;
    }

    /**
     * The smallest number of vectors a training needs: one per coarse centroid and, for PQ, per
     * sub-centroid.
     */
    public int minTrainingVectors() {
        return codes == Codes.PQ ? Math.max(nlist, ksub()) : nlist;
    }

    static IvfPqParams from(IndexConfig config) {
        String kind = IvfPqIndex.KIND;
        config.requireKnown(kind, NAMES);
        int dim = config.dimension();
        int nlist = config.intParam(kind, "nlist", 256, 1, 1 << 16);
        int m = config.intParam(kind, "m", defaultM(dim), 1, dim);
        if (dim % m != 0) {
            throw new IllegalArgumentException(
                    kind + " index: parameter 'm' must divide the dimension " + dim + ", got " + m);
        }
        Builder b = new Builder();
        b.nlist = nlist;
        b.m = m;
        b.nbits = config.intParam(kind, "nbits", 8, 1, 8);
        int minTrain = Math.max(nlist, 1 << b.nbits);
        b.trainSize =
                config.intParam(
                        kind, "trainSize", Math.max(40 * minTrain, 1), minTrain, Integer.MAX_VALUE);
        b.iterations = config.intParam(kind, "iterations", 20, 1, 1000);
        b.nprobe = config.intParam(kind, "nprobe", Math.min(16, nlist), 1, nlist);
        b.rerank = config.intParam(kind, "rerank", 64, 0, 1 << 20);
        b.autoRetrain = config.intParam(kind, "autoRetrain", 1, 0, 1) == 1;
        b.driftLimit = config.intParam(kind, "driftLimit", DEFAULT_DRIFT_LIMIT, 1, 100);
        String codeName = config.params().getOrDefault("codes", "pq");
        b.codes =
                switch (codeName) {
                    case "pq" -> Codes.PQ;
                    case "osq" -> Codes.OSQ;
                    default ->
                            throw new IllegalArgumentException(
                                    kind
                                            + " index: parameter 'codes' expected pq or osq, got '"
                                            + codeName
                                            + "'");
                };
        b.bits = config.intParam(kind, "bits", ScalarCodes.DEFAULT_BITS, 1, 8);
        return b.build();
    }

    /**
     * The parameters as the string map an {@link dev.nepenthe.core.IndexSpec} carries, every one
     * named, so a collection created with them does not depend on this version's defaults.
     *
     * @return the index spec of kind {@value IvfPqIndex#KIND}
     */
    public IndexSpec toIndexSpec() {
        Map<String, String> map = new LinkedHashMap<>();
        map.put("nlist", Integer.toString(nlist));
        map.put("m", Integer.toString(m));
        map.put("nbits", Integer.toString(nbits));
        map.put("trainSize", Integer.toString(trainSize));
        map.put("iterations", Integer.toString(iterations));
        map.put("nprobe", Integer.toString(nprobe));
        map.put("rerank", Integer.toString(rerank));
        map.put("autoRetrain", autoRetrain ? "1" : "0");
        map.put("driftLimit", Integer.toString(driftLimit));
        map.put("codes", codes.name().toLowerCase(Locale.ROOT));
        map.put("bits", Integer.toString(bits));
        return IndexSpec.of(IvfPqIndex.KIND, map);
    }

    /**
     * A builder starting from defaults that fit {@code expectedVectors} vectors of {@code dim}
     * floats: {@code nlist} the power of two nearest {@code sqrt(expectedVectors)} (lists of about
     * {@code sqrt(n)} vectors, so a probe and the coarse ranking cost about the same), between 16
     * and 65,536; {@code m} for sub-vectors of 8 floats (one byte codes eight floats); 8 bits; a
     * training sample of 40 vectors per centroid (fewer leave the k-means centroids noisy); 20
     * iterations; {@code nprobe} a sixteenth of the lists; exact re-rank of 64; retraining past
     * half the sample removed. The recall and speed these defaults give are in docs/BENCHMARKS.md.
     *
     * @param expectedVectors how many vectors the collection will hold, roughly (at least 1)
     * @param dim the vectors' dimension
     * @return a builder; every setting can be changed before {@link Builder#build()}
     * @throws IllegalArgumentException if either is not positive
     */
    public static Builder forSize(long expectedVectors, int dim) {
        if (expectedVectors < 1 || dim < 1) {
            throw new IllegalArgumentException(
                    "ivfpq params: expected a positive size and dimension, got size="
                            + expectedVectors
                            + ", dim="
                            + dim);
        }
        int nlist =
                Integer.highestOneBit(
                        (int)
                                Math.max(
                                        1,
                                        Math.min(
                                                1 << 16,
                                                Math.round(Math.sqrt((double) expectedVectors)))));
        if (nlist * 1.5 < Math.sqrt((double) expectedVectors)) {
            nlist *= 2; // nearest power of two, not the one below
        }
        nlist = Math.max(16, Math.min(1 << 16, nlist));
        Builder b = new Builder();
        b.nlist = nlist;
        b.m = defaultM(dim);
        b.trainSize = 40 * Math.max(nlist, 256);
        b.nprobe = Math.max(1, nlist / 16);
        return b;
    }

    /**
     * Named, documented settings (see the record's parameters for what each costs). Start from
     * {@link IvfPqParams#forSize}.
     */
    public static final class Builder {
        private int nlist;
        private int m;
        private int nbits = 8;
        private int trainSize;
        private int iterations = 20;
        private int nprobe;
        private int rerank = 64;
        private boolean autoRetrain = true;
        private int driftLimit = DEFAULT_DRIFT_LIMIT;
        private Codes codes = Codes.PQ;
        private int bits = ScalarCodes.DEFAULT_BITS;

        private Builder() {}

        /**
         * Inverted lists; a probe scans about {@code n / nlist} codes, training costs grow with it.
         */
        public Builder nlist(int v) {
            nlist = v;
            return this;
        }

        /** PQ subspaces: bytes per code; must divide the dimension. */
        public Builder m(int v) {
            m = v;
            return this;
        }

        /** Bits per sub-code, 1 to 8 ({@code 2^nbits} centroids per subspace). */
        public Builder nbits(int v) {
            nbits = v;
            return this;
        }

        /** Vectors to buffer before training, and the largest training sample. */
        public Builder trainSize(int v) {
            trainSize = v;
            return this;
        }

        /** Lloyd iterations per k-means; training time is linear in it. */
        public Builder iterations(int v) {
            iterations = v;
            return this;
        }

        /** Default lists probed per query: search time is about linear in it. */
        public Builder nprobe(int v) {
            nprobe = v;
            return this;
        }

        /** Default exact re-rank depth (0: PQ scores only). */
        public Builder rerank(int v) {
            rerank = v;
            return this;
        }

        /** Whether crossing {@code driftLimit} retrains by itself (in the background). */
        public Builder autoRetrain(boolean v) {
            autoRetrain = v;
            return this;
        }

        /** Percent of the training sample removed before an automatic retrain, 1 to 100. */
        public Builder driftLimit(int v) {
            driftLimit = v;
            return this;
        }

        /** The code type of list entries (see the record's {@code codes}). */
        public Builder codes(Codes v) {
            codes = v;
            return this;
        }

        /**
         * Bits per dimension of OSQ codes, 1 to 8: memory and scan time grow with it, error
         * shrinks.
         */
        public Builder bits(int v) {
            bits = v;
            return this;
        }

        /**
         * The parameters, checked.
         *
         * @throws IllegalArgumentException naming the first setting out of range
         */
        public IvfPqParams build() {
            return new IvfPqParams(
                    nlist,
                    m,
                    nbits,
                    trainSize,
                    iterations,
                    nprobe,
                    rerank,
                    autoRetrain,
                    driftLimit,
                    codes,
                    bits);
        }
    }

    /** Sub-vectors of 8 floats when the dimension allows, else 4, 2, 1. */
    static int defaultM(int dim) {
        for (int dsub : new int[] {8, 4, 2}) {
            if (dim % dsub == 0 && dim / dsub >= 1) {
                return dim / dsub;
            }
        }
        return dim;
    }
}
