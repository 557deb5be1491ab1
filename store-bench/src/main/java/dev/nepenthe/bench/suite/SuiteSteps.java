package dev.nepenthe.bench.suite;

import dev.nepenthe.bench.suite.BenchSuite.Profile;
import dev.nepenthe.bench.suite.BenchSuite.Step;
import java.util.List;

/**
 * The suite's steps and each one's arguments per profile: the one list to edit when a harness is
 * added or its sizes change, kept apart from how the suite runs steps and writes their sections.
 */
final class SuiteSteps {

    private SuiteSteps() {}

    /** Every step, in the order the suite runs them and the document lists them. */
    static final List<Step> ALL =
            List.of(
                    new KernelsStep(),
                    new RebuildCostStep(),
                    new HarnessStep(
                            "hnsw",
                            "HNSW: build, recall and QPS beside Lucene, jvector and hnswlib",
                            "Nepenthe's HNSW (floats, and int8 codes off the heap) beside Lucene"
                                + " through IndexWriter and IndexSearcher, jvector with a reused"
                                + " GraphSearcher and hnswlib through its Python API, on the same"
                                + " seeded low-rank data (cosine), one thread.",
                            "hnsw-compare",
                            "dev.nepenthe.bench.hnsw.HnswCompareBench",
                            c -> {
                                Profile p = c.profile();
                                String engines =
                                        p.peers()
                                                ? "nepenthe,nepenthe-int8-offheap,lucene,jvector,hnswlib"
                                                : "nepenthe,nepenthe-int8-offheap,lucene,jvector";
                                List<String> a =
                                        p.pickArgs(
                                                List.of(
                                                        "data=lowrank",
                                                        "n=50000",
                                                        "dim=384",
                                                        "queries=500",
                                                        "efs=16,24,32,64,128",
                                                        "engines=" + engines,
                                                        "threads=1",
                                                        "rounds=3"),
                                                List.of(
                                                        "data=lowrank",
                                                        "n=100000",
                                                        "dim=384",
                                                        "queries=1000",
                                                        "efs=16,24,32,48,64,96,128",
                                                        "engines=" + engines,
                                                        "threads=1",
                                                        "rounds=3"),
                                                List.of(
                                                        "data=lowrank",
                                                        "n=500",
                                                        "dim=16",
                                                        "queries=40",
                                                        "efs=16,32",
                                                        "engines=nepenthe",
                                                        "threads=1",
                                                        "rounds=1"));
                                a.add("plot=" + c.plots().resolve("hnsw-recall-qps.png"));
                                return a;
                            },
                            List.of("hnsw-recall-qps.png")),
                    new GcideStep(
                            new HarnessStep(
                                    "hnsw-gcide",
                                    "HNSW on real embeddings: gcide definitions through"
                                        + " all-MiniLM-L6-v2, beside Lucene, jvector and hnswlib",
                                    "The same comparison on real sentence embeddings (cosine, 384"
                                        + " dimensions): dict-gcide's definitions embedded once by"
                                        + " the bundled model and cached outside the repository,"
                                        + " with their exact answers cached beside them. It runs in"
                                        + " the full profile, or when `only=` names it; the first"
                                        + " run embeds the 159,148 definitions once (about 11"
                                        + " minutes on 2 cores).",
                                    "hnsw-compare",
                                    "dev.nepenthe.bench.hnsw.HnswCompareBench",
                                    c ->
                                            List.of(
                                                    "data=gcide",
                                                    "n="
                                                            + c.profile()
                                                                    .pick("50000", "140000", "500"),
                                                    "queries=1000",
                                                    "efs=16,24,32,48,64,96,128",
                                                    "engines="
                                                            + (c.profile().peers()
                                                                    ? "nepenthe,nepenthe-int8-offheap,lucene,jvector,hnswlib"
                                                                    : "nepenthe,nepenthe-int8-offheap,lucene,jvector"),
                                                    "threads=1",
                                                    "rounds=3",
                                                    "plot="
                                                            + c.plots()
                                                                    .resolve(
                                                                            "hnsw-gcide-recall-qps.png")),
                                    List.of("hnsw-gcide-recall-qps.png"))),
                    new HarnessStep(
                            "hnsw-delete",
                            "HNSW after deletes: repair against rebuilds, Lucene and hnswlib, and"
                                    + " what each leaves",
                            "Removes a growing share of an HNSW index one record at a time: our"
                                + " repair's cost and recall against fresh builds of the survivors,"
                                + " Lucene's deletes (filtered until a merge) and hnswlib's"
                                + " markDelete, and what each delete leaves in the index.",
                            "hnsw-delete",
                            "dev.nepenthe.bench.hnsw.HnswDeleteBench",
                            c -> {
                                Profile p = c.profile();
                                List<String> a =
                                        p.pickArgs(
                                                List.of(
                                                        "data=lowrank",
                                                        "n=30000",
                                                        "dim=384",
                                                        "queries=300",
                                                        "stages=0.001,0.01,0.1",
                                                        "efs=10,16,32",
                                                        "threads=2",
                                                        "rebuildSeeds=2"),
                                                List.of(
                                                        "data=lowrank",
                                                        "n=100000",
                                                        "dim=384",
                                                        "queries=500",
                                                        "stages=0.001,0.01,0.1,0.5",
                                                        "efs=32,64,128",
                                                        "threads=2",
                                                        "rebuildSeeds=3"),
                                                List.of(
                                                        "data=lowrank",
                                                        "n=600",
                                                        "dim=16",
                                                        "queries=30",
                                                        "stages=0.01,0.1",
                                                        "efs=16,32",
                                                        "threads=1",
                                                        "rebuildSeeds=1"));
                                if (!p.peers()) {
                                    a.add("hnswlib=false");
                                }
                                a.add("plot=" + c.plots().resolve("hnsw-delete-recall.png"));
                                return a;
                            },
                            List.of("hnsw-delete-recall.png")),
                    new HarnessStep(
                            "ivfpq",
                            "IVF-PQ: recall and QPS beside FAISS, and forgetting without a retrain",
                            "Nepenthe's IVF-PQ beside FAISS's IndexIVFPQ (through its Python API)"
                                + " on the same seeded clustered data (L2), with what removing 0.1%"
                                + " to 10% costs and leaves.",
                            "ivfpq",
                            "dev.nepenthe.bench.ivfpq.IvfPqBench",
                            c -> {
                                Profile p = c.profile();
                                List<String> a =
                                        p.pickArgs(
                                                List.of(
                                                        "--n",
                                                        "100000",
                                                        "--dim",
                                                        "128",
                                                        "--queries",
                                                        "500",
                                                        "--nlist",
                                                        "256",
                                                        "--nprobes",
                                                        "1,2,4,16",
                                                        "--spread",
                                                        "1.0",
                                                        "--seeds",
                                                        "1",
                                                        "--osq",
                                                        "none"),
                                                List.of(
                                                        "--n",
                                                        "200000",
                                                        "--dim",
                                                        "128",
                                                        "--queries",
                                                        "1000",
                                                        "--nlist",
                                                        "256"),
                                                List.of(
                                                        "--n",
                                                        "3000",
                                                        "--dim",
                                                        "16",
                                                        "--queries",
                                                        "30",
                                                        "--nlist",
                                                        "16",
                                                        "--m",
                                                        "4",
                                                        "--train",
                                                        "3000",
                                                        "--iterations",
                                                        "4",
                                                        "--passes",
                                                        "1",
                                                        "--seeds",
                                                        "0",
                                                        "--osq",
                                                        "none"));
                                if (!p.peers() || p.smoke()) {
                                    a.add("--no-faiss");
                                }
                                a.addAll(
                                        List.of(
                                                "--plot",
                                                c.plots()
                                                        .resolve("ivfpq-recall-qps.png")
                                                        .toString()));
                                return a;
                            },
                            List.of("ivfpq-recall-qps.png")),
                    new HarnessStep(
                            "ingest",
                            "Durable ingest: the write-ahead log, checkpoints, and what encryption"
                                    + " costs",
                            "Records written through the storage layer (fsync before each"
                                + " acknowledgement, checkpoints into segments) in batches of 1,"
                                + " 100 and 1,000, sealed with AES-256-GCM and with a pass-through"
                                + " sealer side by side.",
                            "ingest",
                            "dev.nepenthe.bench.storage.IngestBench",
                            c ->
                                    List.of(
                                            "--records",
                                            c.profile().pick("20000", "100000", "300"),
                                            "--repeats",
                                            c.profile().pick("3", "5", "1"),
                                            "--dim",
                                            c.profile().pick("384", "384", "16"),
                                            "--dir",
                                            c.scratch().toString()),
                            List.of()),
                    new HarnessStep(
                            "server-load",
                            "The gRPC server under load: QPS and latency with 1 and 8 clients, with"
                                    + " forgets",
                            "Searches over gRPC on loopback from concurrent clients (each its own"
                                + " channel), the same while a subject is forgotten every second"
                                + " through the Forget service, and the embedded call beside it;"
                                + " clients and server share the machine's cores.",
                            "server-load",
                            "dev.nepenthe.server.bench.ServerLoadBench",
                            c ->
                                    c.profile()
                                            .pick(
                                                    List.of(
                                                            "n=20000",
                                                            "dim=128",
                                                            "clients=1,8",
                                                            "seconds=5"),
                                                    List.of(
                                                            "n=100000",
                                                            "dim=384",
                                                            "clients=1,8,32",
                                                            "seconds=15"),
                                                    List.of(
                                                            "n=300",
                                                            "dim=16",
                                                            "clients=1",
                                                            "seconds=1")),
                            List.of()),
                    new HarnessStep(
                            "forget",
                            "Forget: time to BLOCKED and to SEALED",
                            "Whole forgets through the store (mark, block, remove, prove, rotate,"
                                + " seal) of subjects of 10 and 100 records, HNSW and IVF-PQ, with"
                                + " a thread searching beside them.",
                            "forget",
                            "dev.nepenthe.bench.forget.ForgetBench",
                            c -> {
                                List<String> a =
                                        c.profile()
                                                .pickArgs(
                                                        List.of(
                                                                "n=20000",
                                                                "dim=128",
                                                                "sizes=10,100",
                                                                "reps=3",
                                                                "index=hnsw,ivfpq"),
                                                        List.of(
                                                                "n=100000",
                                                                "dim=384",
                                                                "sizes=10,100,1000",
                                                                "reps=3",
                                                                "index=hnsw,ivfpq"),
                                                        List.of(
                                                                "n=400",
                                                                "dim=16",
                                                                "sizes=10",
                                                                "reps=1",
                                                                "index=hnsw"));
                                a.add("dir=" + c.scratch());
                                a.add("plot=" + c.plots().resolve("forget-search-latency.png"));
                                return a;
                            },
                            List.of("forget-search-latency.png")));
}
