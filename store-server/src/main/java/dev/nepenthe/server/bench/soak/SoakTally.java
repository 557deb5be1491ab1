package dev.nepenthe.server.bench.soak;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Counts and latencies of the soak's operations: per kind, how many were acknowledged, how many
 * failed UNAVAILABLE in a restart window (expected), how many failed otherwise (errors, with the
 * first few kept to name in the report); and the latencies of the acknowledged ones in buckets of
 * the run's time (a minute by default), each bucket by the time its operation started.
 */
final class SoakTally {

    /** The operations the report has a column for. */
    enum Kind {
        UPSERT("upsert"),
        SEARCH("search"),
        DELETE("delete"),
        FORGET("forget to BLOCKED"),
        SEALED("forget to SEALED"),
        SNAPSHOT("snapshot"),
        RESTART("restart: down to serving"),
        OTHER("other calls: forget status polls, fault injection");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    /** One error, as the report names it: the operation, the status and its description. */
    record Problem(Kind kind, String what) {}

    private static final int KEPT_PROBLEMS = 20;

    private final long startNanos;
    private final long bucketNanos;
    private final Map<Kind, long[]> counts = new EnumMap<>(Kind.class);
    private final Map<Kind, TreeMap<Integer, long[]>> latencies = new EnumMap<>(Kind.class);
    private final Map<Kind, TreeMap<Integer, Integer>> sizes = new EnumMap<>(Kind.class);
    private final TreeMap<Integer, double[]> load = new TreeMap<>();
    private final List<Problem> problems = new ArrayList<>();
    private long errors;

    SoakTally(long startNanos, double bucketSeconds) {
        this.startNanos = startNanos;
        this.bucketNanos = (long) (bucketSeconds * 1e9);
        for (Kind k : Kind.values()) {
            counts.put(k, new long[3]);
            latencies.put(k, new TreeMap<>());
            sizes.put(k, new TreeMap<>());
        }
    }

    /** An acknowledged operation that started at {@code startNanos} and took {@code nanos}. */
    synchronized void ok(Kind k, long startNanos, long nanos) {
        counts.get(k)[0]++;
        int bucket = bucket(startNanos);
        int n = sizes.get(k).getOrDefault(bucket, 0);
        long[] lat = latencies.get(k).computeIfAbsent(bucket, b -> new long[64]);
        if (n == lat.length) {
            lat = Arrays.copyOf(lat, n * 2);
            latencies.get(k).put(bucket, lat);
        }
        lat[n] = nanos;
        sizes.get(k).put(bucket, n + 1);
    }

    /** A sample of the machine's load average, taken at {@code nanoTime}. */
    synchronized void load(long nanoTime, double value) {
        double[] sumAndCount = load.computeIfAbsent(bucket(nanoTime), b -> new double[2]);
        sumAndCount[0] += value;
        sumAndCount[1]++;
    }

    /** The mean of the load average's samples in a bucket, or NaN when none was taken. */
    synchronized double load(int bucket) {
        double[] s = load.get(bucket);
        return s == null ? Double.NaN : s[0] / s[1];
    }

    private int bucket(long nanoTime) {
        return (int) Math.max(0, (nanoTime - startNanos) / bucketNanos);
    }

    /** An operation that failed UNAVAILABLE while the server was down or being replaced. */
    synchronized void expected(Kind k) {
        counts.get(k)[1]++;
    }

    /** An operation that failed otherwise, or a check that found the server wrong: an error. */
    synchronized void error(Kind k, String what) {
        counts.get(k)[2]++;
        errors++;
        if (problems.size() < KEPT_PROBLEMS) {
            problems.add(
                    new Problem(k, what.length() > 300 ? what.substring(0, 300) + "..." : what));
        }
    }

    synchronized long errors() {
        return errors;
    }

    synchronized List<Problem> problems() {
        return List.copyOf(problems);
    }

    /** Acknowledged, expected UNAVAILABLE, errors. */
    synchronized long[] counts(Kind k) {
        return counts.get(k).clone();
    }

    /** The buckets any operation fell in, in order. */
    synchronized List<Integer> buckets() {
        TreeSet<Integer> all = new TreeSet<>();
        sizes.values().forEach(m -> all.addAll(m.keySet()));
        return List.copyOf(all);
    }

    /** p50 and p99 in milliseconds and the count of one kind in one bucket; null when none. */
    synchronized double[] percentiles(Kind k, int bucket) {
        Integer n = sizes.get(k).get(bucket);
        if (n == null || n == 0) {
            return null;
        }
        long[] lat = Arrays.copyOf(latencies.get(k).get(bucket), n);
        Arrays.sort(lat);
        return new double[] {
            lat[(int) (n * 0.50)] / 1e6, lat[Math.min(n - 1, (int) (n * 0.99))] / 1e6, n
        };
    }

    /** p50 and p99 over the whole run, and the count; null when none. */
    synchronized double[] percentiles(Kind k) {
        int n = sizes.get(k).values().stream().mapToInt(Integer::intValue).sum();
        if (n == 0) {
            return null;
        }
        long[] all = new long[n];
        int at = 0;
        for (Map.Entry<Integer, Integer> e : sizes.get(k).entrySet()) {
            System.arraycopy(latencies.get(k).get(e.getKey()), 0, all, at, e.getValue());
            at += e.getValue();
        }
        Arrays.sort(all);
        return new double[] {
            all[(int) (n * 0.50)] / 1e6, all[Math.min(n - 1, (int) (n * 0.99))] / 1e6, n
        };
    }
}
