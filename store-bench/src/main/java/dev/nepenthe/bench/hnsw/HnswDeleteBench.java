package dev.nepenthe.bench.hnsw;

import dev.nepenthe.bench.PeerProcess.Line;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.hnsw.HnswParams;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.roaringbitmap.RoaringBitmap;

/**
 * What a real delete costs and what it keeps: removes a growing random fraction of a built Nepenthe
 * HNSW (cumulative stages), and after each stage reports the mean time per removal with repair and
 * its vector comparisons, recall@k on the survivors against (a) fresh builds over the same
 * survivors with {@code rebuildSeeds} different seeds (mean and spread: the build-to-build
 * variance), (b) Lucene as its users delete ({@link LuceneEngine}: an IndexWriter's {@code
 * deleteDocuments} by id term, then a near-real-time reader, no merge: the deleted documents stay
 * in the graph and searches skip them through the live-docs bits), and (c) hnswlib's {@code
 * markDelete} after the same deletes (python3-hnswlib, run last in its own process), the integrity
 * checker's counts, and the time of the repairs against the time of a rebuild. {@code data=gcide}
 * runs on the cached MiniLM embeddings (cosine) instead of synthetic data.
 */
public final class HnswDeleteBench {

    static final String USAGE =
            "hnsw-delete [data=synthetic|lowrank|gcide] [n=100000] [dim=384] [queries=500] [m=16]"
                + " [efc=100] [k=10] [clusters=100] [spread=0.3] [seed=7]"
                + " [stages=0.001,0.01,0.1,0.5] [efs=32,64,128] [threads=2] [batch=1] [lucene=true]"
                + " [hnswlib=true] [repairEf=48] [rebuildSeeds=3] [plot=FILE.png (recall after"
                + " deletes at the middle efSearch)]";

    private HnswDeleteBench() {}

    private static void warmUp(float[][] data, int m, int efc, int threads, Metric metric) {
        int n = Math.min(data.length, 5_000);
        NepentheEngine warm = new NepentheEngine(m, efc, threads, metric);
        warm.build(Arrays.copyOf(data, n));
        for (int i = 0; i < n / 2; i++) {
            warm.index.remove(i);
        }
        warm.index.removeAll(IntStream.range(n / 2, n / 2 + 100).toArray());
        for (int i = 0; i < 200; i++) {
            warm.search(data[n - 1 - i], 10, 64);
        }
    }

