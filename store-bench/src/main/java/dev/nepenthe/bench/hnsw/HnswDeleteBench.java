package dev.nepenthe.bench.hnsw;

import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.hnsw.HnswParams;
import java.io.IOException;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import org.apache.lucene.util.FixedBitSet;
import org.roaringbitmap.RoaringBitmap;

/**
 * What a real delete costs and what it keeps: removes a growing random fraction of a built
 * Nepenthe HNSW (cumulative stages), and after each stage reports the mean time per removal
 * with repair, recall@k on the survivors against (a) a fresh build over the same survivors and
 * (b) Lucene's behaviour, where deleted documents stay in the graph and are filtered by the
 * live-docs bits until a merge (hnswlib's markDelete works the same way), the integrity
 * checker's counts, and the time of the repairs against the time of a rebuild.
 */
public final class HnswDeleteBench {

    static final String USAGE = "hnsw-delete [n=100000] [dim=384] [queries=500] [m=16] [efc=100] [k=10]"
            + " [clusters=100] [spread=0.3] [seed=7] [stages=0.001,0.01,0.1,0.5] [efs=32,64,128] [threads=2]"
            + " [batch=1] [lucene=true] [repairEf=48]";

    private HnswDeleteBench() {}

    private static void warmUp(float[][] data, int m, int efc, int threads) {
        int n = Math.min(data.length, 5_000);
        NepentheEngine warm = new NepentheEngine(m, efc, threads);
        warm.build(Arrays.copyOf(data, n));
        for (int i = 0; i < n / 2; i++) {
            warm.index.remove(i);
        }
        warm.index.removeAll(java.util.stream.IntStream.range(n / 2, n / 2 + 100).toArray());
        for (int i = 0; i < 200; i++) {
            warm.search(data[n - 1 - i], 10, 64);
        }
    }

