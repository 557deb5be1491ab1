package dev.nepenthe.bench.suite;

import dev.nepenthe.bench.Machine;
import dev.nepenthe.bench.hnsw.BenchArgs;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * One command for the benchmarks: {@code ./nepenthe bench all profile=quick|full|smoke}. Runs each
 * step (a harness in a JVM of its own, or JMH) with the profile's parameters and writes each step's
 * section of docs/BENCHMARKS.md anew (see {@link ReportDoc}): what it measures, the command that
 * reruns it alone, the machine, the load average at its start and end, its time, and the harness's
 * own tables; plots go beside the document. A step that fails leaves its section as it was, the
 * others still run, and the suite exits with 1 naming it.
 *
 * <p>Profiles: {@code quick} is minutes on two cores, {@code full} the sizes the document's older
 * sections used (as long as it takes), {@code smoke} a few hundred vectors and no peers, seconds,
 * for CI. {@code peers=false} leaves the Python peers (hnswlib, FAISS) out.
 */
public final class BenchSuite {

    static final String USAGE =
            "bench all [profile=quick|full|smoke] [only=STEP,...] [doc=docs/BENCHMARKS.md]"
                    + " [plots=DIR beside doc: plots] [peers=true|false] [dir=TMPDIR]; steps: ";

    /** A profile's name; {@code peers} false drops the Python peers from the steps' arguments. */
    record Profile(String name, boolean peers) {
        boolean smoke() {
            return name.equals("smoke");
        }

        /** The quick, the full or the smoke value. */
        <T> T pick(T quick, T full, T smoke) {
            return switch (name) {
                case "quick" -> quick;
                case "full" -> full;
                default -> smoke;
            };
        }
    }

    /**
     * What a step gets: the profile, where plots go and how the document links them, a scratch dir.
     */
    record Context(Profile profile, Path plots, Path doc, Path scratch) {
        /** The link from the document to a plot file. */
        String link(Path plot) {
            Path from = doc.toAbsolutePath().getParent();
            return from.relativize(plot.toAbsolutePath()).toString().replace('\\', '/');
        }
    }

    /** One part of the suite: its name (the section's marker), title, and how it runs. */
    interface Step {
        String name();

        String title();

        /** One or two sentences: what the step measures, and against what. */
        String what();

        /**
         * The step's tables (Markdown) under its heading, after the machine line the suite writes.
         */
        String run(Context c) throws Exception;

        /**
         * Whether a run of the whole suite at this profile includes the step ({@code only=} may
         * name any).
         */
        default boolean runsIn(Profile p) {
            return true;
        }
    }