    public static void main(String[] argv) throws Exception {
        BenchArgs a = new BenchArgs(argv, USAGE);
        int n = a.i("n", 100_000);
        int nq = a.i("queries", 500);
        int m = a.i("m", 16);
        int efc = a.i("efc", 100);
        int k = a.i("k", 10);
        int threads = a.i("threads", 2);
        int batch = a.i("batch", 1);
        int rebuildSeeds = Math.max(1, a.i("rebuildSeeds", 3));
        double[] stages = a.doubles("stages", new double[] {0.001, 0.01, 0.1, 0.5});
        int[] efs = a.ints("efs", new int[] {32, 64, 128});
        BenchData d = BenchData.from(a, n, nq, 384);

        System.out.printf(
                Locale.ROOT,
                "### HNSW delete with repair: n=%d, %s, M=%d, efConstruction=%d,"
                        + " %d queries, recall@%d, repairEf=%d, removals %s%n%n",
                n,
                d.description,
                m,
                efc,
                nq,
                k,
                a.i("repairEf", 48),
                batch == 1 ? "one at a time" : "in batches of " + batch);
        System.out.println("Machine: " + BenchData.machine() + "\n");
        long started = System.nanoTime();

        // Warm-up: the removal path is compiled on a throw-away index first, so the first stage
        // does not time the interpreter.
        warmUp(d.data, m, efc, threads, d.metric);
        HnswParams params =
                HnswParams.of(m, efc)
                        .withRepairEf(a.i("repairEf", HnswParams.of(m, efc).repairEf()));
        NepentheEngine ours = new NepentheEngine(params, threads, d.metric);
        long t0 = System.nanoTime();
        ours.build(d.data);
        double buildSeconds = (System.nanoTime() - t0) / 1e9;
        boolean withLucene = Boolean.parseBoolean(a.s("lucene", "true"));
        LuceneEngine lucene =
                withLucene
                        ? new LuceneEngine(m, efc, d.metric, LuceneEngine.Format.FLOAT, true)
                        : null;
        if (withLucene) {
            lucene.build(d.data);
        }
        boolean withHnswlib = Boolean.parseBoolean(a.s("hnswlib", "true"));
        PeerRunner hnswlib =
                withHnswlib ? new PeerRunner(a, d.data, d.queries, d.truth(k, null)) : null;
        System.err.printf(
                Locale.ROOT, "built: nepenthe %.1f s (%d threads)%n", buildSeconds, threads);

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

        StringBuilder cost =
                new StringBuilder(
                        "| removed (cumulative) | removals this stage | mean ms / removal | p50 ms"
                                + " | p99 ms | vector comparisons / removal | repair total (s) |"
                                + " rebuild of survivors (s, "
                                + threads
                                + " threads) | repair / rebuild | unreachable | edges to removed |"
                                + " lists re-selected |\n"
                                + "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        List<String[]> recRows = new ArrayList<>();
        List<String> stageLabels = new ArrayList<>();
        // Per stage, for the residue table: removed count; ours: removed ordinals still live, links
        // to removed or free slots; Lucene: deleted documents its segments still hold; hnswlib
        // below.
        List<long[]> residue = new ArrayList<>();
        // Per stage, recall at the plotted efSearch: ours, rebuilt mean, Lucene, hnswlib (NaN until
        // read).
        int plotEf = efs[efs.length / 2];
        List<double[]> plotted = new ArrayList<>();
        int removed = 0;
        int stageNo = 0;
        for (double stage : stages) {
            int target = (int) Math.round(n * stage);
            int count = target - removed;
            if (count <= 0) {
                continue;
            }
            long[] before = ours.index.repairCounts();
            long[] times = new long[(count + batch - 1) / batch];
            int ti = 0;
            int stageStart = removed;
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
                }
                removed += b.length;
            }
            long total = Arrays.stream(times).sum();
            long[] sorted = times.clone();
            Arrays.sort(sorted);
            double perRemoval = total / 1e6 / count;
            long[] after = ours.index.repairCounts();
            IntegrityReport report = ours.index.verifyIntegrity();
            if (withLucene) {
                lucene.delete(Arrays.copyOfRange(order, stageStart, removed));
            }
            long stillLive = 0;
            for (int i = 0; i < removed; i++) {
                if (ours.index.contains(order[i])) {
                    stillLive++;
                }
            }
            residue.add(
                    new long[] {
                        removed,
                        stillLive,
                        report.violations("list-holds-removed-or-free-slot"),
                        withLucene ? lucene.deletedStillIndexed() : -1,
                        -1
                    });

            int[] survivorOrd = live.toArray();
            float[][] survivors = new float[survivorOrd.length][];
            for (int i = 0; i < survivorOrd.length; i++) {
                survivors[i] = d.data[survivorOrd[i]];
            }
            // Rebuilds of the survivors with different seeds (level draws) and thread
            // interleavings: their spread is the build-to-build variance the repair is judged
            // against.
            NepentheEngine[] fresh = new NepentheEngine[rebuildSeeds];
            double[] rebuildTimes = new double[rebuildSeeds];
            for (int r = 0; r < rebuildSeeds; r++) {
                fresh[r] =
                        new NepentheEngine(params.withSeed(params.seed() + r), threads, d.metric);
                long r0 = System.nanoTime();
                fresh[r].build(survivors);
                rebuildTimes[r] = (System.nanoTime() - r0) / 1e9;
            }
            double rebuild = median(rebuildTimes);
            cost.append(
                    String.format(
                            Locale.ROOT,
                            "| %.1f%% (%d) | %d | %.3f | %.3f | %.3f | %.0f | %.2f | %.1f | %.3f |"
                                    + " %d | %d | %d |%n",
                            100.0 * removed / n,
                            removed,
                            count,
                            perRemoval,
                            sorted[sorted.length / 2] / 1e6 / batch,
                            sorted[
                                            (int)
                                                    Math.min(
                                                            sorted.length - 1,
                                                            Math.floor(sorted.length * 0.99))]
                                    / 1e6
                                    / batch,
                            (after[2] - before[2]) / (double) count,
                            total / 1e9,
                            rebuild,
                            total / 1e9 / rebuild,
                            report.violations("unreachable-on-layer-0"),
                            report.violations("list-holds-removed-or-free-slot"),
                            after[0] - before[0]));

            int[][] truth = d.truth(k, live);
            if (withHnswlib) {
                hnswlib.writeStage(stageNo, Arrays.copyOfRange(order, stageStart, removed), truth);
            }
            String label = String.format(Locale.ROOT, "%.1f%%", 100.0 * removed / n);
            stageLabels.add(label);
            for (int ef : efs) {
                int[][] gotOurs = new int[nq][];
                int[][] gotLucene = new int[nq][];
                double[] rf = new double[rebuildSeeds];
                for (int q = 0; q < nq; q++) {
                    gotOurs[q] = ours.search(d.queries[q], k, ef);
                    gotLucene[q] = withLucene ? lucene.search(d.queries[q], k, ef) : new int[0];
                }
                for (int r = 0; r < rebuildSeeds; r++) {
                    int[][] gotFresh = new int[nq][];
                    for (int q = 0; q < nq; q++) {
                        int[] f = fresh[r].search(d.queries[q], k, ef);
                        for (int i = 0; i < f.length; i++) {
                            f[i] = survivorOrd[f[i]];
                        }
                        gotFresh[q] = f;
                    }
                    rf[r] = BenchData.recall(truth, gotFresh);
                }
                double ro = BenchData.recall(truth, gotOurs);
                double mean = Arrays.stream(rf).average().orElse(0);
                if (ef == plotEf) {
                    plotted.add(
                            new double[] {
                                100.0 * removed / n,
                                ro,
                                mean,
                                withLucene ? BenchData.recall(truth, gotLucene) : Double.NaN,
                                Double.NaN
                            });
                }
                double min = Arrays.stream(rf).min().orElse(0);
                double max = Arrays.stream(rf).max().orElse(0);
                String rl =
                        withLucene
                                ? String.format(
                                        Locale.ROOT, "%.4f", BenchData.recall(truth, gotLucene))
                                : "not run";
                recRows.add(
                        new String[] {
                            label,
                            "" + ef,
                            String.format(Locale.ROOT, "%.4f", ro),
                            String.format(Locale.ROOT, "%.4f", mean),
                            String.format(Locale.ROOT, "%.4f - %.4f", min, max),
                            String.format(Locale.ROOT, "%+.2f", 100 * (ro - mean)),
                            rl,
                            withHnswlib ? "?" : "not run"
                        });
            }
            System.err.printf(
                    Locale.ROOT,
                    "stage %.3f done: %.3f ms per removal, rebuild %.1f s, %.0f s so far%n",
                    stage,
                    perRemoval,
                    rebuild,
                    (System.nanoTime() - started) / 1e9);
            stageNo++;
        }
        if (withLucene) {
            lucene.close();
        }
        if (withHnswlib) {
            // hnswlib runs last, in its own process: build, then the same stages of deletes
            // with markDelete, recall on the survivors after each.
            double hnswlibBuild = Double.NaN;
            Map<String, String> rec = new HashMap<>();
            for (Line line :
                    hnswlib.run(
                            PeerRunner.HNSWLIB,
                            d.metric,
                            m,
                            efc,
                            k,
                            efs,
                            0,
                            List.of("--mode", "delete", "--threads", "" + threads))) {
                if (line.what().equals("build")) {
                    hnswlibBuild = line.d("s");
                } else if (line.what().equals("delete")) {
                    int st = Integer.parseInt(line.kv().get("stage"));
                    long[] r = residue.get(st);
                    r[4] = Long.parseLong(line.kv().get("in_graph")) - (n - r[0]);
                } else if (line.what().equals("search")) {
                    rec.put(
                            line.kv().get("stage") + "/" + line.kv().get("ef"),
                            line.kv().get("recall"));
                }
            }
            int row = 0;
            for (int st = 0; st < stageLabels.size(); st++) {
                for (int ef : efs) {
                    recRows.get(row++)[7] = rec.getOrDefault(st + "/" + ef, "missing");
                }
                String atPlotEf = rec.get(st + "/" + plotEf);
                plotted.get(st)[4] = atPlotEf == null ? Double.NaN : Double.parseDouble(atPlotEf);
            }
            hnswlib.close();
            System.out.printf(
                    Locale.ROOT, "hnswlib build: %.1f s with %d threads.%n", hnswlibBuild, threads);
        }
        System.out.printf(
                Locale.ROOT,
                "Initial build: %.1f s with %d threads. Whole run: %.0f s.%n%n",
                buildSeconds,
                threads,
                (System.nanoTime() - started) / 1e9);
        System.out.println(cost);
        System.out.println(
                "| removed | efSearch | repaired (ours) | rebuilt (ours, mean of "
                        + rebuildSeeds
                        + " seeds) | rebuilt min - max | repaired - rebuilt mean (points) | Lucene,"
                        + " deletes filtered | hnswlib, markDelete |");
        System.out.println("|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (String[] r : recRows) {
            System.out.println("| " + String.join(" | ", r) + " |");
        }
        System.out.println();
        System.out.println(
                "What each delete leaves behind, after each stage (cumulative): ours from the index"
                    + " itself and its integrity checker; Lucene's deleted documents stay in their"
                    + " segments (vectors and graph nodes, skipped through the live-docs bits)"
                    + " until a merge; hnswlib's markDelete keeps every marked node in the graph,"
                    + " traversed by searches.");
        System.out.println();
        System.out.println(
                "| removed | ours: removed still in the index | ours: links to removed or freed"
                        + " nodes | Lucene: deleted documents still indexed | hnswlib: marked nodes"
                        + " still in the graph |");
        System.out.println("|---:|---:|---:|---:|---:|");
        for (long[] r : residue) {
            System.out.printf(
                    Locale.ROOT,
                    "| %d | %d | %d | %s | %s |%n",
                    r[0],
                    r[1],
                    r[2],
                    r[3] < 0 ? "not run" : Long.toString(r[3]),
                    r[4] < 0 ? "not run" : Long.toString(r[4]));
        }
        Path plot = a.path("plot");
        if (plot != null) {
            DeleteRecallPlot.write(
                    plot,
                    String.format(
                            Locale.ROOT,
                            "n = %,d, %s, M = %d, efConstruction = %d, efSearch = %d, %d queries",
                            n,
                            d.description,
                            m,
                            efc,
                            plotEf,
                            nq),
                    plotted);
        }
    }

    private static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }
}
