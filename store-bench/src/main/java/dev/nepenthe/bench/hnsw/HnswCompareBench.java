package dev.nepenthe.bench.hnsw;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Build time and single-thread query throughput against recall@k for Nepenthe's HNSW, Lucene's
 * HNSW, jvector and hnswlib, on the same data (seeded clustered vectors, L2, or with
 * {@code data=gcide} the cached MiniLM embeddings of dict-gcide definitions, cosine) with the
 * same M and efConstruction. Prints Markdown tables.
 *
 * <p>Per efSearch: one pass per Java engine measures recall (and warms up), then {@code rounds}
 * timed passes over all queries go round-robin over the Java engines; QPS is each engine's
 * median pass. hnswlib runs afterwards in its own process (Debian's python3-hnswlib, one
 * thread, one batched knn_query call per pass, median of {@code rounds} passes) on the same
 * vectors and exact answers. The "QPS at recall" table takes, for each engine, the smallest
 * swept efSearch whose recall reaches the target.
 */
public final class HnswCompareBench {

    static final String USAGE = "hnsw-compare [data=synthetic|gcide] [n=100000] [dim=128] [queries=1000] [m=16]"
            + " [efc=100] [k=10] [clusters=100] [spread=0.3] [seed=7] [efs=10,16,24,32,48,64,96,128,192,256,384,512]"
            + " [engines=nepenthe,lucene,jvector,hnswlib] [rounds=5] [python=/usr/bin/python3]";

    private HnswCompareBench() {}

    record Point(int ef, double recall, double qps) {}