    static final List<Step> STEPS =
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
                                        new ArrayList<>(
                                                p.pick(
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
                                                                "rounds=1")));
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
                                        new ArrayList<>(
                                                p.pick(
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
                                                                "rebuildSeeds=1")));
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
                                        new ArrayList<>(
                                                p.pick(
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
                                                                "none")));
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
                            List.of(),
                            "nepenthe.suite.serverClasspath"),
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
                                        new ArrayList<>(
                                                c.profile()
                                                        .pick(
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
                                                                        "index=hnsw")));
                                a.add("dir=" + c.scratch());
                                a.add("plot=" + c.plots().resolve("forget-search-latency.png"));
                                return a;
                            },
                            List.of("forget-search-latency.png")));

    private BenchSuite() {}

    public static void main(String[] argv) throws Exception {
        List<String> failed = run(argv);
        if (!failed.isEmpty()) {
            System.err.println(
                    "suite: these steps failed and left their sections as they were: " + failed);
            System.exit(1);
        }
    }

    /** Runs the steps {@code argv} chooses; returns the names of those that failed. */
    static List<String> run(String[] argv) throws Exception {
        BenchArgs a = new BenchArgs(argv, USAGE + names());
        a.onlyKnown(Set.of("profile", "only", "doc", "plots", "peers", "dir"));
        String profileName = a.s("profile", "quick");
        if (!Set.of("quick", "full", "smoke").contains(profileName)) {
            throw new IllegalArgumentException(
                    "profile: expected quick, full or smoke, got '" + profileName + "'");
        }
        Profile profile =
                new Profile(
                        profileName,
                        !profileName.equals("smoke") && Boolean.parseBoolean(a.s("peers", "true")));
        Path doc = Path.of(a.s("doc", "docs/BENCHMARKS.md"));
        if (!Files.isRegularFile(doc)) {
            throw new IllegalArgumentException(
                    "doc: expected the benchmarks document to rewrite, found no file " + doc);
        }
        Path plots = Path.of(a.s("plots", doc.resolveSibling("plots").toString()));
        Files.createDirectories(plots);
        Path scratch =
                Files.createTempDirectory(
                        Path.of(a.s("dir", System.getProperty("java.io.tmpdir"))),
                        "nepenthe-suite");
        List<Step> chosen = choose(a.s("only", ""), profile);
        Context c = new Context(profile, plots, doc, scratch);
        List<String> failed = new ArrayList<>();
        for (Step step : chosen) {
            System.out.printf(
                    Locale.ROOT,
                    "%n== suite step %s (profile %s) ==%n",
                    step.name(),
                    profile.name());
            Instant start = Instant.now();
            long t0 = System.nanoTime();
            double loadBefore = Machine.loadAverage();
            String body;
            try {
                body = step.run(c);
            } catch (Exception | AssertionError e) {
                System.err.println("suite step " + step.name() + " failed: " + e);
                e.printStackTrace();
                failed.add(step.name());
                continue;
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            String section =
                    section(
                            step,
                            profile,
                            body,
                            loadBefore,
                            Machine.loadAverage(),
                            start,
                            seconds,
                            commit(doc, plots));
            ReportDoc.replace(doc, step.name(), section, names());
            System.out.printf(
                    Locale.ROOT,
                    "suite step %s: %.0f s, section written to %s%n",
                    step.name(),
                    seconds,
                    doc);
        }
        deleteTree(scratch);
        return failed;
    }

    static List<String> names() {
        return STEPS.stream().map(Step::name).toList();
    }

    static List<Step> choose(String only, Profile profile) {
        if (only.isBlank()) {
            return STEPS.stream().filter(s -> s.runsIn(profile)).toList();
        }
        Map<String, Step> byName = new LinkedHashMap<>();
        STEPS.forEach(s -> byName.put(s.name(), s));
        List<Step> out = new ArrayList<>();
        for (String name : only.split(",")) {
            Step s = byName.get(name.strip());
            if (s == null) {
                throw new IllegalArgumentException(
                        "only: expected steps among " + names() + ", got '" + name + "'");
            }
            out.add(s);
        }
        return out;
    }

    static String section(
            Step step,
            Profile p,
            String body,
            double loadBefore,
            double loadAfter,
            Instant start,
            double seconds,
            String commit) {
        String rerun =
                "./nepenthe bench all profile="
                        + p.name()
                        + " only="
                        + step.name()
                        + (p.peers() || p.smoke() ? "" : " peers=false");
        return String.format(
                Locale.ROOT,
                """
                ### %s

                %s

                ```
                %s
                ```

                Written by the suite on %s (profile %s, %.0f s), commit %s. Machine: %s. Load average %.2f at the start,
                %.2f at the end.

                %s
                """,
                step.title(),
                step.what(),
                rerun,
                start.truncatedTo(ChronoUnit.SECONDS),
                p.name(),
                seconds,
                commit,
                Machine.describe(),
                loadBefore,
                loadAfter,
                body.strip());
    }

    /**
     * The working tree's commit, "with uncommitted changes" when files other than the suite's own
     * output (the document, the plots) differ from it, or "unknown" outside a git checkout.
     */
    private static String commit(Path doc, Path plots) {
        try {
            String head = git("rev-parse", "--short", "HEAD");
            if (head == null || !head.matches("[0-9a-f]{4,40}")) {
                return "unknown";
            }
            String top = git("rev-parse", "--show-toplevel");
            String changes = git("status", "--porcelain", "--untracked-files=no");
            if (top == null || changes == null) {
                return head + " (its changes unknown)";
            }
            Path root = Path.of(top);
            Path ownDoc = doc.toAbsolutePath().normalize();
            Path ownPlots = plots.toAbsolutePath().normalize();
            boolean others =
                    changes.lines()
                            .filter(l -> l.length() > 3)
                            .map(l -> root.resolve(l.substring(3)).normalize())
                            .anyMatch(f -> !f.equals(ownDoc) && !f.startsWith(ownPlots));
            return others ? head + " with uncommitted changes" : head;
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /**
     * Runs JMH as {@code ./nepenthe jmh ARGS} would (the benchmark's name first, then JMH's
     * options), failing on a benchmark's error; the results in JMH's own order.
     */
    static java.util.Collection<org.openjdk.jmh.results.RunResult> jmh(List<String> args)
            throws Exception {
        org.openjdk.jmh.runner.options.Options options =
                new org.openjdk.jmh.runner.options.OptionsBuilder()
                        .parent(
                                new org.openjdk.jmh.runner.options.CommandLineOptions(
                                        args.toArray(String[]::new)))
                        .shouldFailOnError(true)
                        .build();
        return new org.openjdk.jmh.runner.Runner(options).run();
    }

    private static String git(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("git"));
        cmd.addAll(List.of(args));
        Process git = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out =
                new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
                        .stripTrailing();
        return git.waitFor() == 0 ? out : null;
    }

    /**
     * The real-embedding comparison: builds the gcide cache first when it is missing (in a JVM of
     * its own, as {@code ./nepenthe bench dataset-gcide} does), then runs its harness.
     */
    record GcideStep(HarnessStep harness) implements Step {
        @Override
        public String name() {
            return harness.name();
        }

        @Override
        public String title() {
            return harness.title();
        }

        @Override
        public String what() {
            return harness.what();
        }

        @Override
        public boolean runsIn(Profile p) {
            return p.name().equals("full");
        }

        @Override
        public String run(Context c) throws Exception {
            Path cache = dev.nepenthe.bench.data.GcideDataset.defaultFile();
            if (!Files.isRegularFile(cache)) {
                System.out.println(
                        "suite: no gcide vectors at " + cache + "; embedding the definitions once");
                new HarnessStep(
                                "dataset-gcide",
                                "",
                                "",
                                "dataset-gcide",
                                "dev.nepenthe.bench.data.GcideDataset",
                                x -> List.of(),
                                List.of())
                        .run(c);
            }
            return harness.run(c);
        }
    }

    /**
     * A harness in a JVM of its own (this JVM's flags and class path), as {@code ./nepenthe bench}
     * runs it: its standard output, the tables, becomes the section; its standard error is the
     * progress, passed through.
     */
    record HarnessStep(
            String name,
            String title,
            String what,
            String bench,
            String mainClass,
            java.util.function.Function<Context, List<String>> args,
            List<String> plots,
            String classPathProperty)
            implements Step {

        HarnessStep(
                String name,
                String title,
                String what,
                String bench,
                String mainClass,
                java.util.function.Function<Context, List<String>> args,
                List<String> plots) {
            this(name, title, what, bench, mainClass, args, plots, null);
        }

        @Override
        public String run(Context c) throws Exception {
            List<String> cmd = new ArrayList<>();
            cmd.add(
                    ProcessHandle.current()
                            .info()
                            .command()
                            .orElse(
                                    Path.of(System.getProperty("java.home"), "bin", "java")
                                            .toString()));
            for (String f : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
                if (!f.startsWith("-agentlib")
                        && !f.startsWith("-javaagent")
                        && !f.startsWith("-Xrunjdwp")) {
                    cmd.add(f);
                }
            }
            cmd.add("-cp");
            if (classPathProperty == null) {
                cmd.add(System.getProperty("java.class.path"));
            } else {
                String cp = System.getProperty(classPathProperty, "");
                if (cp.isEmpty()) {
                    throw new IllegalStateException(
                            name
                                    + ": expected the class path of "
                                    + mainClass
                                    + " in -D"
                                    + classPathProperty
                                    + " (./nepenthe bench all builds it and sets it), found none");
                }
                cmd.add(cp);
            }
            cmd.add(mainClass);
            List<String> harnessArgs = args.apply(c);
            cmd.addAll(harnessArgs);
            System.out.println("suite: " + mainClass + " " + String.join(" ", harnessArgs));
            Process proc =
                    new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            proc.getOutputStream().close();
            String out = tee(proc.getInputStream(), System.out);
            int rc = proc.waitFor();
            if (rc != 0) {
                throw new IllegalStateException(mainClass + " exited with " + rc);
            }
            StringBuilder body =
                    new StringBuilder(
                            "The harness alone: `./nepenthe bench "
                                    + bench
                                    + " "
                                    + String.join(" ", harnessArgs)
                                    + "`.\n\n");
            // The harness's own headings sit one level below the step's.
            body.append(out.replaceAll("(?m)^(#{2,5}) ", "$1# "));
            for (String plot : plots) {
                Path png = c.plots().resolve(plot);
                if (!Files.isRegularFile(png)) {
                    throw new IllegalStateException(mainClass + " wrote no plot " + png);
                }
                body.append("\n![").append(title).append("](").append(c.link(png)).append(")\n");
            }
            return body.toString();
        }
    }

    private static String tee(InputStream in, OutputStream echo) throws IOException {
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        for (int r; (r = in.read(buf)) > 0; ) {
            all.write(buf, 0, r);
            echo.write(buf, 0, r);
        }
        echo.flush();
        return all.toString(StandardCharsets.UTF_8);
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
