package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.internal.index.BitmapAccept;
import java.lang.System.Logger.Level;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.roaringbitmap.RoaringBitmap;

/**
 * Runs a forget's index calls once on a throwaway index of synthetic vectors, in the background
 * after a large collection opens, so that the first forget in a process runs compiled code.
 *
 * <p>Why: a restarted store's first forget was much slower than the ones after it. The JIT had not
 * yet compiled the repair, the checker and the probe's filtered searches, and the searches it had
 * compiled for queries were recompiled when the repair's scorers reached the same loops. Doing
 * those calls once, on an index of the collection's own kind and parameters, compiles them before a
 * forget needs them (measurements: docs/BENCHMARKS.md, "The first forget after a restart, compiled
 * before it is needed").
 *
 * <p>The throwaway index holds only seeded random vectors and is dropped afterwards; nothing of the
 * collection is read. Once per JVM for each index spec, on a daemon thread at nice 19, and only for
 * a collection of at least {@link #MIN_RECORDS} records (a small collection's forget is quick
 * compiled or not). A failure is logged at debug and changes nothing.
 */
final class IndexWarmUp {

    private static final System.Logger LOG = System.getLogger(IndexWarmUp.class.getName());

    /** Collections smaller than this open without a warm-up. */
    static final int MIN_RECORDS = 50_000;

    /**
     * Vectors in the throwaway index: enough for a few upper layers and for the loops to compile.
     */
    static final int VECTORS = 4_000;

    /** Rounds of removal, check and probe: the JIT compiles a method after it has run a while. */
    static final int ROUNDS = 4;

    /**
     * The knobs of a forget's vector-residue probe (CollectionEraser's PROBE_EF, PROBE_NPROBE and
     * PROBE_RERANK); an index ignores the keys that are not its own.
     */
    private static final SearchParams PROBE =
            new SearchParams(Map.of("efSearch", 512, "nprobe", 64, "rerank", 512));

    private static final Set<String> WARMED = ConcurrentHashMap.newKeySet();

    private IndexWarmUp() {}

    /**
     * Starts the warm-up for {@code spec}'s index on a thread of its own, unless this JVM has
     * warmed that index spec already or the collection holds fewer than {@link #MIN_RECORDS}.
     */
    static void startIfWorthIt(CollectionSpec spec, int records, Supplier<VectorIndex> factory) {
        if (records < MIN_RECORDS
                || !WARMED.add(spec.index() + "/" + spec.metric() + "/" + spec.dimension())) {
            return;
        }
        Thread.ofPlatform()
                .name("nepenthe-index-warm-up")
                .daemon()
                .start(
                        () -> {
                            BackgroundPriority.lowerCurrentThread(19);
                            long started = System.nanoTime();
                            try {
                                run(factory, spec.dimension(), spec.name().hashCode());
                                LOG.log(
                                        Level.DEBUG,
                                        "index warm-up for {0}: {1} ms",
                                        spec.index(),
                                        (System.nanoTime() - started) / 1_000_000);
                            } catch (RuntimeException | LinkageError e) {
                                LOG.log(
                                        Level.DEBUG,
                                        "index warm-up for "
                                                + spec.index()
                                                + " failed; the first forget runs cold",
                                        e);
                            }
                        });
    }

    /**
     * The forget's index calls on a throwaway index: bulk adds, searches with and without a filter,
     * removals, the removal check, the residue purge and the probe's filtered searches. Returns the
     * last removal check's report (for tests).
     */
    static IntegrityReport run(Supplier<VectorIndex> factory, int dim, long seed) {
        VectorIndex idx = factory.get();
        try {
            SplittableRandom rnd = new SplittableRandom(seed);
            // Vectors around a few centres, as real collections are, so searches and repairs
            // walk a graph with structure rather than uniform noise.
            float[][] centres = new float[16][];
            for (int c = 0; c < centres.length; c++) {
                centres[c] = randomUnit(rnd, dim, null, 0);
            }
            float[][] vectors = new float[VECTORS][];
            for (int i = 0; i < VECTORS; i++) {
                vectors[i] = randomUnit(rnd, dim, centres[i % centres.length], 0.5);
                idx.add(i, vectors[i]);
            }
            idx.afterBulkLoad();
            RoaringBitmap live = new RoaringBitmap();
            live.add(0L, VECTORS);
            IntegrityReport report = null;
            int perRound = VECTORS / (4 * ROUNDS);
            for (int round = 0; round < ROUNDS; round++) {
                for (int q = 0; q < 50; q++) {
                    idx.search(
                            vectors[rnd.nextInt(VECTORS)], 10, Accept.ALL, SearchParams.DEFAULTS);
                }
                int[] removed = new int[perRound];
                for (int i = 0; i < perRound; i++) {
                    removed[i] = round * perRound + i;
                    live.remove(removed[i]);
                }
                idx.removeAll(removed);
                if (idx.hasResidue()) {
                    idx.purgeResidue();
                }
                report = idx.verifyRemoval(removed);
                Accept accept = new BitmapAccept(live.clone());
                for (int ordinal : removed) {
                    idx.search(vectors[ordinal], 64, accept, PROBE);
                }
            }
            return report;
        } finally {
            idx.close();
        }
    }

    /** A unit vector: uniform on the sphere, or {@code centre} plus noise of {@code spread}. */
    private static float[] randomUnit(
            SplittableRandom rnd, int dim, float[] centre, double spread) {
        float[] v = new float[dim];
        double norm = 0;
        double noise = centre == null ? 1 : spread / Math.sqrt(dim);
        for (int i = 0; i < dim; i++) {
            double x = rnd.nextGaussian() * noise + (centre == null ? 0 : centre[i]);
            v[i] = (float) x;
            norm += x * x;
        }
        float inv = (float) (1 / Math.sqrt(norm));
        for (int i = 0; i < dim; i++) {
            v[i] *= inv;
        }
        return v;
    }
}
