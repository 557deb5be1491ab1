package dev.nepenthe.bench.suite;

import dev.nepenthe.bench.Machine;
import dev.nepenthe.bench.hnsw.BenchArgs;
import dev.nepenthe.testing.TestFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

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

        /** The quick, the full or the smoke arguments, in a list the step may add to. */
        List<String> pickArgs(List<String> quick, List<String> full, List<String> smoke) {
            return new ArrayList<>(pick(quick, full, smoke));
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

    static final List<Step> STEPS = SuiteSteps.ALL;

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
                            SuiteCommit.of(doc, plots));
            ReportDoc.replace(doc, step.name(), section, names());
            System.out.printf(
                    Locale.ROOT,
                    "suite step %s: %.0f s, section written to %s%n",
                    step.name(),
                    seconds,
                    doc);
        }
        TestFiles.deleteTree(scratch);
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
        for (String name : only.split(",", -1)) {
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
     * Runs JMH as {@code ./nepenthe jmh ARGS} would (the benchmark's name first, then JMH's
     * options), failing on a benchmark's error; the results in JMH's own order.
     */
    static Collection<RunResult> jmh(List<String> args) throws Exception {
        Options options =
                new OptionsBuilder()
                        .parent(new CommandLineOptions(args.toArray(String[]::new)))
                        .shouldFailOnError(true)
                        .build();
        return new Runner(options).run();
    }
}