    public static void main(String[] argv) throws IOException {
        BenchArgs a = new BenchArgs(argv, USAGE);
        int n = a.i("n", 100_000);
        int dim = a.i("dim", 384);
        int nq = a.i("queries", 500);
        int m = a.i("m", 16);
        int efc = a.i("efc", 100);
        int k = a.i("k", 10);
        int threads = a.i("threads", 2);
        int batch = a.i("batch", 1);
        double[] stages = a.doubles("stages", new double[] {0.001, 0.01, 0.1, 0.5});
        int[] efs = a.ints("efs", new int[] {32, 64, 128});
        BenchData d = new BenchData(a.i("seed", 7), n, nq, dim, a.i("clusters", 100), a.d("spread", 0.3));

        System.out.printf(Locale.ROOT, "### HNSW delete with repair: n=%d, d=%d, L2, clustered, M=%d, efConstruction=%d,"
                + " %d queries, recall@%d, repairEf=%d, removals %s%n%n", n, dim, m, efc, nq, k, a.i("repairEf", 48),
                batch == 1 ? "one at a time" : "in batches of " + batch);
        System.out.println("Machine: " + BenchData.machine() + "\n");

        // Warm-up: the removal path is compiled on a throw-away index first, so the first stage
        // does not time the interpreter.
        warmUp(d.data, m, efc, threads);
        HnswParams params = HnswParams.of(m, efc).withRepairEf(a.i("repairEf", HnswParams.of(m, efc).repairEf()));
        NepentheEngine ours = new NepentheEngine(params, threads);
        long t0 = System.nanoTime();
        ours.build(d.data);
        double buildSeconds = (System.nanoTime() - t0) / 1e9;
        boolean withLucene = Boolean.parseBoolean(a.s("lucene", "true"));
        LuceneEngine lucene = withLucene ? new LuceneEngine(m, efc) : null;
        if (withLucene) {
            lucene.build(d.data);
        }
        System.err.printf(Locale.ROOT, "built: nepenthe %.1f s (%d threads)%n", buildSeconds, threads);

        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        SplittableRandom rnd = new SplittableRandom(11);
        for (int i = n - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        RoaringBitmap live = new RoaringBitmap();
        live.add(0L, n);
        FixedBitSet liveBits = new FixedBitSet(n);
        liveBits.set(0, n);
        if (withLucene) {
            lucene.liveDocs = liveBits;
        }

        StringBuilder cost = new StringBuilder("| removed (cumulative) | removals this stage | mean ms / removal |"
                + " p50 ms | p99 ms | repair total (s) | rebuild of survivors (s, " + threads + " threads) |"
                + " repair / rebuild | unreachable | edges to removed | lists re-selected |\n"
                + "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        StringBuilder rec = new StringBuilder("| removed | efSearch | repaired (ours) | rebuilt (ours) |"
                + " repaired - rebuilt (points) | Lucene, deletes filtered |\n|---:|---:|---:|---:|---:|---:|\n");
        int removed = 0;
        for (double stage : stages) {
            int target = (int) Math.round(n * stage);
            int count = target - removed;
            if (count <= 0) {
                continue;
            }
            long listsBefore = ours.index.repairCounts()[0];
            long[] times = new long[(count + batch - 1) / batch];
            int ti = 0;
            while (removed < target) {
                int[] b = Arrays.copyOfRange(order, removed, Math.min(target, removed + batch));
                long s = System.nanoTime();
                if (b.length == 1) {
                    ours.index.remove(b[0]);
                } else {
                    ours.index.removeAll(b);
                }
                times[ti++] = System.nanoTime() - s;
                for (int o : b) {
                    live.remove(o);
                    liveBits.clear(o);
                }
                removed += b.length;
            }
            long total = Arrays.stream(times).sum();
            long[] sorted = times.clone();
            Arrays.sort(sorted);
            double perRemoval = total / 1e6 / count;
            IntegrityReport report = ours.index.verifyIntegrity();

            NepentheEngine fresh = new NepentheEngine(params, threads);
            float[][] survivors = new float[live.getCardinality()][];
            int[] survivorOrd = live.toArray();
            for (int i = 0; i < survivorOrd.length; i++) {
                survivors[i] = d.data[survivorOrd[i]];
            }
            long r0 = System.nanoTime();
            fresh.build(survivors);
            double rebuild = (System.nanoTime() - r0) / 1e9;
            cost.append(String.format(Locale.ROOT, "| %.1f%% (%d) | %d | %.3f | %.3f | %.3f | %.2f | %.1f | %.3f | %d | %d | %d |%n",
                    100.0 * removed / n, removed, count, perRemoval, sorted[sorted.length / 2] / 1e6 / batch,
                    sorted[(int) Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] / 1e6 / batch,
                    total / 1e9, rebuild, total / 1e9 / rebuild, report.violations("unreachable-on-layer-0"),
                    report.violations("list-holds-removed-or-free-slot"), ours.index.repairCounts()[0] - listsBefore));

            int[][] truth = d.truth(k, live);
            for (int ef : efs) {
                int[][] gotOurs = new int[nq][];
                int[][] gotFresh = new int[nq][];
                int[][] gotLucene = new int[nq][];
                for (int q = 0; q < nq; q++) {
                    gotOurs[q] = ours.search(d.queries[q], k, ef);
                    int[] f = fresh.search(d.queries[q], k, ef);
                    for (int i = 0; i < f.length; i++) {
                        f[i] = survivorOrd[f[i]];
                    }
                    gotFresh[q] = f;
                    gotLucene[q] = withLucene ? lucene.search(d.queries[q], k, ef) : new int[0];
                }
                double ro = BenchData.recall(truth, gotOurs);
                double rf = BenchData.recall(truth, gotFresh);
                String rl = withLucene ? String.format(Locale.ROOT, "%.4f", BenchData.recall(truth, gotLucene)) : "not run";
                rec.append(String.format(Locale.ROOT, "| %.1f%% | %d | %.4f | %.4f | %+.2f | %s |%n", 100.0 * removed / n,
                        ef, ro, rf, 100 * (ro - rf), rl));
            }
            System.err.printf(Locale.ROOT, "stage %.3f done: %.3f ms per removal, rebuild %.1f s%n", stage, perRemoval, rebuild);
        }
        System.out.printf(Locale.ROOT, "Initial build: %.1f s with %d threads.%n%n", buildSeconds, threads);
        System.out.println(cost);
        System.out.println(rec);
    }
}
