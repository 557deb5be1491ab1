package dev.nepenthe.bench.suite;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.openjdk.jmh.results.RunResult;

/**
 * The suite's kernels step: {@code PairKernelsBenchmark} under JMH (one pair of vectors: dot,
 * squared distance and cosine), ours on the Vector API and scalar beside Lucene's {@code
 * VectorUtil}, as a table of ns per pair and our ratio to Lucene: whether our kernels keep up with
 * the library most Java vector search runs on. The figures are in docs/BENCHMARKS.md.
 */
final class KernelsStep implements BenchSuite.Step {
    private static final List<String> KERNELS = List.of("dot", "squareDistance", "cosine");

    @Override
    public String name() {
        return "kernels";
    }

    @Override
    public String title() {
        return "Vector kernels: one pair, ours beside Lucene's VectorUtil (JMH)";
    }

    @Override
    public String what() {
        return "JMH (`PairKernelsBenchmark`): the time of one dot product, squared distance and"
                + " cosine on float vectors, our Vector API kernels and their scalar twin beside"
                + " Lucene's `VectorUtil` with its own Panama path, average time per call.";
    }

    @Override
    public String run(BenchSuite.Context c) throws Exception {
        BenchSuite.Profile p = c.profile();
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "PairKernelsBenchmark",
                                "-p",
                                "d=" + p.pick("128,384,768", "128,384,768,1536", "64")));
        // Three forks of short iterations and the median of them all: on a shared machine one
        // fork can settle far from another, and a single fork's mean has put a larger dimension
        // below a smaller one (docs/BENCHMARKS.md, "Vector kernels", has the runs). JMH's own
        // defaults (5 forks of 10 s iterations) would take hours over every kernel and size.
        args.addAll(
                p.pick(
                        List.of("-f", "3", "-wi", "2", "-w", "500ms", "-i", "5", "-r", "300ms"),
                        List.of("-f", "2", "-wi", "5", "-w", "1", "-i", "10", "-r", "1"),
                        List.of("-f", "0", "-wi", "0", "-i", "1", "-r", "100ms")));
        Collection<RunResult> results = BenchSuite.jmh(args);
        // dim -> method -> ns
        Map<Integer, Map<String, Double>> byDim = new TreeMap<>();
        for (RunResult r : results) {
            String label = r.getPrimaryResult().getLabel();
            byDim.computeIfAbsent(
                            Integer.parseInt(r.getParams().getParam("d")), d -> new TreeMap<>())
                    .put(label, r.getPrimaryResult().getStatistics().getPercentile(50));
        }
        StringBuilder sb =
                new StringBuilder(
                        "The benchmark alone: `./nepenthe jmh "
                                + String.join(" ", args)
                                + "`.\n\n"
                                + "| kernel | d | ours, Vector API (ns) | ours, scalar (ns) |"
                                + " Lucene VectorUtil (ns) | Lucene / ours |\n"
                                + "|---|---:|---:|---:|---:|---:|\n");
        for (String kernel : KERNELS) {
            for (Map.Entry<Integer, Map<String, Double>> e : byDim.entrySet()) {
                Double panama = e.getValue().get(kernel + "Panama");
                Double scalar = e.getValue().get(kernel + "Scalar");
                Double lucene = e.getValue().get(kernel + "Lucene");
                if (panama == null || scalar == null || lucene == null) {
                    throw new IllegalStateException(
                            "PairKernelsBenchmark gave no "
                                    + kernel
                                    + " result for d="
                                    + e.getKey()
                                    + ": "
                                    + e.getValue().keySet());
                }
                sb.append(
                        String.format(
                                Locale.ROOT,
                                "| %s | %d | %.2f | %.2f | %.2f | %.2f |%n",
                                kernel,
                                e.getKey(),
                                panama,
                                scalar,
                                lucene,
                                lucene / panama));
            }
        }
        sb.append(
                "\n"
                    + "Lucene / ours above 1 means ours is faster. JMH average time per call, the"
                    + " median of every measured iteration of every fork. Each cell is timed on its"
                    + " own, minutes apart from its neighbours, so on a shared machine a ratio here"
                    + " moves by tens of percent between runs; the engines' comparisons below"
                    + " alternate the engines within one process instead.\n");
        return sb.toString();
    }
}
