package dev.nepenthe.ivfpq;

import dev.nepenthe.core.index.IndexConfig;
import java.util.Set;

/**
 * The parameters of an IVF-PQ index, parsed and checked once.
 *
 * @param nlist inverted lists (coarse centroids); more lists make each probe cheaper and need a
 *     larger training sample
 * @param m PQ subspaces; each code is m bytes, so m sets the memory per vector; must divide the dimension
 * @param nbits bits per sub-code (ksub = 2^nbits centroids per subspace, 8 at most: one byte)
 * @param trainSize vectors the index buffers (searched exactly) before it trains itself, and the
 *     largest sample a (re)training uses; k-means cost grows linearly with it
 * @param iterations Lloyd iterations of every k-means (coarse and each subspace)
 * @param nprobe default lists probed per query (per-query {@code nprobe} overrides)
 * @param rerank default depth of exact re-ranking: that many PQ candidates are re-scored from
 *     the full vectors; 0 returns PQ scores (per-query {@code rerank} overrides)
 * @param autoRetrain true: once a removal call takes the removed share of the training sample past
 *     {@code driftLimit}, the index retrains before the call returns (a training's cost, once);
 *     false: only {@link IvfPqIndex#retrain()} retrains. Removals never need a retrain to forget:
 *     the codebooks are exact means of the surviving training vectors either way.
 * @param driftLimit percent of the training sample that may be removed before {@code autoRetrain}
 *     retrains: past it, the codebooks are means over too few of the vectors they encode
 */
public record IvfPqParams(int nlist, int m, int nbits, int trainSize, int iterations, int nprobe, int rerank,
        boolean autoRetrain, int driftLimit) {

    public static final Set<String> NAMES = Set.of("nlist", "m", "nbits", "trainSize", "iterations", "nprobe",
            "rerank", "autoRetrain", "driftLimit");

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
        if (nprobe > nlist) {
            nprobe = nlist; // probing more lists than exist means probing all of them
        }
    }

    private static void check(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(IvfPqIndex.KIND + " index: parameter '" + name
                    + "' expected an integer in [" + min + ", " + max + "], got " + value);
        }
    }

    public int ksub() {
        return 1 << nbits;
    }

    /** The smallest number of vectors a training needs: one per coarse centroid and per sub-centroid. */
    public int minTrainingVectors() {
        return Math.max(nlist, ksub());
    }

    static IvfPqParams from(IndexConfig config) {
        String kind = IvfPqIndex.KIND;
        config.requireKnown(kind, NAMES);
        int dim = config.dimension();
        int nlist = config.intParam(kind, "nlist", 256, 1, 1 << 16);
        int m = config.intParam(kind, "m", defaultM(dim), 1, dim);
        if (dim % m != 0) {
            throw new IllegalArgumentException(kind + " index: parameter 'm' must divide the dimension " + dim
                    + ", got " + m);
        }
        int nbits = config.intParam(kind, "nbits", 8, 1, 8);
        int minTrain = Math.max(nlist, 1 << nbits);
        int trainSize = config.intParam(kind, "trainSize", Math.max(40 * minTrain, 1), minTrain, Integer.MAX_VALUE);
        int iterations = config.intParam(kind, "iterations", 20, 1, 1000);
        int nprobe = config.intParam(kind, "nprobe", Math.min(16, nlist), 1, nlist);
        int rerank = config.intParam(kind, "rerank", 64, 0, 1 << 20);
        int autoRetrain = config.intParam(kind, "autoRetrain", 1, 0, 1);
        int driftLimit = config.intParam(kind, "driftLimit", DEFAULT_DRIFT_LIMIT, 1, 100);
        return new IvfPqParams(nlist, m, nbits, trainSize, iterations, nprobe, rerank, autoRetrain == 1, driftLimit);
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