    public static void main(String[] argv) throws Exception {
        BenchArgs a = new BenchArgs(argv, USAGE);
        int n = a.i("n", 100_000);
        int dim = a.i("dim", 128);
        int nq = a.i("queries", 1000);
        int m = a.i("m", 16);
        int efc = a.i("efc", 100);
        int k = a.i("k", 10);
        int rounds = a.i("rounds", 5);
        int[] efs = a.ints("efs", new int[] {10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512});
        String[] engines = a.s("engines", "nepenthe,lucene,jvector,hnswlib").split(",");
        BenchData d = BenchData.from(a, n, nq, dim);
        int[][] truth = d.truth(k, null);

        System.out.printf(Locale.ROOT, "### HNSW engines side by side: n=%d, %s, M=%d, efConstruction=%d, %d queries,"
                + " recall@%d%n%n", n, d.description, m, efc, nq, k);
        System.out.println("Machine: " + BenchData.machine() + "\n");
        List<String> names = new ArrayList<>();
        List<Double> buildSeconds = new ArrayList<>();
        List<AnnEngine> built = new ArrayList<>();
        boolean withHnswlib = false;
        for (String name : engines) {
            if (name.trim().equals("hnswlib")) {
                withHnswlib = true;
                continue;
            }
            AnnEngine e = switch (name.trim()) {
                case "nepenthe" -> new NepentheEngine(m, efc, 1, d.metric);
                case "lucene" -> new LuceneEngine(m, efc, d.metric);
                case "jvector" -> new JVectorEngine(m, efc, d.metric);
                default -> throw new IllegalArgumentException("engine: expected nepenthe, lucene, jvector or hnswlib, got "
                        + name);
            };
            System.gc();
            long t0 = System.nanoTime();
            e.build(d.data);
            double build = (System.nanoTime() - t0) / 1e9;
            names.add(e.name());
            buildSeconds.add(build);
            built.add(e);
            System.err.printf(Locale.ROOT, "%s: build %.1f s%n", e.name(), build);
        }
        // Timed passes go round-robin over the engines, so a burst of load from elsewhere on a
        // shared machine hits every engine alike; the median pass per engine is reported.
        List<List<Point>> curves = new ArrayList<>();
        for (int i = 0; i < built.size(); i++) {
            curves.add(new ArrayList<>());
        }
        for (int ef : efs) {
            double[] recalls = new double[built.size()];
            for (int i = 0; i < built.size(); i++) {
                int[][] got = new int[nq][];
                for (int q = 0; q < nq; q++) {
                    got[q] = built.get(i).search(d.queries[q], k, ef);
                }
                recalls[i] = BenchData.recall(truth, got);
            }
            double[][] passes = new double[built.size()][rounds];
            long sink = 0;
            for (int p = 0; p < rounds; p++) {
                for (int i = 0; i < built.size(); i++) {
                    long s = System.nanoTime();
                    for (int q = 0; q < nq; q++) {
                        sink += built.get(i).search(d.queries[q], k, ef).length;
                    }
                    passes[i][p] = nq / ((System.nanoTime() - s) / 1e9);
                }
            }
            if (sink < 0) {
                throw new AssertionError();
            }
            for (int i = 0; i < built.size(); i++) {
                Arrays.sort(passes[i]);
                curves.get(i).add(new Point(ef, recalls[i], passes[i][rounds / 2]));
            }
            System.err.printf(Locale.ROOT, "ef %d done%n", ef);
        }

        // hnswlib runs in its own process after the Java engines (so its passes are not
        // interleaved with theirs): same files, same exact answers, single thread.
        if (withHnswlib) {
            try (HnswlibRunner h = new HnswlibRunner(a, d.data, d.queries, truth)) {
                List<Point> curve = new ArrayList<>();
                for (dev.nepenthe.bench.PeerProcess.Line line : h.run("compare", d.metric, m, efc, k, efs, rounds, 1)) {
                    if (line.what().equals("build")) {
                        buildSeconds.add(line.d("s"));
                    } else if (line.what().equals("search")) {
                        curve.add(new Point((int) line.d("ef"), line.d("recall"), line.d("qps")));
                    }
                }
                names.add("hnswlib");
                curves.add(curve);
            }
        }

        System.out.println("| engine | build (s, 1 thread) |");
        System.out.println("|---|---:|");
        for (int i = 0; i < names.size(); i++) {
            System.out.printf(Locale.ROOT, "| %s | %.1f |%n", names.get(i), buildSeconds.get(i));
        }
        System.out.println();
        StringBuilder head = new StringBuilder("| efSearch |");
        StringBuilder rule = new StringBuilder("|---:|");
        for (String nm : names) {
            head.append(' ').append(nm).append(" recall | ").append(nm).append(" QPS |");
            rule.append("---:|---:|");
        }
        System.out.println(head);
        System.out.println(rule);
        for (int j = 0; j < efs.length; j++) {
            StringBuilder row = new StringBuilder("| " + efs[j] + " |");
            for (List<Point> c : curves) {
                row.append(String.format(Locale.ROOT, " %.4f | %.0f |", c.get(j).recall(), c.get(j).qps()));
            }
            System.out.println(row);
        }
        System.out.println();
        System.out.print("| recall@" + k + " target |");
        for (String nm : names) {
            System.out.print(" " + nm + " QPS (ef) |");
        }
        int ours = names.indexOf("nepenthe");
        for (String nm : names) {
            if (!nm.equals("nepenthe") && ours >= 0) {
                System.out.print(" nepenthe / " + nm + " |");
            }
        }
        System.out.println();
        System.out.println("|---:|" + "---:|".repeat(names.size() + (ours >= 0 ? names.size() - 1 : 0)));
        for (double target : new double[] {0.90, 0.95, 0.99}) {
            StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "| %.2f |", target));
            Point[] at = new Point[names.size()];
            for (int i = 0; i < names.size(); i++) {
                at[i] = curves.get(i).stream().filter(p -> p.recall() >= target).findFirst().orElse(null);
                row.append(at[i] == null ? " not reached |" : String.format(Locale.ROOT, " %.0f (%d) |", at[i].qps(), at[i].ef()));
            }
            for (int i = 0; i < names.size(); i++) {
                if (i != ours && ours >= 0) {
                    row.append(at[i] == null || at[ours] == null ? " - |"
                            : String.format(Locale.ROOT, " %.2fx |", at[ours].qps() / at[i].qps()));
                }
            }
            System.out.println(row);
        }
    }
}
