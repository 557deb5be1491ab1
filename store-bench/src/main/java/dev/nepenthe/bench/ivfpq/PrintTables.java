package dev.nepenthe.bench.ivfpq;

import java.util.Locale;
import java.util.Map;
import java.util.function.BiFunction;

/** Prints the IVF-PQ benchmark's Markdown tables (the form docs/BENCHMARKS.md carries). */
final class PrintTables {
    private PrintTables() {}

    static void print(
            int n,
            int dim,
            int queries,
            String dataDesc,
            int nlist,
            int m,
            int train,
            int iterations,
            int rerank,
            int k,
            int passes,
            String kernels,
            double[] build,
            Map<String, double[]> ours,
            int[] nprobes,
            double listBytes,
            double devBefore,
            Map<String, double[]> forget,
            String[] labels,
            Map<String, double[]> seedRecall,
            Map<String, Map<String, String>> faiss) {
        StringBuilder sb = new StringBuilder();
        sb.append(
                String.format(
                        Locale.ROOT,
                        "Data: n=%d, dim=%d, %d queries, %s. L2. nlist=%d, m=%d, nbits=8, training"
                            + " sample = first %d vectors, %d k-means iterations, recall@%d against"
                            + " exact search, QPS single-threaded (median of %d passes), Nepenthe"
                            + " kernels=%s.%n%n",
                        n,
                        dim,
                        queries,
                        dataDesc,
                        nlist,
                        m,
                        train,
                        iterations,
                        k,
                        passes,
                        kernels));

        sb.append(
                "| build | train, CPU (s) | train + add all, CPU (s) | train, wall (s) | train +"
                        + " add all, wall (s) |\n"
                        + "|---|---:|---:|---:|---:|\n");
        sb.append(
                String.format(
                        Locale.ROOT,
                        "| Nepenthe | %.2f | %.2f | %.2f | %.2f |%n",
                        build[2],
                        build[3],
                        build[0],
                        build[1]));
        Map<String, String> fb = faiss.get("build");
        if (fb != null) {
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "| FAISS IndexIVFPQ | %s | %s | %s | %s |%n",
                            fb.get("train_cpu_s"),
                            fb.get("total_cpu_s"),
                            fb.get("train_s"),
                            fb.get("total_s")));
        }
        sb.append(
                "\n"
                    + "Nepenthe's train time runs from the add that reached the training size until"
                    + " the codebooks serve: the training runs on the index's own thread (k-means"
                    + " on the sample, then encoding the vectors added until then), with no add"
                    + " meanwhile; CPU is the process's.\n\n");

        sb.append(
                "| nprobe | re-rank | Nepenthe QPS (CPU) | FAISS QPS (CPU) | QPS ratio | Nepenthe"
                        + " QPS (wall) | FAISS QPS (wall) | Nepenthe recall@"
                        + k
                        + " | FAISS recall@"
                        + k
                        + " |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int np : nprobes) {
            for (int rr : new int[] {0, rerank}) {
                double[] o = ours.get(np + "/" + rr);
                Map<String, String> f = faiss.get("search " + np + "/" + rr);
                String fq = f == null ? "-" : f.get("cpu_qps");
                String fw = f == null ? "-" : f.get("qps");
                String fr = f == null ? "-" : f.get("recall");
                String ratio =
                        f == null
                                ? "-"
                                : String.format(Locale.ROOT, "%.2f", o[2] / Double.parseDouble(fq));
                sb.append(
                        String.format(
                                Locale.ROOT,
                                "| %d | %s | %.0f | %s | %s | %.0f | %s | %.4f | %s |%n",
                                np,
                                rr == 0 ? "none" : Integer.toString(rr),
                                o[2],
                                fq,
                                ratio,
                                o[0],
                                fw,
                                o[1],
                                fr));
            }
        }
        sb.append(
                "\n"
                    + "QPS (CPU) = queries / CPU seconds of the searching thread (Nepenthe) or"
                    + " process (FAISS): on a shared machine it tracks the work done; wall-clock"
                    + " QPS is shown too. QPS ratio = Nepenthe / FAISS, CPU. FAISS re-rank is"
                    + " IndexRefine over an IndexFlatL2 of the full vectors (what IndexRefineFlat"
                    + " holds), k_factor = re-rank / k.\n\n");

        if (!seedRecall.isEmpty()) {
            sb.append(
                    "| k-means seed (nprobe 16) | Nepenthe recall@"
                            + k
                            + ", no re-rank | FAISS | Nepenthe, re-rank "
                            + rerank
                            + " | FAISS |\n|---|---:|---:|---:|---:|\n");
            double[] sums = new double[4];
            int counted = 0;
            for (var e : seedRecall.entrySet()) {
                Map<String, String> f0 = faiss.get("seed " + e.getKey() + "/0");
                Map<String, String> f1 = faiss.get("seed " + e.getKey() + "/" + rerank);
                double a = f0 == null ? Double.NaN : Double.parseDouble(f0.get("recall"));
                double b = f1 == null ? Double.NaN : Double.parseDouble(f1.get("recall"));
                sb.append(
                        String.format(
                                Locale.ROOT,
                                "| %s | %.4f | %.4f | %.4f | %.4f |%n",
                                e.getKey(),
                                e.getValue()[0],
                                a,
                                e.getValue()[1],
                                b));
                sums[0] += e.getValue()[0];
                sums[1] += a;
                sums[2] += e.getValue()[1];
                sums[3] += b;
                counted++;
            }
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "| mean | %.4f | %.4f | %.4f | %.4f |%n%n",
                            sums[0] / counted,
                            sums[1] / counted,
                            sums[2] / counted,
                            sums[3] / counted));
        }

        sb.append(
                """
                | code memory per vector | code | id | total | raw float32 | compression |
                |---|---:|---:|---:|---:|---:|
                """);
        sb.append(
                String.format(
                        Locale.ROOT,
                        "| Nepenthe (nominal) | %d | 4 | %d | %d | %.1fx |%n",
                        m,
                        m + 4,
                        4 * dim,
                        4.0 * dim / (m + 4)));
        sb.append(
                String.format(
                        Locale.ROOT,
                        "| Nepenthe (allocated, with list slack) | | | %.1f | %d | %.1fx |%n",
                        listBytes,
                        4 * dim,
                        4.0 * dim / listBytes));
        sb.append(
                String.format(
                        Locale.ROOT,
                        "| FAISS IndexIVFPQ | %d | 8 | %d | %d | %.1fx |%n",
                        m,
                        m + 8,
                        4 * dim,
                        4.0 * dim / (m + 8)));
        sb.append(
                "\n"
                        + "Both sides also keep the full float32 vectors for re-rank (Nepenthe: its"
                        + " vector store, which retrain also needs; FAISS: IndexRefineFlat).\n\n");

        sb.append(
                "| removed | count | training members among them | Nepenthe remove, codebooks and"
                        + " centroids moved (CPU ms) | verifyIntegrity (CPU s) | recall@"
                        + k
                        + " repaired | after retrain | after rebuild | retrain + re-encode (process"
                        + " CPU s) | full rebuild (process CPU s) | FAISS remove_ids (wall s) |\n"
                        + "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        removalRows(
                sb,
                labels,
                forget,
                faiss,
                "| %s | %d | %d | %.1f | %.3f | %.4f | %.4f | %.4f | %.2f | %.2f | %s |%n",
                (r, f) ->
                        new Object[] {
                            (long) r[0],
                            (long) r[5],
                            r[1] * 1e3,
                            r[8],
                            r[11],
                            r[9],
                            r[10],
                            r[2],
                            r[3],
                            f == null ? "-" : f.get("remove_s")
                        });
        sb.append(
                "\nRecall after forgetting is at nprobe 16 with re-rank "
                        + rerank
                        + ", against exact search over the survivors. Repaired: the removal alone"
                        + " (no retrain; codes keep what they were encoded as); retrain: the same"
                        + " index retrained on the survivors; rebuild: a new index built from the"
                        + " survivors.\n\n");

        sb.append(
                "| removed | Nepenthe max centroid deviation (lists and codebooks) | clean after"
                    + " remove | clean after retrain | FAISS max centroid deviation | FAISS median"
                    + " |\n"
                    + "|---|---:|---|---|---:|---:|\n");
        Map<String, String> f0 = faiss.get("centroid none");
        sb.append(
                String.format(
                        Locale.ROOT,
                        "| none (after build) | %.2e | - | - | %s | %s |%n",
                        devBefore,
                        f0 == null ? "-" : f0.get("max_dev"),
                        f0 == null ? "-" : f0.get("median_dev")));
        removalRows(
                sb,
                labels,
                forget,
                faiss,
                "| %s | %.2e | %s | %s | %s | %s |%n",
                (r, f) ->
                        new Object[] {
                            r[4],
                            r[6] == 1 ? "yes" : "NO",
                            r[7] == 1 ? "yes" : "NO",
                            f == null ? "-" : f.get("max_dev"),
                            f == null ? "-" : f.get("median_dev")
                        });
        sb.append(
                "\n"
                    + "Deviation of a list's centroid from the mean of its current members,"
                    + " relative to the mean's norm (the formula in IvfPqIndex.inspect and"
                    + " faiss_ivfpq.py). FAISS never moves its centroids: already after add they"
                    + " are k-means centroids of the training sample, not means of the list"
                    + " members, and after remove_ids they still carry the removed vectors'"
                    + " pull.\n");
        System.out.print(sb);
    }

    /**
     * OSQ codes beside PQ at the same nprobe and re-rank: QPS (CPU) and recall of each, and FAISS's
     * when it ran.
     *
     * @param osq keyed "bits/nprobe/rerank": {QPS CPU, recall, QPS wall, list bytes per vector,
     *     build s}
     * @param pq keyed "nprobe/rerank": {QPS wall, recall, QPS CPU}
     */
    static void printOsq(
            Map<String, double[]> osq,
            Map<String, double[]> pq,
            Map<String, Map<String, String>> faiss,
            int k) {
        if (osq.isEmpty()) {
            return;
        }
        StringBuilder sb =
                new StringBuilder(
                        "\n| codes | nprobe | re-rank | QPS (CPU) | recall@"
                                + k
                                + " | PQ QPS (CPU) | PQ recall@"
                                + k
                                + " | OSQ / PQ QPS | FAISS PQ QPS (CPU) | FAISS PQ recall@"
                                + k
                                + " | list bytes per vector | build (wall s) |\n"
                                + "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Map.Entry<String, double[]> e : osq.entrySet()) {
            String[] key = e.getKey().split("/", -1);
            double[] o = e.getValue();
            double[] p = pq.get(key[1] + "/" + key[2]);
            Map<String, String> f = faiss.get("search " + key[1] + "/" + key[2]);
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "| OSQ %s-bit | %s | %s | %.0f | %.4f | %.0f | %.4f | %.2f | %s | %s |"
                                    + " %.1f | %.1f |%n",
                            key[0],
                            key[1],
                            key[2].equals("0") ? "none" : key[2],
                            o[0],
                            o[1],
                            p == null ? Double.NaN : p[2],
                            p == null ? Double.NaN : p[1],
                            p == null ? Double.NaN : o[0] / p[2],
                            f == null ? "-" : f.getOrDefault("cpu_qps", "-"),
                            f == null ? "-" : f.getOrDefault("recall", "-"),
                            o[3],
                            o[4]));
        }
        sb.append(
                "\n"
                    + "OSQ: per-vector scalar codes relative to each list's centre after a seeded"
                    + " rotation (no trained sub-codebook; the lists' anchors are trained as for"
                    + " PQ). Same data, lists, queries and ground truth as the tables above,"
                    + " measured in the same process after them.\n");
        System.out.print(sb);
    }

    /**
     * One row per removed fraction: its label, then the cells {@code cells} takes from our figures
     * for it and FAISS's (null when FAISS did not run).
     */
    private static void removalRows(
            StringBuilder sb,
            String[] labels,
            Map<String, double[]> forget,
            Map<String, Map<String, String>> faiss,
            String format,
            BiFunction<double[], Map<String, String>, Object[]> cells) {
        for (String label : labels) {
            Object[] row = cells.apply(forget.get(label), faiss.get("remove " + label));
            Object[] args = new Object[row.length + 1];
            args[0] = label.replace("pct", "%");
            System.arraycopy(row, 0, args, 1, row.length);
            sb.append(String.format(Locale.ROOT, format, args));
        }
    }
}
